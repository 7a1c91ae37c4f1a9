// The local redirect benchmark, for machines without k6 (wrk from Debian instead), all on loopback:
// Postgres + Redis (scripts/services.sh), ClickHouse as chDB behind test/support/chdb-http.ts, the API
// and the redirector as their own processes. It seeds links, warms the cache, then measures in one run
// a bare Bun.serve 302 (bench/baseline.ts) and the redirector, alternately, and reports requests/s,
// p50/p99, their ratio, a paced run at half the redirector's rate, and clicks recorded vs served.
//
//   bun run bench [--duration 10s] [--connections 64] [--threads 1] [--links 1000] [--rounds 2]
//                 [--timeout 300s] [--pin]
// --pin puts the server under test (baseline, redirector) on CPU 1 and everything else (wrk, the
// ClickHouse shim, the API) on CPU 0, so the two servers get one core each on a two-core machine.
// Targets (measured, not asserted): redirector ≥ 75% of the baseline's requests/s; p99 < 5 ms at half
// the redirector's rate; clicks in ClickHouse equal redirects served within 2 s after the load stops.
// Writes bench/results/redirect-latest.json. Everything it starts, it stops (also on error and SIGINT).
import { createClient } from '@clickhouse/client'
import { Redis } from 'ioredis'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { linkCacheKey } from '../src/core/link-cache'
import { openDatabase } from '../src/db/client'
import { spawnChdbHttp } from '../test/support/chdb-http-process'
import { benchRun, freePorts, log, median, optionReader, sh, startApiAndRedirector, startChild, startServices, waitFor, withCpu } from './procs'
import { deleteSeededLinks, seedLinks, warmCache } from './seed'
import { durationMs, killRunningWrk, runWrk, writeWrkScript, type WrkResult } from './wrk'

const RESULTS = join(import.meta.dir, 'results')

type Run = WrkResult & { cores: Record<string, number> }

interface Options { duration: string; connections: number; threads: number; links: number; rounds: number; timeoutMs: number; pin: boolean }

function parseOptions(args: string[]): Options {
  const { value, int } = optionReader(args)
  const duration = value('--duration', '10s')
  const rounds = int('--rounds', 2)
  // Setup (services, engines, seeding) plus every wrk run plus the click check, with room to spare.
  const needed = 120_000 + (2 * rounds + 1) * durationMs(duration) + 60_000
  const timeoutMs = args.includes('--timeout') ? durationMs(value('--timeout', '300s')) : Math.max(300_000, needed)
  // -t1 -c64 by default: the machine has two cores, one for wrk and one for the server under test.
  return { duration, connections: int('--connections', 64), threads: int('--threads', 1), links: int('--links', 1000), rounds, timeoutMs, pin: args.includes('--pin') }
}

const options = parseOptions(process.argv.slice(2))
const bench = benchRun('linkservice-bench-', options.timeoutMs)
const { workDir, cleanup } = bench

/** With --pin: moves every thread of pid onto one CPU (threads it starts later inherit it). */
async function pin(pid: number, cpu: number): Promise<void> {
  if (!options.pin) return
  const result = await sh(['taskset', '-a', '-pc', String(cpu), String(pid)], 10_000)
  if (result.code !== 0) throw new Error(`taskset could not pin ${pid} to CPU ${cpu}`)
}

async function main() {
  log(`work dir ${workDir}; wrk -t${options.threads} -c${options.connections} -d${options.duration}, ${options.links} links, ${options.rounds} rounds`)
  const { databaseUrl, redisUrl } = await startServices(cleanup)

  const chdb = await spawnChdbHttp({ path: join(workDir, 'clickhouse') })
  cleanup.push('chdb-http', () => chdb.stop())
  await pin(chdb.pid, 0)
  log(`ClickHouse (chDB shim) at ${chdb.url}`)

  const [apiPort, redirectPort, baselinePort] = freePorts(3) as [number, number, number]
  // The API shares CPU 0 with the rest; the redirector is a server under test (CPU 1).
  const { api, redirector, env, shortDomain, redirectUrl } = await startApiAndRedirector({
    cleanup, workDir, databaseUrl, redisUrl, clickhouseUrl: chdb.url, apiPort, redirectPort,
    started: (child) => pin(child.proc.pid, child.name === 'api' ? 0 : 1),
  })
  log(`api on :${apiPort}, redirector on :${redirectPort} (SHORT_DOMAIN ${shortDomain})`)

  const database = await openDatabase({ databaseUrl, dataDir: workDir })
  cleanup.push('postgres client', () => database.close())
  const seeded = await seedLinks(database.db, { count: options.links, domain: shortDomain })
  cleanup.push('seeded links and their cache entries', async () => {
    await deleteSeededLinks(database.db, seeded.ids)
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 })
    await redis.connect()
    for (let i = 0; i < seeded.aliases.length; i += 500) {
      await redis.del(...seeded.aliases.slice(i, i + 500).map((a) => linkCacheKey(seeded.domain, a)))
    }
    redis.disconnect()
  })
  const warm = await warmCache(redirectUrl, seeded.aliases)
  if (warm.redirects !== seeded.aliases.length) {
    throw new Error(`warm-up: ${warm.redirects} of ${seeded.aliases.length} aliases redirected; others by status ${JSON.stringify(warm.failures)}`)
  }
  // HEAD redirects but is never a click: the final count would exceed what was served if it were.
  const heads = await warmCache(redirectUrl, seeded.aliases, 'HEAD')
  if (heads.redirects !== seeded.aliases.length) throw new Error(`HEAD: ${heads.redirects} of ${seeded.aliases.length} redirected; others ${JSON.stringify(heads.failures)}`)
  log(`seeded ${seeded.ids.length} links (${seeded.idPrefix}*), warm-up: ${warm.redirects} GET redirects (clicks) + ${heads.redirects} HEAD (not clicks)`)

  const baseline = startChild('baseline', [process.execPath, join(import.meta.dir, 'baseline.ts'), '--port', String(baselinePort)], { env, logFile: join(workDir, 'baseline.log') })
  cleanup.push('baseline', () => baseline.stop())
  await pin(baseline.proc.pid, 1)
  const baselineUrl = `http://127.0.0.1:${baselinePort}`
  await waitFor(baseline, `${baselineUrl}/x`, 20_000, 302)

  cleanup.push('wrk', async () => killRunningWrk())
  const script = writeWrkScript(join(workDir, 'redirect.lua'), { aliases: seeded.aliases })
  const wrkLog = join(workDir, 'wrk.log')
  // Cores each process kept busy during a run: on two cores, what the shim and wrk take is what the
  // server under test could not have.
  const pids = { redirect: redirector.proc.pid, chdb: chdb.pid, api: api.proc.pid, baseline: baseline.proc.pid }
  const wrk = async (url: string, label: string, scriptPath = script, duration = options.duration): Promise<Run> => {
    const { result, cores } = await withCpu(pids, () =>
      runWrk({
        url, script: scriptPath, duration, label, logFile: wrkLog,
        connections: options.connections, threads: options.threads, prefix: options.pin ? ['taskset', '-c', '0'] : [],
      }),
    )
    return { ...result, cores: { ...cores, wrk: Math.round((result.cpuSeconds / (result.durationUs / 1e6)) * 100) / 100 } }
  }

  const baselineRuns: Run[] = []
  const redirectRuns: Run[] = []
  for (let round = 1; round <= options.rounds; round++) {
    baselineRuns.push(await wrk(baselineUrl, `baseline ${round}`))
    log(`baseline   #${round}: ${describe(baselineRuns.at(-1)!)}`)
    redirectRuns.push(await wrk(redirectUrl, `redirector ${round}`))
    log(`redirector #${round}: ${describe(redirectRuns.at(-1)!)}`)
  }

  // Paced at half the redirector's rate: each connection pauses between requests. A pause of
  // connections/rate alone undershoots (the response time and wrk's millisecond timers add to each
  // cycle), so a 2 s pilot measures that overhead and the real run subtracts it.
  const targetRate = median(redirectRuns.map((r) => r.rps)) / 2
  const cycleMs = (1000 * options.connections) / targetRate
  const pacedScript = (delayMs: number) =>
    writeWrkScript(join(workDir, 'redirect-paced.lua'), { aliases: seeded.aliases, delayMs, countStatuses: true /* affordable at half load, and exact */ })
  const pilot = await wrk(redirectUrl, 'redirector paced pilot', pacedScript(cycleMs), '2s')
  const overheadMs = Math.max(0, (1000 * options.connections) / pilot.rps - cycleMs)
  const paced = await wrk(redirectUrl, 'redirector paced', pacedScript(Math.max(0, cycleMs - overheadMs)))
  log(`paced @ ${Math.round(targetRate)}/s (pilot ${Math.round(pilot.rps)}/s, per-request overhead ${overheadMs.toFixed(2)} ms): ${describe(paced)}`)

  const { health, ...clicks } = await checkClicks(chdb.url, redirectUrl, seeded.idPrefix, warm.redirects, [...redirectRuns, pilot, paced])
  const summary = {
    at: new Date().toISOString(),
    machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version },
    wrk: { threads: options.threads, connections: options.connections, duration: options.duration, rounds: options.rounds, pinned: options.pin },
    links: options.links,
    baseline: aggregate(baselineRuns),
    redirector: aggregate(redirectRuns),
    ratio: median(redirectRuns.map((r) => r.rps)) / median(baselineRuns.map((r) => r.rps)),
    paced: { targetRps: targetRate, rps: paced.rps, p50Ms: paced.latency.p50 / 1000, p99Ms: paced.latency.p99 / 1000, non3xx: paced.non3xx, run: paced },
    clicks,
    redirectorHealth: health,
    targets: { ratio: 0.75, pacedP99Ms: 5, clicksWithinMs: 2000 },
  }
  printSummary(summary)
  mkdirSync(RESULTS, { recursive: true })
  writeFileSync(join(RESULTS, 'redirect-latest.json'), `${JSON.stringify(summary, null, 2)}\n`)
  log(`wrote bench/results/redirect-latest.json; wrk output in ${wrkLog}`)
}

function describe(r: Run): string {
  const errors = Object.entries(r.errors).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(', ')
  const cores = Object.entries(r.cores).filter(([, c]) => c >= 0.01).map(([k, c]) => `${k} ${c.toFixed(2)}`).join(' ')
  return `${Math.round(r.rps)} req/s, p50 ${(r.latency.p50 / 1000).toFixed(2)} ms, p99 ${(r.latency.p99 / 1000).toFixed(2)} ms, ${r.requests} responses, non-3xx ${r.non3xx}${errors ? `, errors: ${errors}` : ''}; cores: ${cores}`
}

function aggregate(runs: Run[]) {
  return {
    rps: median(runs.map((r) => r.rps)),
    p50Ms: median(runs.map((r) => r.latency.p50)) / 1000,
    p99Ms: median(runs.map((r) => r.latency.p99)) / 1000,
    cores: Object.fromEntries(Object.keys(runs[0]!.cores).map((k) => [k, median(runs.map((r) => r.cores[k]!))])),
    runs: runs.map((r) => ({ rps: r.rps, p50Ms: r.latency.p50 / 1000, p99Ms: r.latency.p99 / 1000, requests: r.requests, non3xx: r.non3xx, errors: r.errors, cores: r.cores })),
  }
}

/**
 * After the load stops: polls ClickHouse every 100 ms (up to 5 s) for the clicks of the seeded links and
 * the redirector's own count of redirects served (GET; HEAD is never counted). wrk stops reading with
 * up to one request per connection in flight; the redirector may still have answered those, so the
 * clients' count is a lower bound and clients' count + in flight an upper bound on what it served.
 */
async function checkClicks(chdbUrl: string, redirectUrl: string, idPrefix: string, warmUp: number, runs: WrkResult[]) {
  const stoppedAt = performance.now()
  const seenByClients = warmUp + runs.reduce((n, r) => n + r.redirects, 0)
  const inFlightAtStop = runs.reduce((n, r) => n + Math.max(0, r.sent - r.requests), 0)
  const client = createClient({ url: chdbUrl, request_timeout: 5_000 })
  let recorded = 0
  let served = -1
  let health: unknown = null
  let equalAfterMs: number | null = null
  try {
    while (performance.now() - stoppedAt < 5_000) {
      const result = await client.query({
        query: 'SELECT count() AS n FROM clicks_v1 WHERE startsWith(link_id, {prefix:String})',
        query_params: { prefix: idPrefix },
        format: 'JSONEachRow',
      })
      recorded = Number((await result.json<{ n: string }>())[0]?.n ?? 0)
      health = await (await fetch(`${redirectUrl}/health`)).json()
      served = (health as { clicks?: { pushed?: number } }).clicks?.pushed ?? -1
      if (recorded === served && recorded >= seenByClients) {
        equalAfterMs = Math.round(performance.now() - stoppedAt)
        break
      }
      await Bun.sleep(100)
    }
  } finally {
    await client.close()
  }
  // What the redirector says it served must lie between what the clients saw and that plus in flight.
  const servedConsistent = served >= seenByClients && served <= seenByClients + inFlightAtStop
  return { recorded, servedByRedirector: served, seenByClients, warmUp, inFlightAtStop, servedConsistent, equalAfterMs, health }
}

function printSummary(s: {
  wrk: { threads: number; connections: number; duration: string; rounds: number; pinned: boolean }
  links: number
  baseline: ReturnType<typeof aggregate>
  redirector: ReturnType<typeof aggregate>
  ratio: number
  paced: { targetRps: number; rps: number; p50Ms: number; p99Ms: number; non3xx: number; run: Run }
  clicks: Omit<Awaited<ReturnType<typeof checkClicks>>, 'health'>
}) {
  const n = (x: number) => Math.round(x).toLocaleString('en-US')
  const ms = (x: number) => x.toFixed(2).padStart(8)
  const row = (name: string, rps: number, p50: number, p99: number, note = '') =>
    `${name.padEnd(30)}${n(rps).padStart(10)}${ms(p50)}${ms(p99)}  ${note}`
  const c = s.clicks
  const cores = (m: Record<string, number>) => Object.entries(m).filter(([, v]) => v >= 0.01).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')
  const lines = [
    '',
    `redirect benchmark: wrk -t${s.wrk.threads} -c${s.wrk.connections} -d${s.wrk.duration}, ${s.links} links, median of ${s.wrk.rounds} alternating rounds${s.wrk.pinned ? ', servers pinned to CPU 1, the rest to CPU 0' : ''}`,
    `${''.padEnd(30)}${'req/s'.padStart(10)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}`,
    row('baseline (bare Bun 302)', s.baseline.rps, s.baseline.p50Ms, s.baseline.p99Ms),
    row('redirector (warm cache)', s.redirector.rps, s.redirector.p50Ms, s.redirector.p99Ms),
    `${'ratio redirector / baseline'.padEnd(30)}${s.ratio.toFixed(2).padStart(10)}  (target >= 0.75)`,
    row(`paced, target ${n(s.paced.targetRps)}/s`, s.paced.rps, s.paced.p50Ms, s.paced.p99Ms, `(target p99 < 5 ms; non-3xx ${s.paced.non3xx})`),
    `cores busy (median) during baseline runs: ${cores(s.baseline.cores)}`,
    `                  during redirector runs: ${cores(s.redirector.cores)}`,
    `                  during the paced run:   ${cores(s.paced.run.cores)}`,
    `clicks recorded ${n(c.recorded)} of ${n(c.servedByRedirector)} redirects served` +
      (c.equalAfterMs === null ? ' (NOT equal within 5 s)' : ` (equal after ${n(c.equalAfterMs)} ms; target 2,000 ms)`),
    `  clients saw ${n(c.seenByClients)} redirects (${n(c.warmUp)} warm-up + wrk 3xx); wrk had ${n(c.inFlightAtStop)} requests in flight when it stopped reading` +
      (c.servedConsistent ? '' : ' - INCONSISTENT: served is outside [seen, seen + in flight]'),
    '',
  ]
  console.log(lines.join('\n'))
}

await bench.run(main)
