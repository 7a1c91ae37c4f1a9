// Generates a statistics data set in a chDB data directory: --clicks clicks (default 10,000,000) for one
// target link, plus --other-clicks spread over --links other links, over the last --days days. ClickHouse
// writes the rows itself (INSERT … SELECT … FROM numbers), a chunk at a time, so 10 M rows take seconds
// rather than the minutes a client-side insert would.
//
//   bun bench/clicks-generate.ts [--dir /tmp/linkservice-stats-bench] [--clicks 10000000]
//       [--links 1000] [--other-clicks 1000000] [--days 90] [--bot-percent 3]
// The target link id and the generation time are written to <dir>/stats-dataset.json.
import type { ClickHouseClient } from '@clickhouse/client'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClickHouse, migrateClickHouse } from '../src/adapters/clickhouse'

export interface DatasetOptions {
  dir: string
  clicks: number
  links: number
  otherClicks: number
  days: number
  botPercent: number
}
export interface Dataset extends DatasetOptions {
  targetLinkId: string
  /** Newest possible click time: the bench measures as of this instant, so 24H is never empty. */
  endMs: number
  seconds: number
}

export const TARGET_LINK_ID = 'link_bench_stats_target'
export const DEFAULTS: DatasetOptions = {
  dir: join(tmpdir(), 'linkservice-stats-bench'),
  clicks: 10_000_000,
  links: 1000,
  otherClicks: 1_000_000,
  days: 90,
  botPercent: 3,
}
/** Rows per INSERT … SELECT: small enough for a progress line every second or so. */
const CHUNK = 1_000_000

// Weighted pools: a value repeated k times is picked with weight k. Shapes follow what shorteners
// publish (mostly US and Europe, mostly direct and social traffic, a majority of mobile clicks).
const COUNTRIES = ['US', 'US', 'US', 'US', 'US', 'GB', 'GB', 'DE', 'DE', 'FR', 'IN', 'IN', 'BR', 'CA', 'JP', 'NL', 'ES', 'IT', 'AU', 'PL', 'MX', 'SE', '']
const REFERRERS = [
  '',
  '',
  '',
  '',
  't.co',
  't.co',
  'www.google.com',
  'www.google.com',
  'news.ycombinator.com',
  'www.linkedin.com',
  'www.facebook.com',
  'l.instagram.com',
  'www.reddit.com',
  'github.com',
  'mail.google.com',
]
const DEVICES = ['mobile', 'mobile', 'mobile', 'desktop', 'desktop', 'tablet']
const BROWSERS = ['Chrome', 'Chrome', 'Chrome', 'Safari', 'Safari', 'Mobile Safari', 'Edge', 'Firefox', 'Samsung Internet', 'Opera']
const OSES = ['iOS', 'iOS', 'Android', 'Android', 'Android', 'Windows', 'Windows', 'macOS', 'Linux']

const pick = (values: string[], seed: number) => `[${values.map((v) => `'${v}'`).join(',')}][1 + rand(${seed}) % ${values.length}]`

// Constants only (the pools above, written by us); row values come from ClickHouse's generators and the
// per-run numbers are {name:Type} parameters.
const INSERT = `
INSERT INTO clicks_v1 (click_id, link_id, domain, alias, timestamp, referrer, user_agent, ip_hash, country,
                       device_type, browser, os, is_bot, bot_reason, referrer_host, utm_source, utm_medium, utm_campaign)
SELECT
  concat('clk_', {prefix:String}, toString(number)) AS click_id,
  if({linkCount:UInt32} = 0, {linkId:String}, concat({linkId:String}, '_', toString(rand(1) % {linkCount:UInt32}))) AS link_id,
  'sho.rt', 'bench',
  -- pow(u, 1.6) leans towards 0: recent days get more clicks than old ones, as a shared link does.
  fromUnixTimestamp64Milli(toInt64({endMs:Int64} - {spanMs:Int64} * pow(randCanonical(2), 1.6)), 'UTC') AS timestamp,
  if(referrer_host = '', '', concat('https://', referrer_host, '/')) AS referrer,
  if(is_bot = 1, 'Googlebot/2.1 (+http://www.google.com/bot.html)', 'Mozilla/5.0') AS user_agent,
  lower(hex(sipHash128(number, {prefix:String}))) AS ip_hash,
  ${pick(COUNTRIES, 3)} AS country,
  ${pick(DEVICES, 4)} AS device_type,
  ${pick(BROWSERS, 5)} AS browser,
  ${pick(OSES, 6)} AS os,
  toUInt8(rand(7) % 100 < {botPercent:UInt8}) AS is_bot,
  if(is_bot = 1, 'isbot', '') AS bot_reason,
  ${pick(REFERRERS, 8)} AS referrer_host,
  if(rand(9) % 4 = 0, 'newsletter', '') AS utm_source,
  if(utm_source = '', '', 'email') AS utm_medium,
  if(utm_source = '', '', 'launch') AS utm_campaign
FROM numbers({start:UInt64}, {count:UInt64})`

export function readDataset(dir: string): Dataset | null {
  const file = join(dir, 'stats-dataset.json')
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Dataset) : null
}

/**
 * Why a data set written by an earlier version cannot be measured, or null when it can. openClickHouse
 * has applied every migration by then (0003's backfill fills the hourly rollup of older data sets), so
 * what is left to check is the description file and that the rollup the statistics read agrees with the
 * raw clicks of the target link.
 */
export async function datasetProblem(client: ClickHouseClient, dataset: Dataset): Promise<string | null> {
  if (typeof dataset.targetLinkId !== 'string' || !Number.isFinite(dataset.endMs)) return 'stats-dataset.json lacks targetLinkId or endMs'
  const result = await client.query({
    query: `SELECT (SELECT count() FROM clicks_v1 WHERE link_id = {linkId:String}) AS raw,
                   (SELECT sum(clicks) FROM clicks_hourly_v1 WHERE link_id = {linkId:String} AND dim = 'total') AS rollup`,
    query_params: { linkId: dataset.targetLinkId },
    format: 'JSONEachRow',
  })
  const row = (await result.json<{ raw: string; rollup: string }>())[0]
  const raw = Number(row?.raw ?? 0)
  const rollup = Number(row?.rollup ?? 0)
  if (raw === 0) return `no clicks for ${dataset.targetLinkId} in clicks_v1`
  if (rollup !== raw) return `clicks_hourly_v1 holds ${rollup} clicks for the link, clicks_v1 ${raw}`
  return null
}

/** Empties the clicks tables (the schema stays, migrated) and forgets the data set description. */
export async function resetDataset(client: ClickHouseClient, dir: string): Promise<void> {
  await client.command({ query: 'TRUNCATE TABLE IF EXISTS clicks_v1' })
  await client.command({ query: 'TRUNCATE TABLE IF EXISTS clicks_hourly_v1' })
  rmSync(join(dir, 'stats-dataset.json'), { force: true })
}

export async function openClickHouse(dir: string): Promise<ClickHouseClient> {
  mkdirSync(dir, { recursive: true })
  const client = await createClickHouse({ clickhouseUrl: undefined, dataDir: dir })
  await migrateClickHouse(client)
  return client
}

export async function generateClicks(client: ClickHouseClient, options: DatasetOptions): Promise<Dataset> {
  const started = performance.now()
  const endMs = Date.now()
  const spanMs = options.days * 24 * 3_600_000
  const parts = [
    { label: 'target', linkId: TARGET_LINK_ID, linkCount: 0, rows: options.clicks },
    { label: 'others', linkId: 'link_bench_stats_other', linkCount: options.links, rows: options.otherClicks },
  ]
  const total = options.clicks + options.otherClicks
  let done = 0
  for (const part of parts) {
    for (let start = 0; start < part.rows; start += CHUNK) {
      const count = Math.min(CHUNK, part.rows - start)
      await client.command({
        query: INSERT,
        query_params: { ...part, prefix: `${part.label}_`, start, count, endMs, spanMs, botPercent: options.botPercent },
      })
      done += count
      const secs = (performance.now() - started) / 1000
      process.stderr.write(`\rgenerated ${done.toLocaleString('en')} / ${total.toLocaleString('en')} clicks (${Math.round((done / total) * 100)} %, ${secs.toFixed(1)} s)`)
    }
  }
  process.stderr.write('\nmerging parts (OPTIMIZE TABLE clicks_v1, clicks_hourly_v1 FINAL)\n')
  // A server merges in the background over time; merge now so every run measures the same layout.
  await client.command({ query: 'OPTIMIZE TABLE clicks_v1 FINAL' })
  await client.command({ query: 'OPTIMIZE TABLE clicks_hourly_v1 FINAL' })
  const dataset: Dataset = { ...options, targetLinkId: TARGET_LINK_ID, endMs, seconds: (performance.now() - started) / 1000 }
  writeFileSync(join(options.dir, 'stats-dataset.json'), JSON.stringify(dataset, null, 2))
  return dataset
}

export function parseDatasetOptions(args: string[]): DatasetOptions {
  const value = (name: string) => {
    const i = args.indexOf(`--${name}`)
    return i >= 0 ? args[i + 1] : undefined
  }
  const int = (name: string, fallback: number) => {
    const raw = value(name)
    if (raw === undefined) return fallback
    const n = Number(raw.replaceAll('_', ''))
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer, got ${raw}`)
    return n
  }
  return {
    dir: value('dir') ?? DEFAULTS.dir,
    clicks: int('clicks', DEFAULTS.clicks),
    links: Math.max(1, int('links', DEFAULTS.links)),
    otherClicks: int('other-clicks', DEFAULTS.otherClicks),
    days: Math.max(1, int('days', DEFAULTS.days)),
    botPercent: Math.min(100, int('bot-percent', DEFAULTS.botPercent)),
  }
}

if (import.meta.main) {
  const options = parseDatasetOptions(process.argv.slice(2))
  if (readDataset(options.dir)) {
    console.error(`${options.dir} already holds a data set; remove it or pass another --dir`)
    process.exit(1)
  }
  const client = await openClickHouse(options.dir)
  const dataset = await generateClicks(client, options)
  console.log(JSON.stringify(dataset, null, 2))
  await client.close()
}
