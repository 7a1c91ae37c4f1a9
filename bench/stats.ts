// Measures the link statistics query (src/analytics/stats.ts) for one link with 10 million clicks on
// chDB, the target being a median under 200 ms. Opens the data set bench/clicks-generate.ts
// wrote, or generates it first when the directory holds none.
//
//   bun bench/stats.ts [--runs 7] [--warmup 2] [--include-bots] [clicks-generate options: --dir --clicks …]
// Writes bench/results/stats-latest.json. Exits 1 when a period's median misses the target.
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { linkStats, PERIODS } from '../src/analytics/stats'
import { generateClicks, openClickHouse, parseDatasetOptions, readDataset } from './clicks-generate'

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
const periods = []
for (const period of PERIODS) {
  const query = () => linkStats(client, { linkId: dataset.targetLinkId, period, includeBots, now })
  for (let i = 0; i < warmup; i++) await query()
  const times: number[] = []
  let last = await query()
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    last = await query()
    times.push(performance.now() - t0)
  }
  const sorted = [...times].sort((a, b) => a - b)
  const result = {
    period,
    bucket: last.bucket,
    buckets: last.timeseries.length,
    totalClicks: last.total_clicks,
    medianMs: round(percentile(sorted, 0.5)),
    p90Ms: round(percentile(sorted, 0.9)),
    minMs: round(sorted[0]!),
    maxMs: round(sorted.at(-1)!),
    runsMs: times.map(round),
  }
  periods.push(result)
  console.log(
    `${period.padEnd(4)} ${result.totalClicks.toLocaleString('en').padStart(11)} clicks in ${String(result.buckets).padStart(3)} ${result.bucket} buckets: ` +
      `median ${result.medianMs} ms, p90 ${result.p90Ms} ms (min ${result.minMs}, max ${result.maxMs}, ${runs} runs)`,
  )
}
await client.close()

const allTotal = periods.find((p) => p.period === 'ALL')!.totalClicks
const expectedAll = includeBots ? linkRows : rawHumans
if (allTotal !== expectedAll) console.log(`MISMATCH: ALL total ${allTotal} ≠ ${expectedAll} rows in clicks_v1`)
const pass = allTotal === expectedAll && periods.every((p) => p.medianMs < TARGET_MEDIAN_MS)
const report = {
  at: new Date().toISOString(),
  machine: { cpus: cpus().length, bun: Bun.version },
  engine: 'chdb',
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
writeFileSync(join(out, 'stats-latest.json'), JSON.stringify(report, null, 2) + '\n')
console.log(`${pass ? 'PASS' : 'FAIL'}: every median under ${TARGET_MEDIAN_MS} ms → bench/results/stats-latest.json`)
process.exit(pass ? 0 : 1)

function round(ms: number): number {
  return Math.round(ms * 10) / 10
}
