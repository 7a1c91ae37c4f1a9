// The local redirect benchmark, for machines without k6 (wrk from Debian instead), all on loopback:
// Postgres + Redis (scripts/services.sh), ClickHouse as chDB behind test/support/chdb-http.ts, the API
// and the redirector as their own processes. It seeds links, warms the cache, then measures in one run,
// alternately with the same wrk settings and aliases, four servers: the bare Bun.serve 302
// (bench/baseline.ts, the ceiling), the capture floor (bench/capture-floor.ts: the least a
// click-recording redirect does), the redirector (warm cache, click capture and enrichment on) and the
// embedded default (one-process/main.ts with nothing configured, one warm guest link, chDB inside); and
// this tree's redirector on routed links (bench/routed-links.ts: the tenth of ten rules matching, a sticky
// A/B test), as many as the plain ones, each kind of link on a redirector process of its own, as the
// reference has: a process that serves one kind of link for seconds, then another, would have its JIT
// re-specialise at every switch, a cost of the bench's blocks that mixed traffic does not have. It reports requests/s, p50/p99 and CPU per request of each server
// process, the redirector's ratios to both, the routed links' to the plain ones, a paced run at half the
// redirector's rate, clicks recorded vs served, and the targets' verdicts.
//
//   bun run bench [--duration 10s] [--warmup 10s] [--connections 64] [--threads 1] [--links 1000] [--rounds 2]
//                 [--timeout 300s] [--pin] [--compare <git-rev>] [--profile <dir>] [--server-env NAME=VALUE ...] [--no-fail]
// --warmup gives each server one unmeasured run of that length under the same load before the rounds
// (0s: none), so the rounds see each process in its steady state (JIT tiers, allocator), as in production.
// --pin puts the servers under test on CPU 1 and everything else (wrk, the ClickHouse stand-in, the API)
// on CPU 0, so on a two-core machine the server measured has a core to itself; the stand-in runs at the
// lowest priority there, so that wrk's timing is never delayed by its inserts.
// --compare <git-rev> also measures that revision's redirector in the same run (a fourth server): it is
// checked out into a temporary git worktree, started beside this tree's (same environment, its own port
// and DATA_DIR), warmed the same way; the summary adds this tree's difference to it.
// --profile <dir> runs the redirector under Bun's sampling profiler (--cpu-prof, with the markdown
// summary) and leaves its profile in <dir> when it stops: the figures of such a run are not comparable.
// --server-env NAME=VALUE (repeatable) adds a variable to the environment of every process started from
// this tree (bare, floor, redirector, embedded, reference and the API), to measure a runtime setting on
// all of them alike; the summary names them.
// Targets (bench/redirect-targets.ts): redirector >= 0.85 of the floor's requests/s; p99 < 3 ms at half
// the redirector's rate; clicks in ClickHouse equal redirects served within 2 s after the load stops;
// each routed link >= 0.9 of the plain links' requests/s.
// Exits 1 when one is missed (--no-fail: 0, for exploratory runs). Writes bench/results/redirect-latest.json
// (git-ignored). Everything it starts, it stops (also on error and SIGINT).
import { Redis } from 'ioredis'
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { setPriority } from 'node:os'
import { join, resolve } from 'node:path'
import { parseConfig } from '../core/config'
import { linkCacheKey } from '../core/link-cache'
import { openDatabase, type Db } from '../src/db/client'
import { spawnChdbHttp } from '../test/support/chdb-http-process'
import { checkClicks, type ClickSource } from './click-check'
import { benchRun, freePorts, log, median, optionReader, serverEnvOption, sh, startApiAndRedirector, startChild, startServices, waitFor, withCpu, type CpuSource } from './procs'
import { comparison, envList, floorSteadiness, printSummary, ratios, roundRatios, routedRatios, SERVERS, servingThread, summarise, type Run, type Server, type ServerSummary } from './redirect-report'
import { REDIRECT_TARGETS, redirectVerdicts } from './redirect-targets'
import { expectDestinations, routedSets, type RoutedSet } from './routed-links'
import { deleteSeededLinks, seedLinks, warmCache, type SeededLinks } from './seed'
import { durationMs, killRunningWrk, runWrk, writeWrkScript } from './wrk'
import { METRICS_TEST_TOKEN, scrapeMetrics } from '../test/support/metrics'

const RESULTS = join(import.meta.dir, 'results')
const ROOT = join(import.meta.dir, '..')

interface Options {
  duration: string
  warmup: string
  connections: number
  threads: number
  links: number
  rounds: number
  timeoutMs: number
  pin: boolean
  compare: string | null
  profile: string | null
  serverEnv: Record<string, string>
  fail: boolean
}

/** The pause after each run, so one server's trailing work (the last click segment shipped to ClickHouse)
 *  does not fall into the next server's run; it is charged to the run's requests (withCpu). */
const SETTLE_MS = 2_000

function parseOptions(args: string[]): Options {
  const { value, int } = optionReader(args)
  const duration = value('--duration', '10s')
  const warmup = value('--warmup', '10s')
  const rounds = int('--rounds', 2)
  const compare = args.includes('--compare') ? value('--compare', '') : null
  if (compare === '' || compare?.startsWith('--')) throw new Error('--compare needs a git revision')
  const profile = args.includes('--profile') ? value('--profile', '') : null
  if (profile === '' || profile?.startsWith('--')) throw new Error('--profile needs a directory')
  // Setup (services, engines, seeding) plus every wrk run and pause plus the click check, with room to
  // spare; the reference adds a worktree, a process, its warm-up and a run per round. Servers: bare,
  // floor, redirector on plain, 10-rule and A/B links, embedded default (and the reference).
  const servers = compare === null ? 6 : 7
  const needed = (compare === null ? 120_000 : 180_000) + (servers * rounds + 1) * durationMs(duration) + servers * (durationMs(warmup) + SETTLE_MS) + servers * rounds * SETTLE_MS + 60_000
  const timeoutMs = args.includes('--timeout') ? durationMs(value('--timeout', '300s')) : Math.max(300_000, needed)
  // -t1 -c64 by default: the machine has two cores, one for wrk and one for the server under test.
  return {
    duration,
    warmup,
    connections: int('--connections', 64),
    threads: int('--threads', 1),
    links: int('--links', 1000),
    rounds,
    timeoutMs,
    pin: args.includes('--pin'),
    compare,
    profile: profile === null ? null : resolve(profile),
    serverEnv: serverEnvOption(args),
    fail: !args.includes('--no-fail'),
  }
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

/**
 * With --pin: the ClickHouse stand-in at nice 19 (every thread; threads it starts later inherit it), so its
 * insert bursts wait for wrk on CPU 0 instead of delaying wrk's clock, which would show as the server's
 * latency. In production ClickHouse has a machine of its own.
 */
function lowerPriority(pid: number): void {
  for (const tid of readdirSync(`/proc/${pid}/task`)) setPriority(Number(tid), 19)
}

async function main() {
  log(`work dir ${workDir}; wrk -t${options.threads} -c${options.connections} -d${options.duration}, ${options.links} links, ${options.rounds} rounds`)
  if (Object.keys(options.serverEnv).length > 0) log(`every server's environment adds ${envList(options.serverEnv)} (--server-env)`)
  const { databaseUrl, redisUrl } = await startServices(cleanup)

  const chdb = await spawnChdbHttp({ path: join(workDir, 'clickhouse') })
  cleanup.push('chdb-http', () => chdb.stop())
  await pin(chdb.pid, 0)
  if (options.pin) lowerPriority(chdb.pid)
  log(`ClickHouse (chDB shim) at ${chdb.url}`)

  const [apiPort, redirectPort, baselinePort, floorPort, referencePort, embeddedPort, rulesPort, abPort] = freePorts(8) as [number, number, number, number, number, number, number, number]
  // The API shares CPU 0 with the rest; the redirector is a server under test (CPU 1).
  const { api, redirector, env, shortDomain, redirectUrl } = await startApiAndRedirector({
    cleanup,
    workDir,
    databaseUrl,
    redisUrl,
    clickhouseUrl: chdb.url,
    apiPort,
    redirectPort,
    env: options.serverEnv,
    redirectorFlags: options.profile === null ? [] : ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${options.profile}`],
    started: (child) => pin(child.proc.pid, child.name === 'api' ? 0 : 1),
  })
  log(`api on :${apiPort}, redirector on :${redirectPort} (SHORT_DOMAIN ${shortDomain})`)

  const database = await openDatabase({ databaseUrl, dataDir: workDir })
  cleanup.push('postgres client', () => database.close())
  const seeded = await seedLinks(database.db, { count: options.links, domain: shortDomain })
  // Every seeded link (the routed ones join below) and its cache entry go at cleanup.
  const seededIds = [...seeded.ids]
  const seededAliases = [...seeded.aliases]
  cleanup.push('seeded links and their cache entries', async () => {
    await deleteSeededLinks(database.db, seededIds)
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 })
    await redis.connect()
    for (let i = 0; i < seededAliases.length; i += 500) {
      await redis.del(...seededAliases.slice(i, i + 500).map((a) => linkCacheKey(seeded.domain, a)))
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
  const routed = await seedRouted(database.db, env, seeded.idPrefix, shortDomain, redirectUrl, (links) => {
    seededIds.push(...links.ids)
    seededAliases.push(...links.aliases)
  })
  const routedWarmUp = routed.reduce((n, r) => n + r.warmUp, 0)
  const routedServers = {
    rules: await startRoutedRedirector(routed.find((r) => r.name === 'rules')!, env, rulesPort),
    ab: await startRoutedRedirector(routed.find((r) => r.name === 'ab')!, env, abPort),
  }

  const reference = options.compare === null ? null : await startReference(options.compare, env, referencePort, seeded.aliases)

  const baseline = startChild('baseline', [process.execPath, join(import.meta.dir, 'baseline.ts'), '--port', String(baselinePort)], { env, logFile: join(workDir, 'baseline.log') })
  cleanup.push('baseline', () => baseline.stop())
  await pin(baseline.proc.pid, 1)
  const baselineUrl = `http://127.0.0.1:${baselinePort}`
  await waitFor(baseline, `${baselineUrl}/x`, 20_000, 302)

  // The floor knows the same aliases and answers each with the destination the redirector answers.
  const linksFile = join(workDir, 'links.tsv')
  writeFileSync(linksFile, seeded.aliases.map((a, i) => `${a}\t${seeded.urls[i]}\n`).join(''))
  const floor = startChild('floor', [process.execPath, join(import.meta.dir, 'capture-floor.ts'), '--port', String(floorPort), '--links', linksFile], { env, logFile: join(workDir, 'floor.log') })
  cleanup.push('capture floor', () => floor.stop())
  await pin(floor.proc.pid, 1)
  const floorUrl = `http://127.0.0.1:${floorPort}`
  await waitFor(floor, `${floorUrl}/${seeded.aliases[0]}`, 20_000, 302)

  const embedded = await startEmbedded(embeddedPort)

  cleanup.push('wrk', async () => killRunningWrk())
  const script = writeWrkScript(join(workDir, 'redirect.lua'), { aliases: seeded.aliases })
  const wrkLog = join(workDir, 'wrk.log')
  // CPU of each process during a run: on two cores, what the stand-in and wrk take is what the server
  // under test could not have.
  const pids: Record<string, CpuSource> = { redirect: redirector.proc.pid, chdb: chdb.pid, api: api.proc.pid, baseline: baseline.proc.pid, floor: floor.proc.pid }
  if (reference) pids.reference = reference.child.proc.pid
  pids.embedded = embedded.child.proc.pid
  pids.rules = routedServers.rules.child.proc.pid
  pids.ab = routedServers.ab.child.proc.pid
  // Each server's main thread (the one that answers requests) apart from the process: the rest is the
  // click worker, the runtime's collector helpers and, in the embedded default, chDB and PGlite.
  for (const server of Object.values(SERVERS)) {
    const pid = pids[server.process]
    if (typeof pid === 'number') pids[servingThread(server.process)] = { pid, thread: pid }
  }
  // With `settle`, the CPU charged to the run's requests runs to the end of the pause after it.
  const wrk = async (url: string, label: string, scriptPath = script, duration = options.duration, headers: string[] = [], settle?: () => Promise<void>): Promise<Run> => {
    const { result, cores, cpuSeconds } = await withCpu(
      pids,
      () =>
        runWrk({
          url,
          script: scriptPath,
          duration,
          label,
          logFile: wrkLog,
          headers,
          connections: options.connections,
          threads: options.threads,
          prefix: options.pin ? ['taskset', '-c', '0'] : [],
        }),
      settle,
    )
    const wrkCores = Math.round((result.cpuSeconds / (result.durationUs / 1e6)) * 100) / 100
    return { ...result, cores: { ...cores, wrk: wrkCores }, cpuUsed: { ...cpuSeconds, wrk: result.cpuSeconds } }
  }

  // Each round runs every server once, in the same order, with a pause after each run. The redirector on
  // the routed links right after it on the plain ones, so a round measures the three seconds apart.
  const routedScript = (name: RoutedSet['name']) => writeWrkScript(join(workDir, `${name}.lua`), { aliases: routed.find((r) => r.name === name)!.aliases })
  const measured: Array<{ server: Server; url: string; headers: string[]; runs: Run[]; script?: string }> = [
    { server: SERVERS.bare, url: baselineUrl, headers: [], runs: [] },
    { server: SERVERS.floor, url: floorUrl, headers: [], runs: [] },
    { server: SERVERS.redirector, url: redirectUrl, headers: [], runs: [] },
    // Asked under SHORT_DOMAIN, as the reference is: the default-domain path, as for the plain links.
    { server: SERVERS.rules, url: routedServers.rules.url, headers: [`Host: ${shortDomain}`], runs: [], script: routedScript('rules') },
    { server: SERVERS.ab, url: routedServers.ab.url, headers: [`Host: ${shortDomain}`], runs: [], script: routedScript('ab') },
  ]
  // The reference is asked under this tree's SHORT_DOMAIN (a Host header), so both redirectors take the
  // same default-domain path: by its own port it would be matched as an IP host, a little dearer.
  if (reference) measured.push({ server: SERVERS.reference, url: reference.url, headers: [`Host: ${shortDomain}`], runs: [] })
  const embeddedScript = writeWrkScript(join(workDir, 'embedded.lua'), { aliases: [embedded.alias] })
  measured.push({ server: SERVERS.embedded, url: embedded.url, headers: [], runs: [], script: embeddedScript })
  await Bun.sleep(SETTLE_MS) // the warm-ups' clicks (and the reference's start) out of the first run
  // One unmeasured run of each server under the same load first: a process's JIT and allocator reach
  // their steady state only under load (the click worker's encoder tiers up over its first ten seconds or
  // so of batches), and a redirector in production runs for days. Its clicks count in the click check.
  const warmUps = new Map<Server, Run>()
  if (durationMs(options.warmup) > 0) {
    for (const m of measured) {
      warmUps.set(m.server, await wrk(m.url, `${m.server.label} warm-up`, m.script ?? script, options.warmup, m.headers, () => Bun.sleep(SETTLE_MS)))
      log(`${m.server.label} warm-up (${options.warmup}, not measured): ${describe(warmUps.get(m.server)!)}`)
    }
  }
  for (let round = 1; round <= options.rounds; round++) {
    for (const m of measured) {
      m.runs.push(await wrk(m.url, `${m.server.label} ${round}`, m.script ?? script, options.duration, m.headers, () => Bun.sleep(SETTLE_MS)))
      log(`${m.server.label} #${round}: ${describe(m.runs.at(-1)!)}`)
    }
  }
  const runsOf = (server: Server) => measured.find((m) => m.server === server)?.runs
  const [bareRuns, floorRuns, redirectRuns, referenceRuns, embeddedRuns, rulesRuns, abRuns] = [
    SERVERS.bare,
    SERVERS.floor,
    SERVERS.redirector,
    SERVERS.reference,
    SERVERS.embedded,
    SERVERS.rules,
    SERVERS.ab,
  ].map(runsOf) as [Run[], Run[], Run[], Run[] | undefined, Run[], Run[], Run[]]

  // Paced at half the redirector's rate: each connection pauses between requests. A pause of
  // connections/rate alone undershoots (the response time and wrk's millisecond timers add to each
  // cycle), so a 2 s pilot measures that overhead and the real run subtracts it.
  // The capture floor is paced to the same rate right after, as the reference: what this machine's
  // scheduler, wrk and loopback add to a p99 at that rate whatever the server.
  const targetRate = median(redirectRuns.map((r) => r.rps)) / 2
  const cycleMs = (1000 * options.connections) / targetRate
  const pacedScript = (name: string, delayMs: number) =>
    writeWrkScript(join(workDir, `${name}-paced.lua`), { aliases: seeded.aliases, delayMs, countStatuses: true /* affordable at half load, and exact */ })
  const pacedRun = async (url: string, name: string, label: string) => {
    const pilot = await wrk(url, `${label} paced pilot`, pacedScript(name, cycleMs), '2s')
    const overheadMs = Math.max(0, (1000 * options.connections) / pilot.rps - cycleMs)
    const paced = await wrk(url, `${label} paced`, pacedScript(name, Math.max(0, cycleMs - overheadMs)))
    log(`${label} paced @ ${Math.round(targetRate)}/s (pilot ${Math.round(pilot.rps)}/s, per-request overhead ${overheadMs.toFixed(2)} ms): ${describe(paced)}`)
    return { pilot, paced }
  }
  const { pilot, paced } = await pacedRun(redirectUrl, 'redirect', 'redirector')
  const floorPaced = (await pacedRun(floorUrl, 'floor', 'capture floor')).paced

  const loadWarmUp = (server: Server) => {
    const run = warmUps.get(server)
    return run ? [run] : []
  }
  // The redirector's clicks (the routed links' first GETs went through it too), then each routed one's.
  const redirectorLoad = [...loadWarmUp(SERVERS.redirector), ...redirectRuns, pilot, paced]
  const sources: ClickSource[] = [
    { name: 'redirector', url: redirectUrl, warmUp: warm.redirects + routedWarmUp, runs: redirectorLoad },
    { name: 'rules redirector', url: routedServers.rules.url, warmUp: routedServers.rules.warmUp, runs: [...loadWarmUp(SERVERS.rules), ...rulesRuns] },
    { name: 'A/B redirector', url: routedServers.ab.url, warmUp: routedServers.ab.warmUp, runs: [...loadWarmUp(SERVERS.ab), ...abRuns] },
  ]
  if (reference) sources.push({ name: 'reference', url: reference.url, warmUp: reference.warmUp, runs: [...loadWarmUp(SERVERS.reference), ...referenceRuns!] })
  const clicks = await checkClicks(chdb.url, seeded.idPrefix, sources)

  const servers = measured.map((m) => summarise(m.runs, m.server))
  const summaryOf = (server: Server) => servers.find((s) => s.label === server.label)
  const [bare, floorSummary, redirectorSummary, embeddedSummary, rulesSummary, abSummary] = [SERVERS.bare, SERVERS.floor, SERVERS.redirector, SERVERS.embedded, SERVERS.rules, SERVERS.ab].map(
    summaryOf,
  ) as [ServerSummary, ServerSummary, ServerSummary, ServerSummary, ServerSummary, ServerSummary]
  const referenceSummary = summaryOf(SERVERS.reference)
  const verdicts = redirectVerdicts({
    redirectorRps: redirectorSummary.rps,
    floorRps: floorSummary.rps,
    pacedP99Ms: paced.latency.p99 / 1000,
    clicksEqualAfterMs: clicks.equalAfterMs,
    servedConsistent: clicks.servedConsistent,
    non3xx: [...bareRuns, ...floorRuns, ...redirectRuns, ...rulesRuns, ...abRuns, pilot, paced, floorPaced, ...(referenceRuns ?? []), ...embeddedRuns].reduce((sum, r) => sum + r.non3xx, 0),
    embedded: { rps: embeddedSummary.rps, p99Ms: embeddedSummary.p99Ms },
    routed: { rulesRps: rulesSummary.rps, abRps: abSummary.rps },
  })
  const summary = {
    at: new Date().toISOString(),
    machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version },
    wrk: { threads: options.threads, connections: options.connections, duration: options.duration, warmup: options.warmup, rounds: options.rounds, pinned: options.pin },
    serverEnv: options.serverEnv,
    links: options.links,
    servers: { bare, floor: floorSummary, redirector: redirectorSummary, rules: rulesSummary, ab: abSummary, ...(referenceSummary ? { reference: referenceSummary } : {}), embedded: embeddedSummary },
    ratios: {
      redirector: ratios(redirectorSummary, bare, floorSummary),
      floorToBare: floorSummary.rps / bare.rps,
      ...(referenceSummary ? { reference: ratios(referenceSummary, bare, floorSummary) } : {}),
      embedded: ratios(embeddedSummary, bare, floorSummary),
    },
    rounds: {
      redirector: roundRatios(redirectorSummary, floorSummary),
      ...(referenceSummary ? { reference: roundRatios(referenceSummary, floorSummary) } : {}),
      embedded: roundRatios(embeddedSummary, floorSummary),
      floor: floorSteadiness(floorSummary),
    },
    routed: routedRatios(redirectorSummary, rulesSummary, abSummary),
    paced: { targetRps: targetRate, rps: paced.rps, p50Ms: paced.latency.p50 / 1000, p99Ms: paced.latency.p99 / 1000, non3xx: paced.non3xx, cores: paced.cores },
    floorPaced: { rps: floorPaced.rps, p50Ms: floorPaced.latency.p50 / 1000, p99Ms: floorPaced.latency.p99 / 1000, cores: floorPaced.cores },
    clicks,
    redirectorMetrics: await scrapeMetrics(redirectUrl).then(
      (m) => Object.fromEntries(m),
      () => null,
    ),
    targets: REDIRECT_TARGETS,
    verdicts,
    ...(reference ? { compare: comparison(reference.revision, redirectRuns, referenceRuns!) } : {}),
  }
  printSummary(summary)
  mkdirSync(RESULTS, { recursive: true })
  writeFileSync(join(RESULTS, 'redirect-latest.json'), `${JSON.stringify(summary, null, 2)}\n`)
  log(`wrote bench/results/redirect-latest.json (git-ignored); wrk output in ${wrkLog}`)
  const missed = verdicts.filter((v) => !v.met).length
  if (missed > 0 && options.fail) {
    log(`${missed} target(s) missed: exit 1 (--no-fail exits 0)`)
    bench.fail()
  } else if (missed > 0) log(`${missed} target(s) missed; --no-fail: exit 0`)
}

function describe(r: Run): string {
  const errors = Object.entries(r.errors)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')
  const cores = Object.entries(r.cores)
    .filter(([, c]) => c >= 0.01)
    .map(([k, c]) => `${k} ${c.toFixed(2)}`)
    .join(' ')
  return `${Math.round(r.rps)} req/s, p50 ${(r.latency.p50 / 1000).toFixed(2)} ms, p99 ${(r.latency.p99 / 1000).toFixed(2)} ms, ${r.requests} responses, non-3xx ${r.non3xx}${errors ? `, errors: ${errors}` : ''}; cores: ${cores}`
}

/**
 * The routed links (bench/routed-links.ts): for each routing, as many links as the plain ones under the
 * plain ones' id prefix plus its name (one prefix counts every click), its stored form in each row; each
 * requested once with GET (the API resolves it and writes its record through; a click) and once with HEAD
 * (no click), every redirect checked to go where the routing says.
 */
async function seedRouted(db: Db, env: Record<string, string | undefined>, idPrefix: string, domain: string, redirectUrl: string, seededNow: (links: SeededLinks) => void) {
  const sets = await routedSets({ config: parseConfig(env), db, now: Date.now })
  const routed: Array<{ name: RoutedSet['name']; set: RoutedSet; aliases: string[]; warmUp: number }> = []
  for (const set of sets) {
    const links = await seedLinks(db, { count: options.links, domain, idPrefix: `${idPrefix}${set.name}_`, routing: set.routing })
    seededNow(links)
    const warm = await warmCache(redirectUrl, links.aliases)
    const heads = await warmCache(redirectUrl, links.aliases, 'HEAD')
    if (warm.redirects !== links.aliases.length || heads.redirects !== links.aliases.length) {
      throw new Error(`routed links (${set.name}): ${warm.redirects} GET and ${heads.redirects} HEAD of ${links.aliases.length} redirected; others ${JSON.stringify([warm.failures, heads.failures])}`)
    }
    expectDestinations(set, warm.locations)
    expectDestinations(set, heads.locations)
    log(`seeded ${links.ids.length} routed links (${set.name}, ${links.idPrefix}*), warm-up: ${warm.redirects} GET (clicks) + ${heads.redirects} HEAD, to ${Object.keys(warm.locations).join(' and ')}`)
    routed.push({ name: set.name, set, aliases: links.aliases, warmUp: warm.redirects })
  }
  return routed
}

/**
 * The embedded default as `bun run start` runs it (one-process/main.ts: PGlite, chDB and the in-process cache
 * under a fresh DATA_DIR, nothing else configured but its port and SHORT_DOMAIN, the address wrk asks),
 * with one guest link made through its API and warmed (one GET, a click, and one HEAD). With --pin its
 * serving thread has CPU 1 to itself and its other threads (the click worker, chDB's) go to CPU 0 with
 * wrk: what the one-process product must show is that the thread answering requests carries no
 * database and no enrichment; its CPU per request still counts every thread.
 */
async function startEmbedded(port: number) {
  const shortDomain = `127.0.0.1:${port}`
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...options.serverEnv,
    PORT: String(port),
    SHORT_DOMAIN: shortDomain,
    DATA_DIR: join(workDir, 'embedded'),
    METRICS_TOKEN: METRICS_TEST_TOKEN,
  }
  const child = startChild('embedded', [process.execPath, '--max-http-header-size=65536', join(ROOT, 'one-process/main.ts')], { env, logFile: join(workDir, 'embedded.log'), cwd: ROOT })
  cleanup.push('embedded default', () => child.stop())
  const url = `http://${shortDomain}`
  await waitFor(child, `${url}/health`, 120_000)
  const guest = (await (await fetch(`${url}/api/v1/guest/token`, { method: 'POST' })).json()) as { data?: { guest_token?: string } }
  const created = await fetch(`${url}/api/v1/shorten`, {
    method: 'POST',
    headers: { authorization: `Bearer ${guest.data?.guest_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://example.com/embedded-bench' }),
  })
  const link = (await created.json()) as { data?: { alias?: string } }
  const alias = link.data?.alias
  if (created.status !== 200 || !alias) throw new Error(`embedded default: shorten answered ${created.status} ${JSON.stringify(link)}`)
  for (const method of ['GET', 'HEAD'] as const) {
    const warm = await warmCache(url, [alias], method)
    if (warm.redirects !== 1) throw new Error(`embedded default: warm-up ${method} of ${alias} did not redirect: ${JSON.stringify(warm.failures)}`)
  }
  // Every thread exists by now (chDB's pool, the click worker): the others to CPU 0, then the serving one.
  if (options.pin) {
    for (const tid of readdirSync(`/proc/${child.proc.pid}/task`)) await sh(['taskset', '-pc', '0', tid], 10_000)
    await sh(['taskset', '-pc', '1', String(child.proc.pid)], 10_000)
  }
  log(`embedded default on :${port} (DATA_DIR ${env.DATA_DIR}), link ${alias} warmed`)
  return { child, url, alias }
}

/**
 * A redirector of this tree for one kind of routed link: the redirector's environment (its SHORT_DOMAIN,
 * so the same cache keys) with its own port and DATA_DIR (its own click spool), pinned like it, and
 * warmed like it (every alias once with GET, a click each, and once with HEAD), each redirect checked to
 * go where the routing says.
 */
async function startRoutedRedirector({ name, set, aliases }: { name: RoutedSet['name']; set: RoutedSet; aliases: string[] }, env: Record<string, string | undefined>, port: number) {
  const child = startChild(name, [process.execPath, join(ROOT, 'redirect/main.ts')], {
    env: { ...env, REDIRECT_PORT: String(port), DATA_DIR: join(workDir, `data-${name}`) },
    logFile: join(workDir, `redirect-${name}.log`),
    cwd: ROOT,
  })
  cleanup.push(`${name} redirector`, () => child.stop())
  await pin(child.proc.pid, 1)
  const url = `http://127.0.0.1:${port}`
  await waitFor(child, `${url}/health`, 60_000)
  const warm = await warmCache(url, aliases)
  const heads = await warmCache(url, aliases, 'HEAD')
  if (warm.redirects !== aliases.length || heads.redirects !== aliases.length) {
    throw new Error(`${name} redirector warm-up: ${warm.redirects} GET and ${heads.redirects} HEAD of ${aliases.length} redirected; others ${JSON.stringify([warm.failures, heads.failures])}`)
  }
  expectDestinations(set, warm.locations)
  expectDestinations(set, heads.locations)
  log(`${name} redirector on :${port}; warm-up: ${warm.redirects} GET (clicks) + ${heads.redirects} HEAD`)
  return { child, url, warmUp: warm.redirects }
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

await bench.run(main)
