// The redirector's Redis source against a Redis server of the test's own, which it stops and restarts.
// Needs the redis-server binary (.ci/run installs it before both passes, and fails a pass that skips this).
import { afterAll, describe, expect, test } from 'bun:test'
import { Redis } from 'ioredis'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../test/support/processes'
import { canStartTopologies, startRedisCluster, startRedisSentinel } from '../test/support/redis-topologies'
import { until, within } from '../test/support/wait'
import { RedisKv } from '../src/adapters/redis-kv'
import { redisLinkSource } from './source'

const binary = Bun.which('redis-server')

async function startRedis(port: number, dir: string) {
  const proc = Bun.spawn([binary!, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir], { stdout: 'ignore', stderr: 'ignore' })
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  probe.on('error', () => {})
  for (let i = 0; i < 100; i++) {
    try {
      await probe.connect()
      break
    } catch {
      await Bun.sleep(50)
    }
  }
  probe.disconnect()
  return proc
}

describe.skipIf(!binary)('redis link source', () => {
  const dir = mkdtempSync(join(tmpdir(), 'redis-source-'))
  const cleanup: (() => void)[] = []
  afterAll(() => {
    for (const f of cleanup) f()
  })

  test('gets fail fast while Redis is down; a drop and a return each reset once; delivery resumes', async () => {
    const port = await freePort()
    let server = await startRedis(port, dir)
    cleanup.push(() => server.kill('SIGKILL'))
    const source = redisLinkSource(`redis://127.0.0.1:${port}`, 50)
    cleanup.push(() => void source.close?.())
    const messages: string[] = []
    let resets = 0
    await source.subscribe(
      'chan',
      (m) => messages.push(m),
      () => resets++,
    )
    const publisher = new Redis(port, '127.0.0.1')
    publisher.on('error', () => {})
    cleanup.push(() => publisher.disconnect())
    await publisher.publish('chan', 'one')
    await until(
      () => messages.length > 0,
      () => 'the first message delivered',
    )
    expect(messages).toEqual(['one'])

    server.kill('SIGKILL')
    await server.exited
    // A stand-in on the dead server's port takes each connection and closes it at once, so the source's
    // reconnect attempts can be counted (a refused connection leaves no trace): several of them, and
    // still the one reset of the drop.
    let attempts = 0
    const standIn = Bun.listen({ hostname: '127.0.0.1', port, socket: { open: (socket) => void (attempts++, socket.end()), data: () => {} } })
    try {
      await until(
        () => attempts >= 6,
        () => `reconnect attempts: ${attempts}`,
      )
    } finally {
      standIn.stop(true)
    }
    expect(resets).toBe(1)
    // Redis stays down until the restart below: a get that waited for a reconnect would miss the deadline.
    const outcome = await within(
      source.get('link:x:y').then(
        () => 'answered',
        () => 'failed',
      ),
      'a get while Redis is down',
    )
    expect(outcome).toBe('failed')

    server = await startRedis(port, dir)
    const deadline = Date.now() + 5000
    while (resets < 2 && Date.now() < deadline) await Bun.sleep(20)
    expect(resets).toBe(2)
    while (Date.now() < deadline) {
      await publisher.publish('chan', 'two')
      await Bun.sleep(50)
      if (messages.includes('two')) break
    }
    expect(messages).toContain('two')
    expect(await source.get('link:x:y')).toBeNull()
  }, 20_000)
})

// The same source on a Redis Cluster and behind Sentinel (REDIS_URL's other forms, core/redis-url.ts),
// each started here; the API side writes through RedisKv, as in production.
describe.skipIf(!canStartTopologies)('redis link source past one server', () => {
  const stops: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const stop of stops) await stop()
  })

  /** Reads what the API wrote, hears what it published; a source whose cluster is gone fails fast. */
  async function readsAndHears(url: string) {
    const source = redisLinkSource(url, 200)
    const api = new RedisKv(url)
    stops.push(async () => {
      await source.close?.()
      await api.close()
    })
    const messages: string[] = []
    await source.subscribe('chan', (m) => messages.push(m))
    const keys = Array.from({ length: 20 }, (_, i) => `link:example:${crypto.randomUUID()}:${i}`)
    for (const key of keys) await api.set(key, key, 60)
    // The source may still be learning the cluster's slots: the first reads may fail, and then answer.
    await until(async () => (await source.get(keys[0]!).catch(() => null)) === keys[0], 'the first read through the source')
    for (const key of keys) expect(await source.get(key)).toBe(key)
    await api.publish('chan', 'invalidate:1')
    await api.publish('chan', 'invalidate:2')
    await until(
      () => messages.length === 2,
      () => `two messages, got ${JSON.stringify(messages)}`,
    )
    expect(messages).toEqual(['invalidate:1', 'invalidate:2'])
    return source
  }

  test('on a three-node Redis Cluster: every key found whatever node holds it, invalidations heard, and no hang once it is gone', async () => {
    const cluster = await startRedisCluster(mkdtempSync(join(tmpdir(), 'source-cluster-')))
    stops.push(() => cluster.stop())
    const source = await readsAndHears(cluster.url)
    await cluster.stop()
    const outcome = await within(
      source.get('link:x:y').then(
        () => 'answered',
        () => 'failed',
      ),
      'a get with every node down',
    )
    expect(outcome).toBe('failed')
  }, 60_000)

  test('behind Sentinel: reads and invalidations, then the promoted replica after the primary dies', async () => {
    const sentinel = await startRedisSentinel(mkdtempSync(join(tmpdir(), 'source-sentinel-')))
    stops.push(() => sentinel.stop())
    const source = await readsAndHears(sentinel.url)
    const api = new RedisKv(sentinel.url)
    stops.push(() => api.close())
    await sentinel.kill(sentinel.primaryPort)
    await until(async () => (await sentinel.currentPrimary()) === sentinel.replicaPort, 'the sentinel to promote the replica', 20_000)
    const key = `link:example:${crypto.randomUUID()}`
    await until(
      async () =>
        await api.set(key, 'after', 60).then(
          () => true,
          () => false,
        ),
      'a write after the failover',
      20_000,
    )
    await until(async () => (await source.get(key).catch(() => null)) === 'after', 'the source reading the promoted primary', 20_000)
  }, 60_000)
})
