// A shorten's latency while a million-host block list refreshes, end to end. src/api.ts runs as its own
// process (Postgres and Redis from scripts/services.sh, or DATABASE_URL and REDIS_URL; the chDB stand-in
// for ClickHouse; plan limits lifted, 20 Free accounts' mk_ keys). Its BLOCKLIST_URLS is a loopback
// server of this bench that answers every fetch with the next version of a --hosts list (200, a new
// ETag): the versions alternate between the list and the list with --changed-percent of its names
// replaced, so each refresh downloads, parses, builds and diffs a whole list, swaps it in, and its change
// listener (the takedown) looks up each new name's stored links in Postgres.
//
// 1. The API without a list: wrk at full rate, then --reference of shortens at half that rate (or
//    --rate); its RSS after start and after the load.
// 2. The API with the list: from its spawn until the list is active (its load log line) and until
//    /health answers; RSS. Then --duration of shortens at the same rate, open loop from a worker thread,
//    each request timed, BLOCKLIST_REFRESH=--refresh. Each request falls in one phase: "refresh" when it
//    overlapped a fetch-to-swap (the list server's GET to the API's load log line), "takedown" when it
//    overlapped the takedown after a swap, else "quiet", the reference. The takedown's end is seen as the
//    moment one link made for it goes disabled: at each fetch the bench shortens a name the version adds
//    (not listed until the swap) and polls that link's state every 250 ms.
// Checks: every shorten 2xx; a listed host and a name of the last version swapped in answer 400
// DESTINATION_BLOCKED; every refresh's takedown disabled its link; at least one refresh in the window.
//
//   bun bench/blocklist-load.ts [--hosts 1000000] [--changed-percent 1] [--refresh 30s] [--duration 150s]
//                               [--reference 20s] [--rate <shortens/s>] [--accounts 20] [--profile <dir>]
//
// --refresh: 30 s by default because a takedown of 10,000 new names takes 5-14 s here, so a shorter
// interval leaves no quiet time between refreshes (10 s is the schema's minimum). --profile starts the
// listed API under bun --cpu-prof --cpu-prof-md into <dir> (its figures are then not comparable).
// About four minutes. Writes bench/results/blocklist-load-latest.json (git-ignored); exits 1 when a check
// fails. The latencies are reported, not held to a target.
import { inArray } from 'drizzle-orm'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { openDatabase, type Db } from '../src/db/client'
import { accounts, links } from '../src/db/schema'
import { createApiKey } from '../src/modules/keys/verdicts'
import { spawnChdbHttp } from '../test/support/chdb-http-process'
import { benchRun, cpuSeconds, freePorts, log, optionReader, startChild, startServices, waitFor, type Child, type Cleanup } from './procs'
import { writeApiScript } from './wrk-api'
import { durationMs, killRunningWrk, runWrk } from './wrk'

const ROOT = join(import.meta.dir, '..')
/** No plan limit gets in the way of the load (as bench/api.ts). */
const LIFTED = String(1_000_000_000)
/** Unmeasured load on the listed API before the window: JIT and connection pools warm, as in the reference. */
const WARMUP_S = 5

const LABELS = ['shop', 'login', 'secure', 'account', 'update', 'mail', 'cdn', 'files', 'verify', 'pay', 'web', 'app']
const TLDS = ['com', 'net', 'org', 'info', 'xyz', 'top', 'online', 'site', 'co.uk', 'com.br']

/**
 * The i-th synthetic listed name, 15-35 characters. Distinct up to i = 3,000,000: i times an odd number
 * is exact in a double there, and modulo 2^32 no two i share it. Generation 1 gives another name ('-r'
 * is no base-36 digit, so it is no generation-0 name either).
 */
export function hostName(i: number, generation: 0 | 1 = 0): string {
  const id = ((i * 2_654_435_761) >>> 0).toString(36)
  const name = `${LABELS[i % LABELS.length]}-${id}${generation ? '-r' : ''}.${TLDS[i % TLDS.length]}`
  return i % 4 === 0 ? `${LABELS[(i >> 2) % LABELS.length]}.${name}` : name
}

/** A version of the list: every name of generation 0, except every `replacedEvery`-th index in `generation`. */
export function listBody(hosts: number, replacedEvery: number, generation: 0 | 1): Uint8Array {
  const lines = [`# synthetic block list for bench/blocklist-load.ts, generation ${generation}`]
  for (let i = 0; i < hosts; i++) lines.push(hostName(i, i % replacedEvery === 0 ? generation : 0))
  return new TextEncoder().encode(`${lines.join('\n')}\n`)
}

export interface Sample {
  /** epoch ms the request was sent */
  at: number
  ms: number
  /** 0 when no answer came */
  status: number
  /** The error code of a non-2xx answer, or why no answer came. */
  error?: string
}
export type Phase = 'quiet' | 'refresh' | 'takedown'
export interface Window {
  from: number
  to: number
  phase: Exclude<Phase, 'quiet'>
}

/** A request's phase: a refresh window it overlaps, else a takedown window, else quiet. */
export function phaseOf(sample: Sample, windows: Window[]): Phase {
  const end = sample.at + sample.ms
  const overlaps = (phase: Phase) => windows.some((w) => w.phase === phase && sample.at < w.to && end > w.from)
  return overlaps('refresh') ? 'refresh' : overlaps('takedown') ? 'takedown' : 'quiet'
}

/** p50, p99 (nearest rank), max, and the answers counted by status (and error code). */
export function summarise(samples: Sample[]) {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b)
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN
  const round = (ms: number) => Math.round(ms * 100) / 100
  const statuses: Record<string, number> = {}
  for (const s of samples) {
    const key = s.error ? `${s.status} ${s.error}` : String(s.status)
    statuses[key] = (statuses[key] ?? 0) + 1
  }
  return { requests: samples.length, p50Ms: round(rank(0.5)), p99Ms: round(rank(0.99)), maxMs: round(sorted.at(-1) ?? Number.NaN), statuses }
}
type Summary = ReturnType<typeof summarise>

interface LoadJob {
  url: string
  keys: string[]
  rate: number
  seconds: number
  /** In every destination, so no two runs shorten the same URL. */
  tag: string
}

/** Open loop: a shorten every 1000/rate ms whatever the answers, each timed from its send to its whole body. */
async function paced(job: LoadJob): Promise<Sample[]> {
  const samples: Sample[] = []
  const pending: Promise<void>[] = []
  const started = performance.now()
  for (let i = 0; i < Math.round(job.rate * job.seconds); i++) {
    const wait = started + (i * 1000) / job.rate - performance.now()
    if (wait >= 1) await Bun.sleep(wait)
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${job.keys[i % job.keys.length]}` }
    const body = JSON.stringify({ url: `https://site-${job.tag}-${i}.example.org/page` })
    pending.push(
      (async () => {
        const sent = performance.now()
        const sample: Sample = { at: performance.timeOrigin + sent, ms: 0, status: 0 }
        try {
          const response = await fetch(`${job.url}/api/v1/shorten`, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) })
          const text = await response.text()
          sample.status = response.status
          if (!response.ok) sample.error = /"error":"([A-Z_]+)"/.exec(text)?.[1] ?? text.slice(0, 80)
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

/** The load from a worker thread, so nothing the bench's own thread does (the list server, polls) delays a send or a read. */
function inWorker(job: LoadJob): Promise<Sample[]> {
  const worker = new Worker(import.meta.path)
  return new Promise((resolve, reject) => {
    worker.onmessage = (event) => (worker.terminate(), resolve(event.data as Sample[]))
    worker.onerror = (event) => reject(new Error(`load worker: ${event.message}`))
    worker.postMessage(job)
  })
}

/** VmRSS and VmHWM (its peak so far) of a process, MB. */
function memory(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const mb = (name: string) => Math.round(Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1]) / 102.4) / 10
  return { rssMb: mb('VmRSS'), peakMb: mb('VmHWM') }
}

/** The list loads the API logged (pino JSON: `time`, `msg`), with the load's own time from the line. */
function loadLines(child: Child): Array<{ at: number; loadMs: number }> {
  return readFileSync(child.logFile, 'utf8')
    .split('\n')
    .flatMap((line) => {
      const entry = line.startsWith('{') ? (JSON.parse(line) as { time?: string; msg?: string }) : {}
      const loaded = /^blocklists: url:.*: \d+ hosts and \d+ URL prefixes .* in (\d+) ms/.exec(entry.msg ?? '')
      return loaded && entry.time ? [{ at: Date.parse(entry.time), loadMs: Number(loaded[1]) }] : []
    })
}

/** Free accounts with an mk_ key each, made in Postgres as bench/api-seed.ts does; deleted (links with them) on cleanup. */
async function seedKeys(db: Db, count: number, cleanup: Cleanup): Promise<string[]> {
  const ids = Array.from({ length: count }, () => `account_bench_${crypto.randomUUID().replaceAll('-', '')}`)
  await db.insert(accounts).values(ids.map((id) => ({ id, email: `${id}@bench.example`, plan: 'free' as const })))
  cleanup.push('bench accounts (their links and keys with them)', () => db.delete(accounts).where(inArray(accounts.id, ids)))
  return Promise.all(ids.map((id) => createApiKey(db, id, new Date())))
}

/** Shortens `url`: the new link's alias, or the error code. */
async function shorten(apiUrl: string, key: string, url: string): Promise<{ alias?: string; error?: string }> {
  const response = await fetch(`${apiUrl}/api/v1/shorten`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ url }) })
  const body = (await response.json()) as { data?: { alias?: string }; error?: string }
  return body.data?.alias ? { alias: body.data.alias } : { error: body.error ?? `status ${response.status}` }
}

interface Refresh {
  version: number
  fetchAt: number
  /** the API's load log line: the new lists are in use */
  swapAt?: number
  loadMs?: number
  /** the link to a name this version adds, and when it went disabled (the takedown's end) */
  sentinel?: string
  disabledAt?: number
}

/**
 * The loopback list server: each GET the next version (alternating generations, ETag "v<n>"), and a
 * link to a name that version adds; after freeze(), 304 so no refresh starts while the last takedowns end.
 */
function listServer(bodies: readonly [Uint8Array, Uint8Array], hosts: number, replacedEvery: number, sentinelLink: (url: string) => Promise<string | undefined>) {
  const refreshes: Refresh[] = []
  let version = 0
  let frozen = false
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch() {
      if (frozen) return new Response(null, { status: 304, headers: { etag: `"v${version - 1}"` } })
      const served = version++
      if (served > 0) {
        const refresh: Refresh = { version: served, fetchAt: Date.now() }
        refreshes.push(refresh)
        // A replaced index, another each version: its name in this version's generation is listed only after the swap.
        const index = (served % Math.floor(hosts / replacedEvery)) * replacedEvery
        void sentinelLink(`https://s${served}.${hostName(index, (served % 2) as 0 | 1)}/`).then((alias) => (refresh.sentinel = alias))
      }
      return new Response(bodies[served % 2], { headers: { etag: `"v${served}"`, 'content-type': 'text/plain' } })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/hosts.txt`, refreshes, freeze: () => (frozen = true), stop: () => server.stop(true) }
}

/** Polls the sentinel links' state every 250 ms; stop() ends it. */
function watchTakedowns(db: Db, refreshes: Refresh[]) {
  let busy = false
  const timer = setInterval(async () => {
    const pending = refreshes.filter((r) => r.sentinel !== undefined && r.disabledAt === undefined)
    if (busy || pending.length === 0) return
    busy = true
    const rows = await db
      .select({ alias: links.alias, state: links.state })
      .from(links)
      .where(
        inArray(
          links.alias,
          pending.map((r) => r.sentinel!),
        ),
      )
      .catch(() => [])
    for (const row of rows) if (row.state === 'disabled') pending.find((r) => r.sentinel === row.alias)!.disabledAt = Date.now()
    busy = false
  }, 250)
  return { stop: () => clearInterval(timer) }
}

function options(args: string[]) {
  const { value, int } = optionReader(args)
  const hosts = int('--hosts', 1_000_000)
  if (hosts > 3_000_000) throw new Error('--hosts: at most 3000000 (the synthetic names are distinct up to there)')
  if (int('--changed-percent', 1) > 100) throw new Error('--changed-percent: at most 100')
  return {
    hosts,
    changedPercent: int('--changed-percent', 1),
    refresh: value('--refresh', '30s'),
    durationS: durationMs(value('--duration', '150s')) / 1000,
    referenceS: durationMs(value('--reference', '20s')) / 1000,
    rate: args.includes('--rate') ? int('--rate', 1) : null,
    accounts: int('--accounts', 20),
    profile: args.includes('--profile') ? value('--profile', '') : null,
  }
}

/** Both APIs, their load and the checks: the report. */
async function measure(bench: ReturnType<typeof benchRun>, opts: ReturnType<typeof options>) {
  const { workDir, cleanup } = bench
  const replacedEvery = Math.round(100 / opts.changedPercent)
  const bodies = [listBody(opts.hosts, replacedEvery, 0), listBody(opts.hosts, replacedEvery, 1)] as const
  log(`list: ${opts.hosts.toLocaleString('en')} hosts, ${Math.round(bodies[0].length / 1e5) / 10} MB; each refresh replaces ${Math.ceil(opts.hosts / replacedEvery).toLocaleString('en')}`)

  const { databaseUrl, redisUrl } = await startServices(cleanup)
  const chdb = await spawnChdbHttp({ path: join(workDir, 'clickhouse') })
  cleanup.push('chdb-http', () => chdb.stop())
  const database = await openDatabase({ databaseUrl, dataDir: workDir })
  cleanup.push('postgres client', () => database.close())
  cleanup.push('wrk', async () => killRunningWrk())

  const spawnApi = (name: string, env: Record<string, string>, flags: string[] = []) => {
    const [port] = freePorts(1) as [number]
    const child = startChild(name, [process.execPath, ...flags, join(ROOT, 'src/api.ts')], {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        REDIS_URL: redisUrl,
        CLICKHOUSE_URL: chdb.url,
        INTERNAL_SECRET: `bench-internal-${crypto.randomUUID()}`,
        IP_HASH_SECRET: `bench-iphash-${crypto.randomUUID()}`,
        PORT: String(port),
        PUBLIC_API_URL: `http://127.0.0.1:${port}`,
        SHORT_DOMAIN: 'sho.rt.bench',
        DATA_DIR: join(workDir, `data-${name}`),
        PLAN_FREE_REQUESTS_PER_MINUTE: LIFTED,
        PLAN_FREE_LINKS_PER_MONTH: LIFTED,
        ...env,
      },
      logFile: join(workDir, `${name}.log`),
      cwd: ROOT,
    })
    cleanup.push(name, () => child.stop())
    return { child, url: `http://127.0.0.1:${port}` }
  }

  // 1. No list: the sustained rate, the reference latency in another process, the memory without a list.
  const bare = spawnApi('api-no-list', {})
  await waitFor(bare.child, `${bare.url}/health`, 60_000)
  const bareAtStart = memory(bare.child.proc.pid)
  // After the API's start, which applies the tree's migrations to the database the accounts go in.
  const keys = await seedKeys(database.db, opts.accounts, cleanup)
  const fullRps = await fullRate(bare.url, keys, workDir)
  const rate = opts.rate ?? Math.round(fullRps / 2)
  const noList = summarise(await inWorker({ url: bare.url, keys, rate, seconds: opts.referenceS, tag: `nolist${Date.now()}` }))
  const bareAfter = memory(bare.child.proc.pid)
  await bare.child.stop()
  log(`no list: ${fullRps}/s at full rate; at ${rate}/s p50 ${noList.p50Ms} ms, p99 ${noList.p99Ms} ms; RSS ${bareAtStart.rssMb} MB after start, ${bareAfter.rssMb} MB after the load`)

  // 2. The list: its load at start, then the load through its refreshes.
  let apiUrl = ''
  const lists = listServer(bodies, opts.hosts, replacedEvery, async (url) => (await shorten(apiUrl, keys[0]!, url)).alias)
  cleanup.push('list server', async () => lists.stop())
  const spawnedAt = Date.now()
  const listEnv = { BLOCKLIST_URLS: lists.url, BLOCKLIST_ALLOW_HTTP_LOOPBACK: 'true', BLOCKLIST_REFRESH: opts.refresh }
  const listed = spawnApi('api-list', listEnv, opts.profile ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${opts.profile}`] : [])
  apiUrl = listed.url
  await waitFor(listed.child, `${listed.url}/health`, 120_000)
  const healthAfterMs = Date.now() - spawnedAt
  const [firstLoad] = loadLines(listed.child)
  if (!firstLoad) throw new Error(`the API answers /health but logged no list load; log ${listed.child.logFile}`)
  const startup = { listActiveAfterMs: firstLoad.at - spawnedAt, listLoadMs: firstLoad.loadMs, healthAfterMs }
  const listAtStart = memory(listed.child.proc.pid)
  log(`list active ${startup.listActiveAfterMs} ms after spawn (its load ${startup.listLoadMs} ms), /health ${healthAfterMs} ms; RSS ${listAtStart.rssMb} MB`)
  const listedHost = await shorten(listed.url, keys[0]!, `https://${hostName(1)}/x`)

  await inWorker({ url: listed.url, keys, rate, seconds: WARMUP_S, tag: `warm${Date.now()}` })
  const takedowns = watchTakedowns(database.db, lists.refreshes)
  cleanup.push('takedown poll', async () => takedowns.stop())
  let rssMaxMb = 0
  const sampler = setInterval(() => (rssMaxMb = Math.max(rssMaxMb, memory(listed.child.proc.pid).rssMb)), 250)
  const [loadFrom, cpuFrom] = [Date.now(), cpuSeconds(listed.child.proc.pid)]
  const samples = await inWorker({ url: listed.url, keys, rate, seconds: opts.durationS, tag: `list${loadFrom}` })
  const loadTo = Date.now()
  const apiCores = Math.round(((cpuSeconds(listed.child.proc.pid) - cpuFrom) / ((loadTo - loadFrom) / 1000)) * 100) / 100
  lists.freeze()
  clearInterval(sampler)
  const listAfter = memory(listed.child.proc.pid)
  // Takedowns still running end without the load; at most a minute.
  for (let waited = 0; waited < 60_000 && lists.refreshes.some((r) => r.sentinel && !r.disabledAt); waited += 500) await Bun.sleep(500)
  takedowns.stop()

  const { phases, inWindow, refreshFigures, timeline, slowest } = analyse(samples, lists.refreshes, loadLines(listed.child), loadFrom, loadTo)

  // A replaced name of the last version swapped in must be refused: the swap reached the API's checks.
  const active = inWindow.at(-1)?.version ?? 0
  const replacedName = await shorten(listed.url, keys[0]!, `https://${hostName(replacedEvery, (active % 2) as 0 | 1)}/x`)
  const checks = {
    everyShortenAnswered2xx: samples.every((s) => s.status >= 200 && s.status < 300),
    listedHostRefused: listedHost.error === 'DESTINATION_BLOCKED',
    lastVersionRefused: replacedName.error === 'DESTINATION_BLOCKED',
    everyTakedownDisabledItsLink: inWindow.every((r) => r.sentinel !== undefined && r.disabledAt !== undefined),
    refreshesInWindow: inWindow.length > 0,
  }
  const memoryFigures = { noList: { atStart: bareAtStart, afterLoad: bareAfter }, list: { atStart: listAtStart, afterLoad: listAfter, rssMaxSampledMb: rssMaxMb } }
  return {
    at: new Date().toISOString(),
    machine: { cpus: cpus().length, bun: Bun.version, loadAverage: loadavg() },
    options: { ...opts, rate, fullRps, warmupS: WARMUP_S },
    startup,
    memory: memoryFigures,
    noList,
    phases,
    apiCores,
    refreshesInWindow: inWindow.length,
    refreshes: refreshFigures,
    timeline,
    slowest,
    checks,
  }
}
type Report = Awaited<ReturnType<typeof measure>>

/**
 * Puts each request in its phase (each refresh's swap is the first load logged after its fetch) and
 * describes the window: the phases, each refresh, 5 s buckets (how a stall builds and drains), the slowest requests.
 */
function analyse(samples: Sample[], refreshes: Refresh[], loads: Array<{ at: number; loadMs: number }>, loadFrom: number, loadTo: number) {
  for (const refresh of refreshes) {
    const load = loads.find((l) => l.at >= refresh.fetchAt)
    Object.assign(refresh, { swapAt: load?.at, loadMs: load?.loadMs })
  }
  const swapped = refreshes.filter((r) => r.swapAt !== undefined)
  const windows: Window[] = swapped.flatMap((r) => [
    { from: r.fetchAt, to: r.swapAt!, phase: 'refresh' as const },
    { from: r.swapAt!, to: r.disabledAt ?? loadTo, phase: 'takedown' as const },
  ])
  const byPhase: Record<Phase, Sample[]> = { quiet: [], refresh: [], takedown: [] }
  for (const sample of samples) byPhase[phaseOf(sample, windows)].push(sample)
  const inWindow = swapped.filter((r) => r.swapAt! > loadFrom && r.fetchAt < loadTo)
  const seconds = (at: number) => Math.round((at - loadFrom) / 100) / 10
  const timeline = Array.from({ length: Math.ceil((loadTo - loadFrom) / 5000) }, (_, k) => {
    const bucket = samples.filter((s) => s.at >= loadFrom + k * 5000 && s.at < loadFrom + (k + 1) * 5000)
    const { requests, p50Ms, p99Ms } = summarise(bucket)
    return { atS: k * 5, requests, p50Ms, p99Ms, failed: bucket.filter((s) => s.error).length, phases: [...new Set(bucket.map((s) => phaseOf(s, windows)))].join(' ') }
  })
  return {
    phases: { quiet: summarise(byPhase.quiet), refresh: summarise(byPhase.refresh), takedown: summarise(byPhase.takedown), all: summarise(samples) },
    inWindow,
    refreshFigures: inWindow.map((r) => ({ atS: seconds(r.fetchAt), fetchToSwapMs: r.swapAt! - r.fetchAt, loggedLoadMs: r.loadMs, takedownMs: r.disabledAt ? r.disabledAt - r.swapAt! : null })),
    timeline,
    slowest: [...samples]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 10)
      .map((s) => ({ ms: Math.round(s.ms), atS: seconds(s.at), phase: phaseOf(s, windows) })),
  }
}

/** Shortens/s the API sustains: wrk -t1 -c32 for 8 s after 3 s unmeasured (bench/api.ts's settings). */
async function fullRate(url: string, keys: string[], workDir: string): Promise<number> {
  const requests = keys.flatMap((key, k) =>
    Array.from({ length: 10 }, (_, j) => ({
      method: 'POST' as const,
      path: '/api/v1/shorten',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ url: `https://wrk-${k}-${j}.example.org/` }),
    })),
  )
  const script = writeApiScript(join(workDir, 'shorten.lua'), requests)
  const wrk = (duration: string) => runWrk({ url, script, duration, label: `shorten full ${duration}`, logFile: join(workDir, 'wrk.log'), connections: 32, threads: 1 })
  await wrk('3s')
  const full = await wrk('8s')
  if (full.errors.status > 0 || full.requests === 0) throw new Error(`wrk at full rate: ${full.errors.status} of ${full.requests} answers failed`)
  return Math.round(full.rps)
}

function printSummary(r: Report) {
  const line = (name: string, s: Summary) => `  ${name.padEnd(24)} ${String(s.requests).padStart(6)} shortens  p50 ${s.p50Ms} ms  p99 ${s.p99Ms} ms  max ${s.maxMs} ms  ${JSON.stringify(s.statuses)}`
  const { memory: m } = r
  console.log(
    [
      `shorten at ${r.options.rate}/s (full rate ${r.options.fullRps}/s) for ${r.options.durationS} s; ${r.refreshes.length} refreshes of ${r.options.hosts.toLocaleString('en')} hosts (BLOCKLIST_REFRESH ${r.options.refresh}); the API used ${r.apiCores} cores`,
      line('no list (own process)', r.noList),
      line('quiet (the reference)', r.phases.quiet),
      line('during a refresh', r.phases.refresh),
      line('during a takedown', r.phases.takedown),
      line('whole window', r.phases.all),
      `  fetch to swap ${r.refreshes.map((x) => x.fetchToSwapMs).join(', ')} ms; takedown ${r.refreshes.map((x) => x.takedownMs ?? '?').join(', ')} ms`,
      `  list active ${r.startup.listActiveAfterMs} ms after spawn; RSS without the list ${m.noList.atStart.rssMb} / ${m.noList.afterLoad.rssMb} MB, with it ${m.list.atStart.rssMb} / ${m.list.afterLoad.rssMb} MB (after start / after the load), peak ${m.list.afterLoad.peakMb} MB`,
      `  checks: ${Object.entries(r.checks)
        .map(([k, v]) => `${k} ${v ? 'ok' : 'FAILED'}`)
        .join(', ')}; load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`,
    ].join('\n'),
  )
}

declare const self: Worker
if (!Bun.isMainThread) {
  self.onmessage = async (event: MessageEvent<LoadJob>) => self.postMessage(await paced(event.data))
} else if (import.meta.main) {
  const opts = options(process.argv.slice(2))
  const bench = benchRun('linkservice-blocklist-load-', 600_000)
  await bench.run(async () => {
    const report = await measure(bench, opts)
    mkdirSync(join(import.meta.dir, 'results'), { recursive: true })
    writeFileSync(join(import.meta.dir, 'results', 'blocklist-load-latest.json'), `${JSON.stringify(report, null, 2)}\n`)
    printSummary(report)
    if (!Object.values(report.checks).every(Boolean)) bench.fail()
  })
}
