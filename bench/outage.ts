// The outage benchmark: two failure modes of the redirect path, measured end to end on loopback with the
// same processes as bench/run.ts (Postgres from scripts/services.sh, ClickHouse as chDB behind
// test/support/chdb-http.ts, `bun src/api.ts`, `bun redirect/main.ts`), except that Redis is a
// redis-server of this run's own on a free port, so that it can be stopped without touching the shared one.
//
//   bun bench/outage.ts [--outage 30s] [--rate 2000] [--links 100] [--connections 16]
//                       [--redis-rate 200] [--redis-load 15s] [--timeout 360s]
//
// 1. ClickHouse outage under load: a paced wrk load (--rate requests/s over the seeded aliases) runs
//    5 s, then through the outage (the stand-in is stopped with SIGTERM at its start), then 15 s more
//    (the stand-in starts again on the same port and data directory at its start). Clicks in ClickHouse
//    (count and distinct click ids) are then polled until they equal the redirector's own served
//    counter (/health clicks.pushed), at most 60 s; the waiting segments are read back from the spool.
// 2. Redis outage: half of a fresh set of links is warmed (Redis and L1), that Redis is stopped, and every
//    link is requested round robin at --redis-rate for --redis-load; then Redis starts again (empty) and
//    every link must still redirect, and the redirector must read Redis again.
// Writes bench/results/outage-latest.json (git-ignored). Everything it starts, it stops (also on error and SIGINT);
// a watchdog bounds the whole run.
import { createClient, type ClickHouseClient } from '@clickhouse/client'
import { Redis } from 'ioredis'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { linkCacheKey } from '../core/link-cache'
import { openDatabase } from '../src/db/client'
import { spawnChdbHttp, type ChdbHttpProcess } from '../test/support/chdb-http-process'
import { benchRun, freePorts, log, optionReader, startApiAndRedirector, startChild, startServices, tail, type Child } from './procs'
import { deleteSeededLinks, seedLinks, warmCache, type SeededLinks } from './seed'
import { durationMs, killRunningWrk, runWrk, writeWrkScript, type WrkResult } from './wrk'
import { clickFiguresOf, resolverFigures, scrapeMetrics, type ClickFigures, type ResolverFigures } from '../test/support/metrics'

const RESULTS = join(import.meta.dir, 'results')
/** Load before the ClickHouse outage, and after it (the issue: outage + 20 s of load in all). */
const LEAD_S = 5
const TAIL_S = 15
/** The redirector's default L1_TTL_MS: after it, a link read during the Redis outage is no longer in L1. */
const L1_TTL_MS = 5_000
/** Seconds of the Redis part's load with Redis still up, on the warm links: the latency to compare with. */
const REFERENCE_S = 3

interface Options {
  outageS: number
  rate: number
  links: number
  connections: number
  redisRate: number
  redisLoadS: number
  timeoutMs: number
}

function parseOptions(args: string[]): Options {
  const { value, int } = optionReader(args)
  const seconds = (name: string, fallback: string) => {
    const s = Math.round(durationMs(value(name, fallback)) / 1000)
    if (s < 1) throw new Error(`${name} must be at least 1s (wrk takes whole seconds)`)
    return s
  }
  const outageS = seconds('--outage', '30s')
  const redisLoadS = seconds('--redis-load', '15s')
  // Setup, calibration, the load, the click poll (≤ 60 s), the Redis part, cleanup: with room to spare.
  const needed = 180_000 + (LEAD_S + outageS + TAIL_S + redisLoadS) * 1000 + 60_000
  return {
    outageS,
    rate: int('--rate', 2000),
    links: int('--links', 100),
    connections: int('--connections', 16),
    redisRate: int('--redis-rate', 200),
    redisLoadS,
    timeoutMs: args.includes('--timeout') ? durationMs(value('--timeout', '360s')) : needed,
  }
}

const options = parseOptions(process.argv.slice(2))
const bench = benchRun('linkservice-outage-', options.timeoutMs)
const { workDir, cleanup } = bench

// ---------------------------------------------------------------------------------------------------
// Processes

/** A redis-server of this run's own, in the foreground (so SIGTERM stops it), no persistence. */
async function startRedis(port: number, generation: number): Promise<Child> {
  const dir = join(workDir, 'redis')
  mkdirSync(dir, { recursive: true })
  const child = startChild(`redis #${generation}`, ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    env: process.env,
    logFile: join(workDir, 'redis.log'),
  })
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) throw new Error(`redis-server exited (${child.proc.exitCode ?? child.proc.signalCode}):\n${tail(child.logFile)}`)
    const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1_000 })
    probe.on('error', () => {})
    const pong = await probe
      .connect()
      .then(
        () => probe.ping(),
        () => null,
      )
      .catch(() => null)
    probe.disconnect()
    if (pong === 'PONG') return child
    await Bun.sleep(100)
  }
  throw new Error(`redis-server on :${port} did not answer PING within 15 s:\n${tail(child.logFile)}`)
}

interface Health {
  clicks: ClickFigures
  cache: ResolverFigures
}

/** The redirector's click and lookup figures, from its /metrics. */
async function health(redirectUrl: string): Promise<Health> {
  const m = await scrapeMetrics(redirectUrl)
  return { clicks: clickFiguresOf(m, redirectUrl), cache: resolverFigures(m) }
}

/**
 * Polls the redirector's /metrics every `everyMs` in the background: the largest spool and pending
 * backlog seen per phase, and the first time `until` held (e.g. "the backlog is written").
 */
function monitor(redirectUrl: string, firstPhase: string, everyMs = 200) {
  const byPhase: Record<string, { samples: number; failures: number; maxSpooledFiles: number; maxPendingRows: number }> = {}
  let phase = firstPhase
  let stopped = false
  let condition = null as { test: (h: Health) => boolean; metAt: number | null } | null
  const loop = (async () => {
    while (!stopped) {
      const p = (byPhase[phase] ??= { samples: 0, failures: 0, maxSpooledFiles: 0, maxPendingRows: 0 })
      try {
        const h = await health(redirectUrl)
        p.samples++
        p.maxSpooledFiles = Math.max(p.maxSpooledFiles, h.clicks.spooledFiles)
        p.maxPendingRows = Math.max(p.maxPendingRows, h.clicks.pendingRows)
        if (condition && condition.metAt === null && condition.test(h)) condition.metAt = performance.now()
      } catch {
        p.failures++
      }
      await Bun.sleep(everyMs)
    }
  })()
  return {
    byPhase,
    setPhase(name: string) {
      phase = name
    },
    /** Starts watching for `test`; metAt() is when it first held (performance.now()), or null. */
    watch(test: (h: Health) => boolean) {
      condition = { test, metAt: null }
    },
    metAt: () => condition?.metAt ?? null,
    async stop() {
      stopped = true
      await loop
    },
  }
}

async function clicksOf(client: ClickHouseClient, idPrefix: string): Promise<{ rows: number; distinct: number }> {
  const result = await client.query({
    query: 'SELECT count() AS n, uniqExact(click_id) AS u FROM clicks_v1 WHERE startsWith(link_id, {prefix:String})',
    query_params: { prefix: idPrefix },
    format: 'JSONEachRow',
  })
  const row = (await result.json<{ n: string; u: string }>())[0]
  return { rows: Number(row?.n ?? 0), distinct: Number(row?.u ?? 0) }
}

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!
}

const round2 = (x: number) => Math.round(x * 100) / 100

// ---------------------------------------------------------------------------------------------------
// Main

async function main() {
  log(
    `work dir ${workDir}; ClickHouse outage ${options.outageS} s under ${options.rate} req/s (wrk -c${options.connections}), ${options.links} links; Redis outage ${options.redisLoadS} s at ${options.redisRate} req/s`,
  )
  // Postgres only: this run brings its own Redis.
  const { databaseUrl } = await startServices(cleanup, 'postgres')
  const [apiPort, redirectPort, chdbPort, redisPort] = freePorts(4) as [number, number, number, number]

  let redis: Child | null = await startRedis(redisPort, 1)
  cleanup.push("redis-server (this run's own)", async () => redis?.stop())
  const redisUrl = `redis://127.0.0.1:${redisPort}`

  const chdbPath = join(workDir, 'clickhouse')
  let chdb: ChdbHttpProcess | null = await spawnChdbHttp({ path: chdbPath, port: chdbPort })
  cleanup.push('chdb-http', async () => chdb?.stop())
  const chdbUrl = chdb.url

  const { api, redirector, shortDomain, redirectUrl } = await startApiAndRedirector({
    cleanup,
    workDir,
    databaseUrl,
    redisUrl,
    clickhouseUrl: chdbUrl,
    apiPort,
    redirectPort,
    env: {},
  })

  const database = await openDatabase({ databaseUrl, dataDir: workDir })
  cleanup.push('postgres client', () => database.close())
  const seededIds: string[] = []
  cleanup.push('seeded links', () => deleteSeededLinks(database.db, seededIds))
  const seed = async (count: number): Promise<SeededLinks> => {
    const seeded = await seedLinks(database.db, { count, domain: shortDomain })
    seededIds.push(...seeded.ids)
    return seeded
  }
  const alive = () => {
    for (const child of [api, redirector]) {
      if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
        throw new Error(`${child.name} exited (${child.proc.exitCode ?? child.proc.signalCode}); log ${child.logFile}:\n${tail(child.logFile)}`)
      }
    }
  }
  log(`setup: postgres, redis :${redisPort} (own), chDB :${chdbPort}, api :${apiPort}, redirector :${redirectPort}`)

  const clickhouse = await clickhouseOutage({ redirectUrl, chdbPath, chdbPort, seed, alive, setChdb: (c) => (chdb = c), getChdb: () => chdb })
  const redisPart = await redisOutage({
    redirectUrl,
    redisUrl,
    chdbUrl,
    seed,
    alive,
    stopRedis: async () => {
      const r = redis
      redis = null
      await r?.stop()
    },
    startRedis: async () => {
      redis = await startRedis(redisPort, 2)
    },
  })

  const problems = [...clickhouse.problems, ...redisPart.problems]
  const summary = {
    at: new Date().toISOString(),
    machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version },
    options: { ...options, leadS: LEAD_S, tailS: TAIL_S },
    ok: problems.length === 0,
    problems,
    clickhouseOutage: clickhouse.result,
    redisOutage: redisPart.result,
  }
  printSummary(summary)
  mkdirSync(RESULTS, { recursive: true })
  writeFileSync(join(RESULTS, 'outage-latest.json'), `${JSON.stringify(summary, null, 2)}\n`)
  log('wrote bench/results/outage-latest.json')
  if (problems.length > 0) {
    bench.fail()
    log(`redirector log tail:\n${tail(redirector.logFile, 15)}`)
    log(`api log tail:\n${tail(api.logFile, 15)}`)
  }
}

// ---------------------------------------------------------------------------------------------------
// 1. ClickHouse outage under load

type Phase = 'before' | 'outage' | 'after'

async function clickhouseOutage(ctx: {
  redirectUrl: string
  chdbPath: string
  chdbPort: number
  seed: (count: number) => Promise<SeededLinks>
  alive: () => void
  setChdb: (c: ChdbHttpProcess | null) => void
  getChdb: () => ChdbHttpProcess | null
}) {
  const { redirectUrl } = ctx
  const seeded = await ctx.seed(options.links)
  const warm = await warmCache(redirectUrl, seeded.aliases)
  if (warm.redirects !== seeded.aliases.length) throw new Error(`warm-up: ${warm.redirects} of ${seeded.aliases.length} redirected; others ${JSON.stringify(warm.failures)}`)

  cleanup.push('wrk', async () => killRunningWrk())
  const wrkLog = join(workDir, 'wrk.log')
  const wrk = (label: string, seconds: number, delayMs: number) =>
    runWrk({
      url: redirectUrl,
      duration: `${seconds}s`,
      label,
      logFile: wrkLog,
      connections: options.connections,
      threads: 1,
      script: writeWrkScript(join(workDir, `outage-${label}.lua`), { aliases: seeded.aliases, delayMs, countStatuses: true }),
    })
  // Pacing as in bench/run.ts: each connection pauses between requests; a 2 s pilot measures what the
  // response time and wrk's timers add to each cycle, and the real runs subtract it.
  const cycleMs = (1000 * options.connections) / options.rate
  const pilot = await wrk('pilot', 2, cycleMs)
  const overheadMs = Math.max(0, (1000 * options.connections) / pilot.rps - cycleMs)
  const delayMs = Math.max(0, cycleMs - overheadMs)
  log(`clickhouse part: ${seeded.ids.length} links seeded and warmed (${warm.redirects} clicks); pilot ${Math.round(pilot.rps)} req/s → delay ${delayMs.toFixed(2)} ms per connection`)

  const watch = monitor(redirectUrl, 'before')
  const runs: Partial<Record<Phase, WrkResult>> = {}
  let stopRequestedAt = 0
  let stoppedAt = 0
  let startRequestedAt = 0
  let restartedAt = 0
  let pushedAtOutageStart = 0
  let pushedAtOutageEnd = 0
  let pushedAtRestart = 0
  let failedAttemptsBefore = 0
  let failedAttemptsAfter = 0
  let stopExit: number | null = null
  let loadEnd = 0
  try {
    runs.before = await wrk('before', LEAD_S, delayMs)
    ctx.alive()

    // The outage: the load goes on while the stand-in stops.
    const atStart = await health(redirectUrl)
    pushedAtOutageStart = atStart.clicks.pushed
    failedAttemptsBefore = atStart.clicks.failedAttempts
    watch.setPhase('outage')
    const outageRun = wrk('outage', options.outageS, delayMs)
    stopRequestedAt = performance.now()
    stopExit = await ctx.getChdb()!.stop()
    ctx.setChdb(null)
    stoppedAt = performance.now()
    runs.outage = await outageRun
    ctx.alive()
    const atEnd = await health(redirectUrl)
    pushedAtOutageEnd = atEnd.clicks.pushed

    // Back on the same port and data directory, while the last part of the load runs.
    watch.setPhase('after')
    const afterRun = wrk('after', TAIL_S, delayMs)
    startRequestedAt = performance.now()
    ctx.setChdb(await spawnChdbHttp({ path: ctx.chdbPath, port: ctx.chdbPort }))
    restartedAt = performance.now()
    const atRestart = await health(redirectUrl)
    pushedAtRestart = atRestart.clicks.pushed
    failedAttemptsAfter = atRestart.clicks.failedAttempts
    // The backlog is written once every click served up to the restart is (the spool drains last).
    watch.watch((h) => h.clicks.written >= pushedAtRestart && h.clicks.spooledFiles === 0)
    runs.after = await afterRun
    loadEnd = performance.now()
    ctx.alive()
  } finally {
    await watch.stop()
  }
  const backlogMetAt = watch.metAt()
  const downMs = restartedAt - stopRequestedAt
  const phaseLine = (p: Phase) => {
    const r = runs[p]!
    return `${p} ${Math.round(r.rps)}/s p50 ${(r.latency.p50 / 1000).toFixed(2)} p99 ${(r.latency.p99 / 1000).toFixed(2)} ms non-3xx ${r.non3xx}`
  }
  log(`clickhouse part: load done (${(['before', 'outage', 'after'] as const).map(phaseLine).join('; ')}); stand-in down ${(downMs / 1000).toFixed(1)} s`)

  // Clicks in ClickHouse until they equal what the redirector served, at most 60 s after the load.
  const client = createClient({ url: ctx.getChdb()!.url, request_timeout: 5_000 })
  let stored = { rows: 0, distinct: 0 }
  let final: Health | null = null
  let completeAt: number | null = null
  try {
    while (performance.now() - loadEnd < 60_000) {
      stored = await clicksOf(client, seeded.idPrefix)
      final = await health(redirectUrl)
      if (stored.rows === final.clicks.pushed) {
        completeAt = performance.now()
        break
      }
      // More rows than served cannot heal; stop once nothing is left to write.
      if (stored.rows > final.clicks.pushed && final.clicks.pendingRows === 0 && final.clicks.spooledFiles === 0) break
      await Bun.sleep(100)
    }
  } finally {
    await client.close()
  }
  const served = final?.clicks.pushed ?? -1
  const wrkRuns = [pilot, runs.before!, runs.outage!, runs.after!]
  const seenByClients = warm.redirects + wrkRuns.reduce((n, r) => n + r.redirects, 0)
  const inFlightAtStop = wrkRuns.reduce((n, r) => n + Math.max(0, r.sent - r.requests), 0)
  const servedConsistent = served >= seenByClients && served <= seenByClients + inFlightAtStop
  const latency = (r: WrkResult) => ({ rps: Math.round(r.rps), p50Ms: r.latency.p50 / 1000, p90Ms: r.latency.p90 / 1000, p99Ms: r.latency.p99 / 1000, maxMs: r.latency.max / 1000 })
  const outagePhase = watch.byPhase.outage ?? { samples: 0, failures: 0, maxSpooledFiles: 0, maxPendingRows: 0 }

  const result = {
    links: seeded.ids.length,
    idPrefix: seeded.idPrefix,
    load: { targetRps: options.rate, connections: options.connections, delayMs: round2(delayMs), pilotRps: Math.round(pilot.rps), phasesS: { before: LEAD_S, outage: options.outageS, after: TAIL_S } },
    standIn: { stopTookMs: Math.round(stoppedAt - stopRequestedAt), stopExitCode: stopExit, downMs: Math.round(downMs), startTookMs: Math.round(restartedAt - startRequestedAt) },
    redirectsServed: served,
    seenByClients,
    warmUp: warm.redirects,
    inFlightAtStop,
    servedConsistent,
    outageWindow: {
      pushedAtStart: pushedAtOutageStart,
      pushedAtEnd: pushedAtOutageEnd,
      redirects: pushedAtOutageEnd - pushedAtOutageStart,
      clientRedirects: runs.outage!.redirects,
      failedInsertAttempts: failedAttemptsAfter - failedAttemptsBefore,
      pushedAtRestart,
    },
    rowsStored: stored.rows,
    distinctClickIds: stored.distinct,
    storedOnce: stored.distinct === stored.rows,
    complete: stored.rows === served,
    completeAfterRestartMs: completeAt === null ? null : Math.round(completeAt - restartedAt),
    completeAfterLoadEndMs: completeAt === null ? null : Math.round(completeAt - loadEnd),
    backlogWrittenAfterRestartMs: backlogMetAt === null ? null : Math.round(backlogMetAt - restartedAt),
    duringOutage: { maxSpooledFiles: outagePhase.maxSpooledFiles, maxPendingRows: outagePhase.maxPendingRows, healthSamples: outagePhase.samples, healthFailures: outagePhase.failures },
    monitor: watch.byPhase,
    latency: { before: latency(runs.before!), outage: latency(runs.outage!), after: latency(runs.after!) },
    statuses: Object.fromEntries(wrkRuns.map((r, i) => [['pilot', 'before', 'outage', 'after'][i]!, { redirects: r.redirects, non3xx: r.non3xx, errors: r.errors }])),
    finalHealth: final,
  }
  const problems: string[] = []
  if (!servedConsistent) problems.push(`clickhouse: redirector served ${served}, clients saw ${seenByClients} (+ ${inFlightAtStop} in flight)`)
  if (!result.complete) problems.push(`clickhouse: ${stored.rows} rows stored of ${served} served within 60 s of the load`)
  if (!result.storedOnce) problems.push(`clickhouse: ${stored.rows} rows but ${stored.distinct} distinct click ids (stored more than once)`)
  for (const [name, r] of Object.entries(result.statuses)) {
    const errors = Object.values(r.errors).reduce((a, b) => a + b, 0)
    if (r.non3xx > 0 || errors > 0) problems.push(`clickhouse: wrk ${name}: ${r.non3xx} non-3xx, errors ${JSON.stringify(r.errors)}`)
  }
  log(
    `clickhouse part: ${stored.rows} rows (${stored.distinct} distinct) of ${served} served; ${completeAt === null ? 'NOT complete' : `complete ${result.completeAfterRestartMs} ms after the restart`}`,
  )
  return { result, problems }
}

// ---------------------------------------------------------------------------------------------------
// 2. Redis outage

interface Sample {
  /** ms since the load started, when the request was sent */
  at: number
  ms: number
  /** HTTP status, or 0 when the request failed (error holds why) */
  status: number
  error?: string
  warm: boolean
}

/** Open loop: one GET every 1000/rate ms, round robin over the aliases, each with a 5 s limit. */
async function pacedGets(baseUrl: string, aliases: string[], warm: Set<string>, rate: number, seconds: number): Promise<Sample[]> {
  const total = Math.round(rate * seconds)
  const interval = 1000 / rate
  const samples: Sample[] = []
  const pending: Promise<void>[] = []
  const started = performance.now()
  for (let i = 0; i < total; i++) {
    const wait = started + i * interval - performance.now()
    if (wait >= 1) await Bun.sleep(wait)
    const alias = aliases[i % aliases.length]!
    pending.push(
      (async () => {
        const sent = performance.now()
        const sample: Sample = { at: sent - started, ms: 0, status: 0, warm: warm.has(alias) }
        try {
          const response = await fetch(`${baseUrl}/${alias}`, { redirect: 'manual', signal: AbortSignal.timeout(5_000) })
          await response.arrayBuffer()
          sample.status = response.status
        } catch (error) {
          sample.error = (error as Error).name
        }
        sample.ms = performance.now() - sent
        samples.push(sample)
      })(),
    )
  }
  await Promise.all(pending)
  return samples
}

function latencyOf(samples: Sample[]) {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b)
  return {
    n: sorted.length,
    p50Ms: round2(percentile(sorted, 0.5)),
    p99Ms: round2(percentile(sorted, 0.99)),
    maxMs: round2(sorted.at(-1) ?? Number.NaN),
    over1s: sorted.filter((ms) => ms > 1000).length,
  }
}

function countBy<T>(items: T[], key: (t: T) => string | number): Record<string, number> {
  const out: Record<string, number> = {}
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1
  return out
}

function counterDelta(after: ResolverFigures, before: ResolverFigures): ResolverFigures {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - before[k as keyof ResolverFigures]])) as unknown as ResolverFigures
}

async function redisOutage(ctx: {
  redirectUrl: string
  redisUrl: string
  chdbUrl: string
  seed: (count: number) => Promise<SeededLinks>
  alive: () => void
  stopRedis: () => Promise<void>
  startRedis: () => Promise<void>
}) {
  const { redirectUrl } = ctx
  const pushedAtStart = (await health(redirectUrl)).clicks.pushed
  const seeded = await ctx.seed(options.links)
  const half = seeded.aliases.slice(0, Math.ceil(seeded.aliases.length / 2))
  const warmSet = new Set(half)
  const keysIn = async (aliases: string[]) => {
    const client = new Redis(ctx.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2_000 })
    client.on('error', () => {})
    try {
      await client.connect()
      return Number(await client.exists(...aliases.map((a) => linkCacheKey(seeded.domain, a))))
    } finally {
      client.disconnect()
    }
  }

  // Warm half: a miss resolved through the API, which writes the link through to Redis (not awaited).
  const warm = await warmCache(redirectUrl, half)
  if (warm.redirects !== half.length) throw new Error(`redis part warm-up: ${warm.redirects} of ${half.length} redirected; others ${JSON.stringify(warm.failures)}`)
  let warmInRedis = 0
  for (let i = 0; i < 20 && warmInRedis < half.length; i++) {
    warmInRedis = await keysIn(half)
    if (warmInRedis < half.length) await Bun.sleep(100)
  }
  const coldInRedis = await keysIn(seeded.aliases.slice(half.length))
  // For comparison: the same client and rate with Redis up, on the warm half only (so the cold half stays cold).
  const reference = await pacedGets(redirectUrl, half, warmSet, options.redisRate, REFERENCE_S)
  let clientRedirects = warm.redirects + reference.filter((s) => s.status === 302).length

  const before = await health(redirectUrl)
  await ctx.stopRedis()
  log(`redis part: ${seeded.ids.length} links, ${half.length} warm (${warmInRedis} in Redis, ${coldInRedis} cold ones in Redis); Redis stopped, ${options.redisRate} req/s for ${options.redisLoadS} s`)
  const samples = await pacedGets(redirectUrl, seeded.aliases, warmSet, options.redisRate, options.redisLoadS)
  ctx.alive()
  const during = await health(redirectUrl)
  clientRedirects += samples.filter((s) => s.status === 302).length

  // Redis back (empty: no persistence). Once the L1 entries of the outage have expired, every link is
  // requested (a miss in Redis, resolved by the API, which writes it through again), and once more after
  // another L1 lifetime: those must be Redis hits, i.e. the redirector reads Redis again.
  await ctx.startRedis()
  const restartedAt = performance.now()
  await Bun.sleep(L1_TTL_MS + 500)
  const beforeA = await health(redirectUrl)
  const roundA = await warmCache(redirectUrl, seeded.aliases)
  await Bun.sleep(200)
  const inRedisAfterA = await keysIn(seeded.aliases)
  await Bun.sleep(L1_TTL_MS + 500)
  const beforeB = await health(redirectUrl)
  const roundB = await warmCache(redirectUrl, seeded.aliases)
  const afterB = await health(redirectUrl)
  clientRedirects += roundA.redirects + roundB.redirects
  ctx.alive()

  // The clicks of this part, too: every 302 above was a GET, so each must be one row.
  const client = createClient({ url: ctx.chdbUrl, request_timeout: 5_000 })
  let stored = { rows: 0, distinct: 0 }
  let servedHere = -1
  try {
    const deadline = performance.now() + 15_000
    while (performance.now() < deadline) {
      stored = await clicksOf(client, seeded.idPrefix)
      servedHere = (await health(redirectUrl)).clicks.pushed - pushedAtStart
      if (stored.rows === servedHere) break
      await Bun.sleep(100)
    }
  } finally {
    await client.close()
  }

  const statuses = countBy(samples, (s) => (s.status === 0 ? `error:${s.error}` : s.status))
  const firstL1 = samples.filter((s) => s.at < L1_TTL_MS)
  const result = {
    links: seeded.ids.length,
    warm: half.length,
    warmInRedisBeforeStop: warmInRedis,
    coldInRedisBeforeStop: coldInRedis,
    load: { rate: options.redisRate, seconds: options.redisLoadS, requests: samples.length },
    statuses,
    referenceStatuses: countBy(reference, (s) => (s.status === 0 ? `error:${s.error}` : s.status)),
    latency: {
      [`reference (Redis up, warm links, ${REFERENCE_S} s)`]: latencyOf(reference),
      all: latencyOf(samples),
      warm: latencyOf(samples.filter((s) => s.warm)),
      cold: latencyOf(samples.filter((s) => !s.warm)),
      [`first ${L1_TTL_MS / 1000} s`]: latencyOf(firstL1),
      [`after ${L1_TTL_MS / 1000} s`]: latencyOf(samples.filter((s) => s.at >= L1_TTL_MS)),
    },
    resolverDuringOutage: counterDelta(during.cache, before.cache),
    afterRestart: {
      roundA: { redirects: roundA.redirects, failures: roundA.failures, resolver: counterDelta(beforeB.cache, beforeA.cache), linksInRedisAfter: inRedisAfterA },
      roundB: { redirects: roundB.redirects, failures: roundB.failures, resolver: counterDelta(afterB.cache, beforeB.cache) },
      firstRoundAfterMs: Math.round(L1_TTL_MS + 500),
      restartedToCheckedMs: Math.round(performance.now() - restartedAt),
    },
    clicks: { clientRedirects, servedByRedirector: servedHere, rowsStored: stored.rows, distinctClickIds: stored.distinct },
  }
  const problems: string[] = []
  const non302 = samples.filter((s) => s.status !== 302).length
  if (reference.some((s) => s.status !== 302)) problems.push(`redis: with Redis up, not every request was a 302: ${JSON.stringify(result.referenceStatuses)}`)
  if (non302 > 0) problems.push(`redis: ${non302} of ${samples.length} requests during the outage were not 302: ${JSON.stringify(statuses)}`)
  if (result.latency.all.over1s > 0) problems.push(`redis: ${result.latency.all.over1s} requests took over 1 s (max ${result.latency.all.maxMs} ms)`)
  if (roundA.redirects !== seeded.aliases.length || roundB.redirects !== seeded.aliases.length) {
    problems.push(`redis: after the restart ${roundA.redirects} / ${roundB.redirects} of ${seeded.aliases.length} redirected (${JSON.stringify(roundA.failures)} / ${JSON.stringify(roundB.failures)})`)
  }
  if (result.afterRestart.roundB.resolver.cacheHits !== seeded.aliases.length) {
    problems.push(
      `redis: after the restart the redirector found ${result.afterRestart.roundB.resolver.cacheHits} of ${seeded.aliases.length} links in Redis (cacheErrors ${result.afterRestart.roundB.resolver.cacheErrors})`,
    )
  }
  if (servedHere !== clientRedirects || stored.rows !== servedHere || stored.distinct !== stored.rows) {
    problems.push(`redis: clicks: clients saw ${clientRedirects} redirects, redirector served ${servedHere}, ClickHouse has ${stored.rows} rows (${stored.distinct} distinct)`)
  }
  log(
    `redis part: ${samples.length} requests, statuses ${JSON.stringify(statuses)}, p99 ${result.latency.all.p99Ms} ms, max ${result.latency.all.maxMs} ms; after restart ${roundB.redirects}/${seeded.aliases.length} redirect, ${result.afterRestart.roundB.resolver.cacheHits} Redis hits`,
  )
  return { result, problems }
}

// ---------------------------------------------------------------------------------------------------
// Summary

function printSummary(s: {
  ok: boolean
  problems: string[]
  clickhouseOutage: Awaited<ReturnType<typeof clickhouseOutage>>['result']
  redisOutage: Awaited<ReturnType<typeof redisOutage>>['result']
}) {
  const n = (x: number) => Math.round(x).toLocaleString('en-US')
  const c = s.clickhouseOutage
  const r = s.redisOutage
  const ref = r.latency[`reference (Redis up, warm links, ${REFERENCE_S} s)`]!
  const lat = (name: string, l: { rps: number; p50Ms: number; p99Ms: number; maxMs: number }) =>
    `    ${name.padEnd(8)}${n(l.rps).padStart(7)}/s  p50 ${l.p50Ms.toFixed(2).padStart(6)}  p99 ${l.p99Ms.toFixed(2).padStart(6)}  max ${l.maxMs.toFixed(2).padStart(7)} ms`
  const lines = [
    '',
    `outage benchmark: ${s.ok ? 'all checks passed' : `${s.problems.length} problem(s)`}`,
    `ClickHouse outage: ${c.load.phasesS.outage} s under ${n(c.load.targetRps)} req/s (wrk -c${c.load.connections}), ${c.links} links; stand-in down ${(c.standIn.downMs / 1000).toFixed(1)} s (stop ${c.standIn.stopTookMs} ms, start ${c.standIn.startTookMs} ms)`,
    `  redirects served ${n(c.redirectsServed)} (clients saw ${n(c.seenByClients)}, ${n(c.inFlightAtStop)} in flight${c.servedConsistent ? '' : ' - INCONSISTENT'}); during the outage ${n(c.outageWindow.redirects)} (pushed ${n(c.outageWindow.pushedAtStart)} → ${n(c.outageWindow.pushedAtEnd)})`,
    `  rows stored ${n(c.rowsStored)}, distinct click ids ${n(c.distinctClickIds)} (${c.storedOnce ? 'each stored once' : 'DUPLICATES'}); ${c.complete ? `rows = served ${n(c.completeAfterLoadEndMs!)} ms after the load stopped (${n(c.completeAfterRestartMs!)} ms after the restart)` : 'NOT complete within 60 s of the load'}`,
    `  backlog (every click served before the restart) written ${c.backlogWrittenAfterRestartMs === null ? 'NOT seen during the load' : `${n(c.backlogWrittenAfterRestartMs)} ms`} after the restart`,
    `  during the outage: max pendingRows ${n(c.duringOutage.maxPendingRows)}, max spooledFiles ${c.duringOutage.maxSpooledFiles}, ${c.outageWindow.failedInsertAttempts} failed insert attempts`,
    '  redirector latency (wrk):',
    lat('before', c.latency.before),
    lat('outage', c.latency.outage),
    lat('after', c.latency.after),
    `Redis outage: ${r.load.requests} GETs at ${r.load.rate}/s for ${r.load.seconds} s over ${r.links} links (${r.warm} warm)`,
    `  statuses ${JSON.stringify(r.statuses)}; p50 ${r.latency.all.p50Ms} ms, p99 ${r.latency.all.p99Ms} ms, max ${r.latency.all.maxMs} ms, over 1 s: ${r.latency.all.over1s}`,
    `  (same client with Redis up, warm links: p50 ${ref.p50Ms} ms, p99 ${ref.p99Ms} ms, max ${ref.maxMs} ms; during the outage warm p50 ${r.latency.warm.p50Ms}, cold p50 ${r.latency.cold.p50Ms} ms)`,
    `  resolver during the outage: ${Object.entries(r.resolverDuringOutage)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `  after the restart: ${r.afterRestart.roundA.redirects}/${r.links} then ${r.afterRestart.roundB.redirects}/${r.links} redirect, the second round ${r.afterRestart.roundB.resolver.cacheHits} Redis hits, ${r.afterRestart.roundB.resolver.cacheErrors} Redis errors`,
    `  clicks: ${n(r.clicks.rowsStored)} rows (${n(r.clicks.distinctClickIds)} distinct) of ${n(r.clicks.servedByRedirector)} served, clients saw ${n(r.clicks.clientRedirects)}`,
    ...s.problems.map((p) => `PROBLEM ${p}`),
    '',
  ]
  console.log(lines.join('\n'))
}

await bench.run(main)
