// Webhook delivery measured end to end on loopback: from the request that changes something (a link
// created) to the receiver, through the transactional outbox and the dispatcher (decision 0038). The
// receivers are a Bun.serve of this process that verifies every request with the npm package
// standardwebhooks and answers 204.
//
//   bun bench/webhooks.ts [--events 1000] [--rate 20] [--duration 120s] [--throughput-rate 170]
//                         [--accounts 20] [--bulk-size 10] [--only latency,throughput] [--no-fail]
//
// latency     The embedded default (one-process/main.ts: PGlite, chDB, one process) with one account and
//             one endpoint: --events POST /api/v1/shorten, open loop at --rate a second. Each event's
//             latency runs from its shorten's request to its arrival (the commit is in between; the
//             shorten's own time is printed beside). Targets: p50 < 1 s, p99 < 3 s.
// throughput  Two API processes (src/api.ts) on PostgreSQL (scripts/services.sh's, or DATABASE_URL and
//             REDIS_URL as bench/api.ts takes them) and the chDB stand-in: --accounts accounts with an
//             endpoint each create links through POST /api/v1/links/bulk (--bulk-size a request, spread
//             over both processes) at --throughput-rate links a second for --duration. Every 5 s the
//             outbox's pending deliveries are counted in Postgres. Target: 10,000 events a minute
//             sustained: that many delivered a minute over the load, and the backlog gone within 10 s of
//             its end.
//
// Prints each phase's figures and the targets met or MISSED; writes bench/results/webhooks-latest.json
// (git-ignored). Exits 1 when an event is lost, a request does not verify or a target is missed (0 with
// --no-fail for missed targets). Everything it starts, it stops; its accounts are deleted.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { and, count, eq, inArray } from 'drizzle-orm'
import { Webhook } from 'standardwebhooks'
import { openDatabase, type Db } from '../src/db/client'
import { accounts, webhookDeliveries } from '../src/db/schema'
import { createApiKey } from '../src/modules/keys/verdicts'
import { spawnChdbHttp } from '../test/support/chdb-http-process'
import { newAccount } from '../test/support/fixtures'
import { callOver, endpointOver } from '../test/support/webhooks'
import { benchRun, freePorts, log, optionReader, startChild, startServices, waitFor, type Cleanup } from './procs'
import { durationMs } from './wrk'

const ROOT = join(import.meta.dir, '..')
const TARGETS = { p50Ms: 1000, p99Ms: 3000, perMinute: 10_000, drainMs: 10_000 }
const DEPTH_EVERY_MS = 5000
/** An event not arrived this long after the last request is lost: the run fails. */
const ARRIVAL_DEADLINE_MS = 300_000
const LIFTED = String(1_000_000_000)

/** Nearest-rank percentile of sorted values (NaN for none). */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN
}

export interface Latencies {
  n: number
  p50: number
  p99: number
  max: number
}

export function summarize(values: number[]): Latencies {
  const sorted = [...values].sort((a, b) => a - b)
  return { n: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? Number.NaN }
}

/** Events a minute over the load window, and whether the backlog drained in time: the sustained target. */
export function sustained(deliveredInWindow: number, windowMs: number, drainMs: number): { perMinute: number; met: boolean } {
  const perMinute = Math.round((deliveredInWindow / windowMs) * 60_000)
  return { perMinute, met: perMinute >= TARGETS.perMinute && drainMs <= TARGETS.drainMs }
}

/** One request of the load: when it was sent and answered, and the aliases it created. */
interface Sent {
  sentAt: number
  answeredAt: number
  aliases: string[]
}

/** A loopback receiver for several endpoints (/hook/<n>): verifies each request, keeps each alias's first arrival. */
function receiver() {
  const verifiers = new Map<string, Webhook>()
  const arrivals = new Map<string, number>()
  const stats = { requests: 0, invalid: 0, repeated: 0 }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const at = performance.now()
      const body = await request.text()
      stats.requests++
      try {
        const event = verifiers.get(new URL(request.url).pathname)!.verify(body, Object.fromEntries(request.headers)) as { data: { alias: string } }
        if (arrivals.has(event.data.alias)) stats.repeated++
        else arrivals.set(event.data.alias, at)
      } catch {
        stats.invalid++
        return new Response('invalid', { status: 400 })
      }
      return new Response(null, { status: 204 })
    },
  })
  return {
    arrivals,
    stats,
    url: (path: string, secret?: string) => {
      if (secret) verifiers.set(path, new Webhook(secret))
      return `http://127.0.0.1:${server.port}${path}`
    },
    stop: () => server.stop(true),
  }
}

/** Runs `send(i)` at `rate` a second, open loop (each at its time, whatever the answers), `total` times. */
async function openLoop(total: number, rate: number, send: (i: number) => Promise<Sent>): Promise<Sent[]> {
  const started = performance.now()
  const inFlight: Promise<Sent>[] = []
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate
    if (due > performance.now()) await Bun.sleep(due - performance.now())
    inFlight.push(send(i))
  }
  return Promise.all(inFlight)
}

async function post(url: string, key: string, path: string, body: unknown): Promise<{ sentAt: number; answeredAt: number; body: any }> {
  const sentAt = performance.now()
  const res = await callOver(url, key, 'POST', path, body)
  if (res.status !== 200) throw new Error(res.text)
  return { sentAt, answeredAt: performance.now(), body: res.body }
}

async function untilArrived(arrivals: Map<string, number>, sent: Sent[], what: string): Promise<number> {
  const aliases = sent.flatMap((s) => s.aliases)
  const deadline = performance.now() + ARRIVAL_DEADLINE_MS
  while (aliases.some((a) => !arrivals.has(a))) {
    if (performance.now() > deadline) throw new Error(`${what}: ${aliases.filter((a) => !arrivals.has(a)).length} of ${aliases.length} events never arrived`)
    await Bun.sleep(50)
  }
  return Math.max(...aliases.map((a) => arrivals.get(a)!))
}

function latencies(sent: Sent[], arrivals: Map<string, number>) {
  const fromRequest = sent.flatMap((s) => s.aliases.map((a) => arrivals.get(a)! - s.sentAt))
  const fromAnswer = sent.flatMap((s) => s.aliases.map((a) => arrivals.get(a)! - s.answeredAt))
  return { fromRequest: summarize(fromRequest), fromAnswer: summarize(fromAnswer), request: summarize(sent.map((s) => s.answeredAt - s.sentAt)) }
}

async function latencyPhase(options: Options, workDir: string, cleanup: Cleanup) {
  const [port] = freePorts(1) as [number]
  const dataDir = join(workDir, 'embedded')
  // PGlite belongs to one process at a time: the account is written before the product starts.
  const database = await openDatabase({ databaseUrl: undefined, dataDir })
  await database.migrate()
  const account = await newAccount(database.db, 'pro')
  await database.close()
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    DATA_DIR: dataDir,
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
    PLAN_PRO_REQUESTS_PER_MINUTE: LIFTED,
    PLAN_PRO_LINKS_PER_MONTH: LIFTED,
  }
  const child = startChild('embedded', [process.execPath, '--max-http-header-size=65536', join(ROOT, 'one-process/main.ts')], { env, logFile: join(workDir, 'embedded.log'), cwd: ROOT })
  cleanup.push('embedded default', () => child.stop())
  const url = `http://127.0.0.1:${port}`
  await waitFor(child, `${url}/health`, 120_000)
  const receiving = receiver()
  cleanup.push('receiver', async () => receiving.stop())
  const { secret } = await endpointOver(url, account.key, receiving.url('/hook/0'))
  receiving.url('/hook/0', secret)
  log(`latency: the embedded default on :${port}, ${options.events} shortens at ${options.rate}/s`)
  const sent = await openLoop(options.events, options.rate, async (i) => {
    const res = await post(url, account.key, '/api/v1/shorten', { url: `https://example.com/latency/${i}` })
    return { sentAt: res.sentAt, answeredAt: res.answeredAt, aliases: [res.body.data.alias] }
  })
  await untilArrived(receiving.arrivals, sent, 'latency')
  const figures = latencies(sent, receiving.arrivals)
  await child.stop()
  receiving.stop()
  const met = { p50: figures.fromRequest.p50 < TARGETS.p50Ms, p99: figures.fromRequest.p99 < TARGETS.p99Ms }
  return { events: options.events, rate: options.rate, ...figures, receiver: receiving.stats, met }
}

async function throughputPhase(options: Options, workDir: string, cleanup: Cleanup) {
  const { databaseUrl, redisUrl } = await startServices(cleanup)
  const chdb = await spawnChdbHttp({ path: join(workDir, 'clickhouse') })
  cleanup.push('chdb-http', () => chdb.stop())
  const database = await openDatabase({ databaseUrl, dataDir: workDir })
  cleanup.push('postgres client', () => database.close())
  // Accounts of this run only (their endpoints, events and links go with them).
  const owned: Array<{ id: string; key: string }> = []
  cleanup.push('bench accounts', () =>
    owned.length
      ? database.db.delete(accounts).where(
          inArray(
            accounts.id,
            owned.map((a) => a.id),
          ),
        )
      : Promise.resolve(),
  )
  for (let i = 0; i < options.accounts; i++) owned.push(await benchAccount(database.db))

  const secret = `bench-internal-${crypto.randomUUID()}`
  const ports = freePorts(2)
  const apis = ports.map((port, i) => {
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      CLICKHOUSE_URL: chdb.url,
      INTERNAL_SECRET: secret,
      IP_HASH_SECRET: `bench-iphash-${secret}`,
      PORT: String(port),
      DATA_DIR: join(workDir, `data-${i}`),
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      PLAN_PRO_REQUESTS_PER_MINUTE: LIFTED,
      PLAN_PRO_LINKS_PER_MONTH: LIFTED,
    }
    const child = startChild(`api-${i}`, [process.execPath, join(ROOT, 'src/api.ts')], { env, logFile: join(workDir, `api-${i}.log`), cwd: ROOT })
    cleanup.push(`api-${i}`, () => child.stop())
    return { child, url: `http://127.0.0.1:${port}` }
  })
  for (const api of apis) await waitFor(api.child, `${api.url}/health`, 120_000)
  const receiving = receiver()
  cleanup.push('receiver', async () => receiving.stop())
  const endpointIds: string[] = []
  for (const [i, account] of owned.entries()) {
    const endpoint = await endpointOver(apis[i % 2]!.url, account.key, receiving.url(`/hook/${i}`))
    receiving.url(`/hook/${i}`, endpoint.secret)
    endpointIds.push(endpoint.id)
  }
  const requests = Math.round((options.throughputRate / options.bulkSize) * (durationMs(options.duration) / 1000))
  log(`throughput: two API processes, ${options.accounts} endpoints, ${options.throughputRate} links/s in bulks of ${options.bulkSize} for ${options.duration}`)

  const depth: Array<{ s: number; created: number; arrived: number; pending: number }> = []
  const started = performance.now()
  let created = 0
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      const [row] = await database.db
        .select({ n: count() })
        .from(webhookDeliveries)
        .where(and(inArray(webhookDeliveries.webhookId, endpointIds), eq(webhookDeliveries.status, 'pending')))
      depth.push({ s: Math.round((performance.now() - started) / 1000), created, arrived: receiving.arrivals.size, pending: row?.n ?? 0 })
      await Bun.sleep(DEPTH_EVERY_MS)
    }
  })()
  const sent = await openLoop(requests, options.throughputRate / options.bulkSize, async (i) => {
    const account = owned[i % owned.length]!
    const links = Array.from({ length: options.bulkSize }, (_, j) => ({ url: `https://example.com/throughput/${i}/${j}` }))
    const res = await post(apis[i % 2]!.url, account.key, '/api/v1/links/bulk', { links })
    created += options.bulkSize
    return { sentAt: res.sentAt, answeredAt: res.answeredAt, aliases: res.body.data.results.map((r: { data: { alias: string } }) => r.data.alias) }
  })
  const loadEnd = performance.now()
  const arrivedInWindow = [...receiving.arrivals.values()].filter((at) => at <= loadEnd).length
  const lastArrival = await untilArrived(receiving.arrivals, sent, 'throughput')
  sampling = false
  await sampler
  const drainMs = Math.max(0, lastArrival - loadEnd)
  const verdict = sustained(arrivedInWindow, loadEnd - started, drainMs)
  return {
    accounts: options.accounts,
    rate: options.throughputRate,
    bulkSize: options.bulkSize,
    duration: options.duration,
    created: sent.length * options.bulkSize,
    arrivedInWindow,
    windowS: (loadEnd - started) / 1000,
    drainMs: Math.round(drainMs),
    ...verdict,
    ...latencies(sent, receiving.arrivals),
    receiver: receiving.stats,
    depth,
  }
}

async function benchAccount(db: Db): Promise<{ id: string; key: string }> {
  const id = `account_whbench_${crypto.randomUUID().replaceAll('-', '')}`
  await db.insert(accounts).values({ id, email: `${id}@bench.example`, plan: 'pro' })
  return { id, key: await createApiKey(db, id, new Date()) }
}

type Options = ReturnType<typeof parseOptions>

function parseOptions(args: string[]) {
  const { value, int } = optionReader(args)
  const only = value('--only', 'latency,throughput').split(',')
  for (const name of only) if (!['latency', 'throughput'].includes(name)) throw new Error(`--only: unknown phase "${name}" (latency, throughput)`)
  return {
    events: int('--events', 1000),
    rate: int('--rate', 20),
    duration: value('--duration', '120s'),
    throughputRate: int('--throughput-rate', 170),
    accounts: int('--accounts', 20),
    bulkSize: int('--bulk-size', 10),
    only,
    noFail: args.includes('--no-fail'),
  }
}

const ms = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${Math.round(n)} ms`)
const verdict = (met: boolean) => (met ? 'met' : 'MISSED')

async function main() {
  const options = parseOptions(process.argv.slice(2))
  const timeoutMs = 900_000 + durationMs(options.duration) + (options.events / options.rate) * 1000
  const bench = benchRun('linkservice-webhooks-bench-', timeoutMs)
  await bench.run(async () => {
    const latency = options.only.includes('latency') ? await latencyPhase(options, bench.workDir, bench.cleanup) : null
    const throughput = options.only.includes('throughput') ? await throughputPhase(options, bench.workDir, bench.cleanup) : null
    const lines = ['']
    if (latency) {
      lines.push(
        `latency (embedded default, ${latency.events} shortens at ${latency.rate}/s, one endpoint): from the request p50 ${ms(latency.fromRequest.p50)}, p99 ${ms(latency.fromRequest.p99)}, max ${ms(latency.fromRequest.max)}; ` +
          `from the answer p50 ${ms(latency.fromAnswer.p50)}, p99 ${ms(latency.fromAnswer.p99)}; the shorten itself p50 ${ms(latency.request.p50)}, p99 ${ms(latency.request.p99)}`,
        `  p50 < 1 s: ${verdict(latency.met.p50)}; p99 < 3 s: ${verdict(latency.met.p99)}`,
      )
    }
    if (throughput) {
      lines.push(
        `throughput (two API processes, PostgreSQL, ${throughput.accounts} endpoints): ${throughput.created} events offered at ${throughput.rate}/s over ${throughput.windowS.toFixed(0)} s; ` +
          `${throughput.arrivedInWindow} arrived during the load (${throughput.perMinute}/min), the rest within ${ms(throughput.drainMs)} after it; latency from the request p50 ${ms(throughput.fromRequest.p50)}, p99 ${ms(throughput.fromRequest.p99)}, max ${ms(throughput.fromRequest.max)}`,
        `  outbox pending every ${DEPTH_EVERY_MS / 1000} s: ${throughput.depth.map((d) => d.pending).join(' ')}`,
        `  10,000/min sustained (and drained within ${TARGETS.drainMs / 1000} s): ${verdict(throughput.met)}`,
      )
    }
    console.log(lines.join('\n'))
    const summary = {
      at: new Date().toISOString(),
      machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version, note: 'shared machine: figures are indicative' },
      targets: TARGETS,
      latency,
      throughput,
    }
    mkdirSync(join(import.meta.dir, 'results'), { recursive: true })
    writeFileSync(join(import.meta.dir, 'results', 'webhooks-latest.json'), `${JSON.stringify(summary, null, 2)}\n`)
    log('wrote bench/results/webhooks-latest.json')
    const checks = [latency?.receiver, throughput?.receiver].filter((r) => r && r.invalid > 0)
    if (checks.length > 0) throw new Error(`requests that did not verify: ${JSON.stringify(checks)}`)
    const missed = [latency && !(latency.met.p50 && latency.met.p99), throughput && !throughput.met].some(Boolean)
    if (missed && !options.noFail) bench.fail()
  })
}

if (import.meta.main) await main()
