// The local redirect benchmark, for machines without k6 (wrk from Debian instead), all on loopback:
// Postgres + Redis (scripts/services.sh), ClickHouse as chDB behind test/support/chdb-http.ts, the API
// and the redirector as their own processes. It seeds links, warms the cache, then measures in one run
// a bare Bun.serve 302 (bench/baseline.ts) and the redirector, alternately, and reports requests/s,
// p50/p99, their ratio, a paced run at half the redirector's rate, and clicks recorded vs served.
//
//   bun run bench [--duration 10s] [--connections 64] [--threads 1] [--links 1000] [--rounds 2]
//                 [--timeout 300s] [--pin] [--compare <git-rev>]
// --pin puts the server under test (baseline, redirector) on CPU 1 and everything else (wrk, the
// ClickHouse shim, the API) on CPU 0, so the two servers get one core each on a two-core machine.
// --compare <git-rev> also measures that revision's redirector in the same run: it is checked out into a
// temporary git worktree, started beside this tree's (same environment, its own port and DATA_DIR),
// warmed the same way, and each round runs baseline → redirector → reference. The summary adds, per
// version, the ratio to the baseline and the CPU per request, and this tree's difference to the reference.
// Targets (measured, not asserted): redirector ≥ 75% of the baseline's requests/s; p99 < 5 ms at half
// the redirector's rate; clicks in ClickHouse equal redirects served within 2 s after the load stops.
// Writes bench/results/redirect-latest.json. Everything it starts, it stops (also on error and SIGINT).
import { createClient } from '@clickhouse/client'
import { Redis } from 'ioredis'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { linkCacheKey } from '../src/core/link-cache'
import { openDatabase } from '../src/db/client'
import { spawnChdbHttp } from '../test/support/chdb-http-process'
import { benchRun, freePorts, log, median, optionReader, sh, startApiAndRedirector, startChild, startServices, waitFor, withCpu } from './procs'
import { deleteSeededLinks, seedLinks, warmCache } from './seed'
import { durationMs, killRunningWrk, runWrk, writeWrkScript, type WrkResult } from './wrk'

const RESULTS = join(import.meta.dir, 'results')
const ROOT = join(import.meta.dir, '..')

/** cpuUsed: CPU seconds each process used during the run (unrounded; cores is the same per wall second, rounded). */
type Run = WrkResult & { cores: Record<string, number>; cpuUsed: Record<string, number> }

interface Options { duration: string; connections: number; threads: number; links: number; rounds: number; timeoutMs: number; pin: boolean; compare: string | null }

/** In compare mode, the pause after each run, so one server's trailing work (the last click segment shipped
 *  to ClickHouse) does not fall into the next server's run. */
const SETTLE_MS = 2_000

function parseOptions(args: string[]): Options {
  const { value, int } = optionReader(args)
  const duration = value('--duration', '10s')
  const rounds = int('--rounds', 2)
  const compare = args.includes('--compare') ? value('--compare', '') : null
  if (compare === '' || compare?.startsWith('--')) throw new Error('--compare needs a git revision')
  // Setup (services, engines, seeding) plus every wrk run plus the click check, with room to spare; the
  // reference adds a worktree, a process, its warm-up, a run per round and the pauses between runs.
  const needed = compare === null
    ? 120_000 + (2 * rounds + 1) * durationMs(duration) + 60_000
    : 180_000 + (3 * rounds + 1) * durationMs(duration) + 3 * rounds * SETTLE_MS + 60_000
  const timeoutMs = args.includes('--timeout') ? durationMs(value('--timeout', '300s')) : Math.max(300_000, needed)
  // -t1 -c64 by default: the machine has two cores, one for wrk and one for the server under test.
  return { duration, connections: int('--connections', 64), threads: int('--threads', 1), links: int('--links', 1000), rounds, timeoutMs, pin: args.includes('--pin'), compare }
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

  const [apiPort, redirectPort, baselinePort, referencePort] = freePorts(4) as [number, number, number, number]
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

  const reference = options.compare === null ? null : await startReference(options.compare, env, referencePort, seeded.aliases)

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
  const pids: Record<string, number> = { redirect: redirector.proc.pid, chdb: chdb.pid, api: api.proc.pid, baseline: baseline.proc.pid }
  if (reference) pids.reference = reference.child.proc.pid
  const wrk = async (url: string, label: string, scriptPath = script, duration = options.duration, headers: string[] = []): Promise<Run> => {
    const { result, cores, cpuSeconds } = await withCpu(pids, () =>
      runWrk({
        url, script: scriptPath, duration, label, logFile: wrkLog, headers,
        connections: options.connections, threads: options.threads, prefix: options.pin ? ['taskset', '-c', '0'] : [],
      }),
    )
    return { ...result, cores: { ...cores, wrk: Math.round((result.cpuSeconds / (result.durationUs / 1e6)) * 100) / 100 }, cpuUsed: cpuSeconds }
  }

  const baselineRuns: Run[] = []
  const redirectRuns: Run[] = []
  const referenceRuns: Run[] = []
  const settle = () => (reference ? Bun.sleep(SETTLE_MS) : Promise.resolve())
  for (let round = 1; round <= options.rounds; round++) {
    baselineRuns.push(await wrk(baselineUrl, `baseline ${round}`))
    log(`baseline   #${round}: ${describe(baselineRuns.at(-1)!)}`)
    await settle()
    redirectRuns.push(await wrk(redirectUrl, `redirector ${round}`))
    log(`redirector #${round}: ${describe(redirectRuns.at(-1)!)}`)
    if (reference) {
      await settle()
      // The reference is asked under this tree's SHORT_DOMAIN (a Host header), so both redirectors take
      // the same default-domain path: by its own port it would be matched as an IP host, a little dearer.
      referenceRuns.push(await wrk(reference.url, `reference ${round}`, script, options.duration, [`Host: ${shortDomain}`]))
      log(`reference  #${round}: ${describe(referenceRuns.at(-1)!)}`)
      await settle()
    }
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

  const servers: ClickSource[] = [{ name: 'redirector', url: redirectUrl, warmUp: warm.redirects, runs: [...redirectRuns, pilot, paced] }]
  if (reference) servers.push({ name: 'reference', url: reference.url, warmUp: reference.warmUp, runs: referenceRuns })
  const { health, ...clicks } = await checkClicks(chdb.url, seeded.idPrefix, servers)
  const compare = reference ? comparison(reference.revision, baselineRuns, redirectRuns, referenceRuns) : undefined
  const { cpuUsed: _cpuUsed, ...pacedRun } = paced // the JSON as it always was; CPU per request is in compare
  const summary = {
    at: new Date().toISOString(),
    machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version },
    wrk: { threads: options.threads, connections: options.connections, duration: options.duration, rounds: options.rounds, pinned: options.pin },
    links: options.links,
    baseline: aggregate(baselineRuns),
    redirector: aggregate(redirectRuns),
    ratio: median(redirectRuns.map((r) => r.rps)) / median(baselineRuns.map((r) => r.rps)),
    paced: { targetRps: targetRate, rps: paced.rps, p50Ms: paced.latency.p50 / 1000, p99Ms: paced.latency.p99 / 1000, non3xx: paced.non3xx, run: pacedRun },
    clicks,
    redirectorHealth: health,
    targets: { ratio: 0.75, pacedP99Ms: 5, clicksWithinMs: 2000 },
    ...(compare ? { compare } : {}),
  }
  printSummary(summary)
  if (compare) printComparison(compare)
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

/** A redirector whose clicks are checked: what its clients saw (warm-up GETs and wrk runs). */
interface ClickSource { name: string; url: string; warmUp: number; runs: WrkResult[] }

/**
 * After the load stops: polls ClickHouse every 100 ms (up to 5 s) for the clicks of the seeded links and
 * the redirectors' own counts of redirects served (GET; HEAD is never counted). wrk stops reading with
 * up to one request per connection in flight; the redirector may still have answered those, so the
 * clients' count is a lower bound and clients' count + in flight an upper bound on what it served.
 * With --compare both redirectors write the same links to the same ClickHouse: their counts are summed
 * for the comparison with ClickHouse, and each must lie within its own clients' bounds.
 */
async function checkClicks(chdbUrl: string, idPrefix: string, servers: ClickSource[]) {
  const stoppedAt = performance.now()
  const bounds = servers.map((s) => {
    const seen = s.warmUp + s.runs.reduce((n, r) => n + r.redirects, 0)
    return { name: s.name, url: s.url, warmUp: s.warmUp, seenByClients: seen, inFlightAtStop: s.runs.reduce((n, r) => n + Math.max(0, r.sent - r.requests), 0) }
  })
  const seenByClients = bounds.reduce((n, b) => n + b.seenByClients, 0)
  const inFlightAtStop = bounds.reduce((n, b) => n + b.inFlightAtStop, 0)
  const warmUp = bounds.reduce((n, b) => n + b.warmUp, 0)
  const client = createClient({ url: chdbUrl, request_timeout: 5_000 })
  let recorded = 0
  let pushed = servers.map(() => -1)
  let healths: unknown[] = []
  let equalAfterMs: number | null = null
  try {
    while (performance.now() - stoppedAt < 5_000) {
      const result = await client.query({
        query: 'SELECT count() AS n FROM clicks_v1 WHERE startsWith(link_id, {prefix:String})',
        query_params: { prefix: idPrefix },
        format: 'JSONEachRow',
      })
      recorded = Number((await result.json<{ n: string }>())[0]?.n ?? 0)
      healths = await Promise.all(servers.map(async (s) => (await fetch(`${s.url}/health`)).json()))
      pushed = healths.map((h) => (h as { clicks?: { pushed?: number } }).clicks?.pushed ?? -1)
      const served = pushed.reduce((a, b) => a + b, 0)
      if (pushed.every((p) => p >= 0) && recorded === served && recorded >= seenByClients) {
        equalAfterMs = Math.round(performance.now() - stoppedAt)
        break
      }
      await Bun.sleep(100)
    }
  } finally {
    await client.close()
  }
  // What each redirector says it served must lie between what its clients saw and that plus in flight.
  const perServer = bounds.map((b, i) => ({
    ...b,
    served: pushed[i]!,
    consistent: pushed[i]! >= b.seenByClients && pushed[i]! <= b.seenByClients + b.inFlightAtStop,
    health: healths[i] ?? null,
  }))
  const served = pushed.some((p) => p < 0) ? -1 : pushed.reduce((a, b) => a + b, 0)
  const servedConsistent = perServer.every((p) => p.consistent)
  const health = healths[0] ?? null
  const common = { recorded, servedByRedirector: served, seenByClients, warmUp, inFlightAtStop, servedConsistent, equalAfterMs, health }
  // One redirector: the fields as they always were (undefined is left out of the JSON).
  return { ...common, perServer: servers.length === 1 ? undefined : perServer.map(({ url: _url, ...rest }) => rest) }
}

/**
 * --compare: the revision checked out into a temporary worktree (node_modules linked from this tree),
 * its redirect/main.ts started with this run's environment but its own port and DATA_DIR (its own click
 * spool), pinned like the redirector, and warmed like it (every alias once with GET, a click each, and
 * once with HEAD). The worktree and the process are removed on cleanup.
 */
async function startReference(revision: string, env: Record<string, string | undefined>, port: number, aliases: string[]) {
  const resolved = await sh(['git', '-C', ROOT, 'rev-parse', '--verify', `${revision}^{commit}`], 10_000)
  if (resolved.code !== 0) throw new Error(`--compare: ${revision} is not a commit of this repository`)
  const commit = resolved.stdout.trim()
  const dir = join(workDir, 'reference')
  const added = await sh(['git', '-C', ROOT, 'worktree', 'add', '--detach', dir, commit], 60_000)
  if (added.code !== 0) throw new Error(`git worktree add ${dir} ${commit} exited ${added.code}`)
  cleanup.push('reference worktree', async () => {
    await sh(['git', '-C', ROOT, 'worktree', 'remove', '--force', dir], 30_000)
    await sh(['git', '-C', ROOT, 'worktree', 'prune'], 30_000)
  })
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  const refEnv = { ...env, REDIRECT_PORT: String(port), DATA_DIR: join(workDir, 'data-reference') }
  const child = startChild('reference', [process.execPath, join(dir, 'redirect/main.ts')], { env: refEnv, logFile: join(workDir, 'reference.log'), cwd: dir })
  cleanup.push('reference redirector', () => child.stop())
  await pin(child.proc.pid, 1)
  const url = `http://127.0.0.1:${port}`
  await waitFor(child, `${url}/health`, 60_000)
  const warm = await warmCache(url, aliases)
  if (warm.redirects !== aliases.length) throw new Error(`reference warm-up: ${warm.redirects} of ${aliases.length} aliases redirected; others ${JSON.stringify(warm.failures)}`)
  const heads = await warmCache(url, aliases, 'HEAD')
  if (heads.redirects !== aliases.length) throw new Error(`reference HEAD: ${heads.redirects} of ${aliases.length} redirected; others ${JSON.stringify(heads.failures)}`)
  log(`reference ${revision} (${commit.slice(0, 12)}) on :${port} from ${dir}; warm-up: ${warm.redirects} GET (clicks) + ${heads.redirects} HEAD`)
  return { revision: `${revision} (${commit.slice(0, 12)})`, child, url, warmUp: warm.redirects }
}

/** CPU time of the server process per response wrk read, in µs (all its threads, e.g. the click worker). */
function cpuPerRequestUs(run: Run, server: string): number {
  return (run.cpuUsed[server]! / run.requests) * 1e6
}

/**
 * The two redirectors side by side. Per version: median requests/s, its ratio to the baseline's median,
 * and the median CPU per request. "This tree vs reference" is the relative difference of the ratios
 * (= of the medians of requests/s) and of CPU per request (positive: this tree costs more), plus the
 * median of the per-round differences (each round's runs are minutes apart at most, so some of the
 * machine's drift cancels).
 */
function comparison(revision: string, baselineRuns: Run[], redirectRuns: Run[], referenceRuns: Run[]) {
  const baselineRps = median(baselineRuns.map((r) => r.rps))
  const version = (runs: Run[], server: string) => {
    const cpu = runs.map((r) => cpuPerRequestUs(r, server))
    return {
      rps: median(runs.map((r) => r.rps)),
      p99Ms: median(runs.map((r) => r.latency.p99)) / 1000,
      cores: Object.fromEntries(Object.keys(runs[0]!.cores).map((k) => [k, median(runs.map((r) => r.cores[k]!))])),
      ratio: median(runs.map((r) => r.rps)) / baselineRps,
      cpuUsPerRequest: median(cpu),
      cpuUsPerRequestRange: [Math.min(...cpu), Math.max(...cpu)],
      rounds: runs.map((r, i) => ({ rps: r.rps, cpuUsPerRequest: cpu[i]!, p99Ms: r.latency.p99 / 1000 })),
    }
  }
  const baseline = version(baselineRuns, 'baseline')
  const thisTree = version(redirectRuns, 'redirect')
  const ref = version(referenceRuns, 'reference')
  return {
    reference: revision,
    baseline: { rps: baseline.rps, cpuUsPerRequest: baseline.cpuUsPerRequest, cpuUsPerRequestRange: baseline.cpuUsPerRequestRange },
    thisTree,
    referenceVersion: ref,
    thisVsReference: {
      ratio: thisTree.ratio / ref.ratio - 1,
      cpuPerRequest: thisTree.cpuUsPerRequest / ref.cpuUsPerRequest - 1,
      pairedRps: median(redirectRuns.map((r, i) => r.rps / referenceRuns[i]!.rps - 1)),
      pairedCpuPerRequest: median(redirectRuns.map((r, i) => cpuPerRequestUs(r, 'redirect') / cpuPerRequestUs(referenceRuns[i]!, 'reference') - 1)),
    },
  }
}

function printComparison(c: ReturnType<typeof comparison>) {
  const n = (x: number) => Math.round(x).toLocaleString('en-US')
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`
  const us = (x: number) => `${x.toFixed(2)} µs`
  const range = (r: number[]) => `${r[0]!.toFixed(2)}–${r[1]!.toFixed(2)}`
  const row = (name: string, rps: number, ratio: string, cpu: number, cpuRange: number[]) =>
    `${name.padEnd(30)}${n(rps).padStart(10)}${ratio.padStart(8)}${us(cpu).padStart(12)}   ${range(cpuRange)}`
  const d = c.thisVsReference
  const cores = (m: Record<string, number>) => Object.entries(m).filter(([, v]) => v >= 0.01).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')
  console.log([
    `compare: this tree vs ${c.reference}, same run, rounds alternating baseline → redirector → reference`,
    `${''.padEnd(30)}${'req/s'.padStart(10)}${'ratio'.padStart(8)}${'CPU/req'.padStart(12)}   CPU/req range (µs)`,
    row('baseline (bare Bun 302)', c.baseline.rps, '1.00', c.baseline.cpuUsPerRequest, c.baseline.cpuUsPerRequestRange),
    row('redirector (this tree)', c.thisTree.rps, c.thisTree.ratio.toFixed(3), c.thisTree.cpuUsPerRequest, c.thisTree.cpuUsPerRequestRange),
    row('reference', c.referenceVersion.rps, c.referenceVersion.ratio.toFixed(3), c.referenceVersion.cpuUsPerRequest, c.referenceVersion.cpuUsPerRequestRange),
    `cores busy (median) during redirector runs: ${cores(c.thisTree.cores)}`,
    `                      during reference runs: ${cores(c.referenceVersion.cores)}`,
    `this tree vs reference: ratio ${pct(d.ratio)}, CPU per request ${pct(d.cpuPerRequest)} (medians); ` +
      `paired by round: req/s ${pct(d.pairedRps)}, CPU per request ${pct(d.pairedCpuPerRequest)} (median of ${c.thisTree.rounds.length})`,
    '',
  ].join('\n'))
}

function printSummary(s: {
  wrk: { threads: number; connections: number; duration: string; rounds: number; pinned: boolean }
  links: number
  baseline: ReturnType<typeof aggregate>
  redirector: ReturnType<typeof aggregate>
  ratio: number
  paced: { targetRps: number; rps: number; p50Ms: number; p99Ms: number; non3xx: number; run: Omit<Run, 'cpuUsed'> }
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
    ...(c.perServer
      ? c.perServer.map((p) => `    ${p.name}: served ${n(p.served)}, its clients saw ${n(p.seenByClients)} (${n(p.warmUp)} warm-up), ${n(p.inFlightAtStop)} in flight${p.consistent ? '' : ' - INCONSISTENT'}`)
      : []),
    '',
  ]
  console.log(lines.join('\n'))
}

await bench.run(main)
