// Measures the link statistics for one link with 10 million clicks on chDB, the target being a
// median under 200 ms: the query alone (linkStats, src/analytics/stats.ts) and the real endpoint
// GET /api/v1/links/{alias}/stats?period=… end to end in-process (createApi + app.handle: API key auth,
// per-key rate limit, link lookup in PGlite, statistics, conversions section, JSON response). Opens the
// data set bench/clicks-generate.ts wrote, or generates it first when the directory holds none or one
// this code can no longer read (see datasetProblem).
//
//   bun bench/stats.ts [--runs 7] [--warmup 2] [--include-bots] [clicks-generate options: --dir --clicks …]
// Writes bench/results/stats-latest.json (git-ignored). Exits 1 when a period's median (query or endpoint) misses the
// target or the totals differ.
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { openAdapters } from '../src/adapters'
import { linkStats, PERIODS } from '../src/analytics/stats'
import { createApi } from '../src/app'
import { parseConfig } from '../core/config'
import { openDatabase } from '../src/db/client'
import { accounts, links } from '../src/db/schema'
import { createApiKey } from '../src/modules/keys/verdicts'
import { datasetProblem, generateClicks, openClickHouse, parseDatasetOptions, readDataset, resetDataset } from './clicks-generate'

/** The target: statistics of a 10 M-click link in under 200 ms (median of several runs). */
const TARGET_MEDIAN_MS = 200

const args = process.argv.slice(2)
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`)
  const n = i >= 0 ? Number(args[i + 1]) : fallback
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer`)
  return n
}
const runs = Math.max(1, flag('runs', 7))
const warmup = flag('warmup', 2)
const includeBots = args.includes('--include-bots')
const options = parseDatasetOptions(args)

// chDB binds one data directory per process: the generator and the queries share this one client.
const client = await openClickHouse(options.dir)
let dataset = readDataset(options.dir)
const problem = dataset ? await datasetProblem(client, dataset) : null
if (problem) {
  console.error(`data set in ${options.dir} is not usable (${problem}): dropping it`)
  await resetDataset(client, options.dir)
  dataset = null
}
if (!dataset) {
  console.error(`no data set in ${options.dir}: generating ${options.clicks.toLocaleString('en')} clicks`)
  dataset = await generateClicks(client, options)
}
const rowsResult = await client.query({
  query: 'SELECT count() AS n, countIf(is_bot = 0) AS humans FROM clicks_v1 WHERE link_id = {linkId:String}',
  query_params: { linkId: dataset.targetLinkId },
  format: 'JSONEachRow',
})
const raw = (await rowsResult.json<{ n: string; humans: string }>())[0]
const linkRows = Number(raw?.n ?? 0)
// The statistics read the hourly rollup; its ALL total must equal the raw rows it summarises.
const rawHumans = Number(raw?.humans ?? 0)
console.log(`data set ${options.dir}: ${linkRows.toLocaleString('en')} clicks for ${dataset.targetLinkId}`)

// Measured as of the generation time, so every period holds the clicks the generator spread over it.
const now = new Date(dataset.endMs)
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!

// The endpoint, built as test/support/api.ts builds it: PGlite in memory, in-process adapters, and this
// process's chDB client (chDB binds one data directory per process). Its clock is the generation time
// too, so the endpoint counts the same clicks as the query alone.
const IP_HEADER = 'x-bench-client-ip'
const database = await openDatabase({ databaseUrl: undefined, dataDir: ':memory:' })
await database.migrate()
const adapters = await openAdapters({ redisUrl: undefined })
const app = createApi({
  config: parseConfig({
    SHORT_DOMAIN: 'sho.rt',
    SHORT_BASE_URL: 'https://sho.rt',
    PUBLIC_API_URL: 'https://api.sho.rt',
    TRUSTED_IP_HEADER: IP_HEADER,
    INTERNAL_SECRET: 'bench-internal-secret-0123456789abcdef',
    IP_HASH_SECRET: 'bench-ip-hash-secret-0123456789abcdef',
  }),
  db: database.db,
  kv: adapters.kv,
  limiter: adapters.limiter,
  idempotency: adapters.idempotency,
  clickhouse: client,
  now: () => dataset.endMs,
})
const accountId = 'acct_bench_stats'
await database.db.insert(accounts).values({ id: accountId, email: 'bench-stats@example.test', plan: 'pro' })
const alias = 'bench-stats-10m'
await database.db.insert(links).values({ id: dataset.targetLinkId, domain: 'sho.rt', alias, url: 'https://example.com/bench', accountId })

/** Per-key limit on Pro; each period gets a fresh key, so warm-up + runs must stay under it. */
const PRO_REQUESTS_PER_MINUTE = 120
if (warmup + runs > PRO_REQUESTS_PER_MINUTE) throw new Error(`--warmup + --runs must not exceed ${PRO_REQUESTS_PER_MINUTE} (per-key rate limit)`)

interface Timing {
  medianMs: number
  p90Ms: number
  minMs: number
  maxMs: number
  runsMs: number[]
}
async function measure<T>(call: () => Promise<T>): Promise<{ timing: Timing; last: T }> {
  for (let i = 0; i < warmup; i++) await call()
  const times: number[] = []
  let last!: T
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    last = await call()
    times.push(performance.now() - t0)
  }
  const sorted = [...times].sort((a, b) => a - b)
  const timing = {
    medianMs: round(percentile(sorted, 0.5)),
    p90Ms: round(percentile(sorted, 0.9)),
    minMs: round(sorted[0]!),
    maxMs: round(sorted.at(-1)!),
    runsMs: times.map(round),
  }
  return { timing, last }
}

const periods = []
for (const period of PERIODS) {
  const query = await measure(() => linkStats(client, { linkId: dataset.targetLinkId, period, includeBots, now }))
  const key = await createApiKey(database.db, accountId, now)
  const url = `http://localhost/api/v1/links/${alias}/stats?period=${period}${includeBots ? '&include_bots=true' : ''}`
  // The whole answer: routing, auth, rate limit, link lookup, statistics + conversions, JSON body read.
  const endpoint = await measure(async () => {
    const response = await app.handle(new Request(url, { headers: { authorization: `Bearer ${key}`, [IP_HEADER]: '198.51.100.7' } }))
    const text = await response.text()
    if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${text.slice(0, 300)}`)
    return JSON.parse(text) as { data: { total_clicks: number } }
  })
  const last = query.last
  const result = {
    period,
    bucket: last.bucket,
    buckets: last.timeseries.length,
    totalClicks: last.total_clicks,
    endpointTotalClicks: endpoint.last.data.total_clicks,
    // Query alone: the top-level figures, as before; the endpoint's under `endpoint`.
    ...query.timing,
    endpoint: endpoint.timing,
  }
  periods.push(result)
  const e = result.endpoint
  console.log(
    `${period.padEnd(4)} ${result.totalClicks.toLocaleString('en').padStart(11)} clicks in ${String(result.buckets).padStart(3)} ${result.bucket} buckets: ` +
      `query median ${result.medianMs} ms, p90 ${result.p90Ms} ms (min ${result.minMs}, max ${result.maxMs}) | ` +
      `endpoint median ${e.medianMs} ms, p90 ${e.p90Ms} ms (min ${e.minMs}, max ${e.maxMs}) | ${runs} runs`,
  )
  if (result.endpointTotalClicks !== result.totalClicks) console.log(`MISMATCH: ${period} endpoint total ${result.endpointTotalClicks} ≠ query total ${result.totalClicks}`)
}
console.log('\nperiod | clicks | query median | query p90 | endpoint median | endpoint p90')
for (const p of periods) console.log(`${p.period} | ${p.totalClicks.toLocaleString('en')} | ${p.medianMs} ms | ${p.p90Ms} ms | ${p.endpoint.medianMs} ms | ${p.endpoint.p90Ms} ms`)
await database.close()
await client.close()

const allTotal = periods.find((p) => p.period === 'ALL')!.totalClicks
const expectedAll = includeBots ? linkRows : rawHumans
if (allTotal !== expectedAll) console.log(`MISMATCH: ALL total ${allTotal} ≠ ${expectedAll} rows in clicks_v1`)
const pass = allTotal === expectedAll && periods.every((p) => p.endpointTotalClicks === p.totalClicks && p.medianMs < TARGET_MEDIAN_MS && p.endpoint.medianMs < TARGET_MEDIAN_MS)
const report = {
  at: new Date().toISOString(),
  machine: { cpus: cpus().length, bun: Bun.version },
  engine: 'chdb',
  endpoint: { path: `/api/v1/links/${alias}/stats?period=…`, via: 'createApi(…).handle(new Request(…)), PGlite in memory, in-process adapters' },
  dataset: { ...dataset, linkRows, linkHumanRows: rawHumans },
  includeBots,
  runs,
  warmup,
  targetMedianMs: TARGET_MEDIAN_MS,
  pass,
  periods,
}
const out = join(import.meta.dir, 'results')
mkdirSync(out, { recursive: true })
writeFileSync(join(out, 'stats-latest.json'), `${JSON.stringify(report, null, 2)}\n`)
console.log(`${pass ? 'PASS' : 'FAIL'}: every median (query and endpoint) under ${TARGET_MEDIAN_MS} ms → bench/results/stats-latest.json`)
process.exit(pass ? 0 : 1)

function round(ms: number): number {
  return Math.round(ms * 10) / 10
}
