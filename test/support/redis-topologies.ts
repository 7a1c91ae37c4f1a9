// Redis as people run it past one machine, from the Debian redis-server binary on loopback ports: a
// three-node Redis Cluster (made with `redis-cli --cluster create`, as its documentation does), and a
// primary with a replica watched by one sentinel (`redis-server --sentinel`). Each gives the REDIS_URL
// the service reads (core/redis.ts) and a stop() that leaves nothing running.
import { afterAll, beforeAll } from 'bun:test'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Cluster } from 'ioredis'
import type { RedisClient } from '../../core/redis'
import { freePort } from './processes'

export const redisCliBinary = Bun.which('redis-cli')
const redisServerBinary = Bun.which('redis-server')

/** Both binaries: `redis-server` and `redis-cli` come in the same Debian package (redis-tools is its dependency). */
export const canStartTopologies = Boolean(redisServerBinary && redisCliBinary)

interface Node {
  port: number
  proc: Bun.Subprocess
}

export interface RedisTopology {
  url: string
  ports: number[]
  /** Kills one node (SIGKILL), as a crash would. */
  kill(port: number): Promise<void>
  /** SHUTDOWN NOSAVE on every node, as an operator stopping them would: each closes its connections. */
  shutdown(): Promise<void>
  stop(): Promise<void>
}

function startNode(dir: string, port: number, args: string[]): Node {
  const proc = Bun.spawn([redisServerBinary!, ...args, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdout: 'ignore',
    stderr: 'ignore',
  })
  return { port, proc }
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const proc = Bun.spawn([redisCliBinary!, '-p', String(port), ...args], { stdout: 'pipe', stderr: 'pipe' })
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  if ((await proc.exited) !== 0) throw new Error(`redis-cli -p ${port} ${args.join(' ')}: ${err || out}`)
  return out
}

/** Polls `probe` until it holds; throws with `what` after `timeoutMs`. */
async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await probe().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await Bun.sleep(50)
  }
}

const answers = (port: number) => waitFor(`redis-server on ${port}`, async () => (await cli(port, 'PING')).trim() === 'PONG')

function topology(url: string, nodes: Node[]): RedisTopology {
  const kill = async (node: Node) => {
    node.proc.kill('SIGKILL')
    await node.proc.exited
  }
  return {
    url,
    ports: nodes.map((n) => n.port),
    kill: async (port) => kill(nodes.find((n) => n.port === port)!),
    shutdown: async () => {
      await Promise.all(nodes.map((n) => cli(n.port, 'SHUTDOWN', 'NOSAVE').catch(() => '')))
      await Promise.all(nodes.map((n) => n.proc.exited))
    },
    stop: async () => {
      await Promise.all(nodes.map(kill))
    },
  }
}

/** Three primaries sharing the 16,384 slots, no replicas; ready when every node reports cluster_state:ok. */
export async function startRedisCluster(dir: string): Promise<RedisTopology> {
  const nodes: Node[] = []
  try {
    for (let i = 0; i < 3; i++) {
      const [port, busPort] = [await freePort(), await freePort()]
      const nodeDir = join(dir, `cluster-${port}`)
      mkdirSync(nodeDir, { recursive: true })
      // The bus port named, not left at port + 10000, which freePort never checked.
      const cluster = ['--cluster-enabled', 'yes', '--cluster-port', String(busPort), '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000']
      nodes.push(startNode(nodeDir, port, cluster))
    }
    await Promise.all(nodes.map((n) => answers(n.port)))
    await cli(nodes[0]!.port, '--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes')
    for (const node of nodes) await waitFor(`cluster_state:ok on ${node.port}`, async () => (await cli(node.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'))
    // Seeds: two of the three, so the client must learn the third from the cluster itself.
    return topology(`redis+cluster://127.0.0.1:${nodes[0]!.port},127.0.0.1:${nodes[1]!.port}`, nodes)
  } catch (error) {
    await topology('', nodes).stop()
    throw error
  }
}

export interface SentinelTopology extends RedisTopology {
  primaryPort: number
  replicaPort: number
  sentinelPort: number
  /** The port of the server the sentinel names as the primary now. */
  currentPrimary(): Promise<number>
}

/**
 * A primary, its replica, and one sentinel (quorum 1) that fails over after 1 s without an answer;
 * the URL names the sentinel and the primary's name, "linkservice", never the primary itself.
 */
export async function startRedisSentinel(dir: string): Promise<SentinelTopology> {
  const nodes: Node[] = []
  try {
    const [primaryPort, replicaPort, sentinelPort] = [await freePort(), await freePort(), await freePort()]
    mkdirSync(dir, { recursive: true })
    nodes.push(startNode(dir, primaryPort, []))
    nodes.push(startNode(dir, replicaPort, ['--replicaof', '127.0.0.1', String(primaryPort)]))
    await Promise.all(nodes.map((n) => answers(n.port)))
    await waitFor('the replica in sync', async () => (await cli(replicaPort, 'INFO', 'replication')).includes('master_link_status:up'))
    // A sentinel rewrites its configuration file, so it gets one of its own.
    const config = join(dir, 'sentinel.conf')
    writeFileSync(
      config,
      [
        `sentinel monitor linkservice 127.0.0.1 ${primaryPort} 1`,
        'sentinel down-after-milliseconds linkservice 1000',
        'sentinel failover-timeout linkservice 5000',
        'sentinel parallel-syncs linkservice 1',
        '',
      ].join('\n'),
    )
    nodes.push({
      port: sentinelPort,
      proc: Bun.spawn([redisServerBinary!, config, '--sentinel', '--port', String(sentinelPort), '--bind', '127.0.0.1', '--dir', dir], { stdout: 'ignore', stderr: 'ignore' }),
    })
    const currentPrimary = async () => Number((await cli(sentinelPort, 'SENTINEL', 'get-master-addr-by-name', 'linkservice')).trim().split('\n')[1])
    await waitFor('the sentinel watching the primary', async () => (await currentPrimary()) === primaryPort)
    // Until the sentinel has found the replica it has nothing to promote.
    await waitFor('the sentinel knowing the replica', async () => (await cli(sentinelPort, 'SENTINEL', 'replicas', 'linkservice')).includes(String(replicaPort)))
    return { ...topology(`redis+sentinel://127.0.0.1:${sentinelPort}/linkservice`, nodes), primaryPort, replicaPort, sentinelPort, currentPrimary }
  } catch (error) {
    await topology('', nodes).stop()
    throw error
  }
}

/** KEYS on every primary (on a cluster client KEYS asks one node only), or on the one server. */
export async function keysOnEveryNode(client: RedisClient, pattern: string): Promise<string[]> {
  if (!(client instanceof Cluster)) return client.keys(pattern)
  const found = await Promise.all(client.nodes('master').map((node) => node.keys(pattern)))
  return found.flat()
}

/**
 * For a describe block: starts the topology before its tests (in a fresh temporary directory named after
 * `prefix`) and stops it after them; the returned getter is the running topology, for the tests to read.
 */
export function startedForBlock<T extends RedisTopology>(start: (dir: string) => Promise<T>, prefix: string): () => T {
  let running: T | undefined
  beforeAll(async () => {
    running = await start(mkdtempSync(join(tmpdir(), prefix)))
  }, 60_000)
  afterAll(async () => running?.stop())
  return () => {
    if (!running) throw new Error(`${prefix}: the topology did not start`)
    return running
  }
}
