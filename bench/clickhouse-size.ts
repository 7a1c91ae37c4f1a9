// Measures what docs/scaling.md sizes a ClickHouse cluster with: the bytes one click takes in clicks_v1
// (and in its hourly rollup) once compressed and merged, and the clicks one core inserts a second.
// Rows are shaped like the redirector's (core/clicks.ts): real click and link id formats, a keyed
// 128-bit IP hash, user agents, referrers and countries from weighted pools, links of uneven popularity;
// each batch is inserted as the embedded redirector does (TabSeparated bytes straight to chDB, with a
// dedup token and the view's dedup setting), so the rollup's materialized view runs on every batch.
//
//   bun bench/clickhouse-size.ts [--rows 2000000] [--batch 50000] [--links 10000] [--days 30] [--dir /tmp/x]
//       [--no-rollup]   (drops the view first: what the raw insert costs without the hourly rollup)
//
// Insert rate: the CPU time chDB spends on each insert (this process's CPU while it awaits the insert:
// the JavaScript thread is idle then), so a figure per core that does not depend on what else the
// machine runs; wall time is printed beside it.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClickHouse, migrateClickHouse, rawInsertOf } from '../src/adapters/clickhouse'
import { newClickId } from '../core/click-id'
import { CLICK_COLUMNS, CLICKS_TABLE, clickTimestamp } from '../core/clicks'

const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`)
  const n = i >= 0 ? Number(args[i + 1]?.replaceAll('_', '')) : fallback
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`)
  return n
}
const ROWS = option('rows', 2_000_000)
/** CLICK_BATCH_SIZE's default: a batch as a busy redirector sends it. */
const BATCH = option('batch', 50_000)
const LINKS = option('links', 10_000)
const DAYS = option('days', 30)
const dirArg = args.includes('--dir') ? args[args.indexOf('--dir') + 1]! : undefined
const dir = dirArg ?? mkdtempSync(join(tmpdir(), 'clickhouse-size-'))

// [value, weight] pools; the user agents carry the enrichment the encoder would derive from them.
const AGENTS: [string, string, string, string, number][] = [
  ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1', 'mobile', 'Mobile Safari', 'iOS', 20],
  ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36', 'mobile', 'Chrome', 'Android', 18],
  ['Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36', 'mobile', 'Samsung Internet', 'Android', 6],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36', 'desktop', 'Chrome', 'Windows', 18],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0', 'desktop', 'Edge', 'Windows', 6],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15', 'desktop', 'Safari', 'macOS', 8],
  ['Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0', 'desktop', 'Firefox', 'Linux', 3],
  ['Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1', 'tablet', 'Mobile Safari', 'iOS', 3],
  ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'bot', '', '', 2],
  ['Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', 'bot', '', '', 1],
]
const REFERRERS: [string, number][] = [
  ['', 35],
  ['https://t.co/', 12],
  ['https://www.google.com/', 10],
  ['https://www.linkedin.com/feed/', 6],
  ['https://news.ycombinator.com/item?id=', 4],
  ['https://www.facebook.com/', 8],
  ['https://l.instagram.com/', 6],
  ['https://www.reddit.com/r/programming/comments/', 5],
  ['https://github.com/', 4],
  ['https://mail.google.com/', 10],
]
const COUNTRIES: [string, number][] = [
  ['US', 30],
  ['GB', 8],
  ['DE', 8],
  ['FR', 6],
  ['IN', 10],
  ['BR', 6],
  ['CA', 4],
  ['JP', 4],
  ['NL', 3],
  ['ES', 3],
  ['IT', 3],
  ['AU', 3],
  ['PL', 2],
  ['MX', 3],
  ['', 4],
]

function sampler<T>(pool: [T, number][]): () => T {
  const total = pool.reduce((sum, [, w]) => sum + w, 0)
  return () => {
    let r = Math.random() * total
    for (const [value, weight] of pool) if ((r -= weight) < 0) return value
    return pool[0]![0]
  }
}
const agent = sampler(AGENTS.map((a) => [a, a[4]] as [typeof a, number]))
const referrer = sampler(REFERRERS)
const country = sampler(COUNTRIES)
const linkIds = Array.from({ length: LINKS }, () => `link_${randomBytes(16).toString('base64url')}`)
// Popularity falls off as 1/rank (Zipf): a few links take most clicks, as shared links do.
const link = sampler(linkIds.map((id, rank) => [id, 1 / (rank + 1)] as [string, number]))
// Returning visitors: a pool of client addresses, each a fixed keyed hash.
const ipHashes = Array.from({ length: 200_000 }, () => randomBytes(16).toString('hex'))
const domains = ['sho.rt', 'sho.rt', 'sho.rt', 'go.example.com']

function tsvBatch(rows: number, fromMs: number, spanMs: number): Uint8Array {
  const lines: string[] = []
  for (let i = 0; i < rows; i++) {
    const linkId = link()
    const at = Math.floor(fromMs + (spanMs * i) / rows)
    const [ua, device, browser, os] = agent()
    const ref = referrer()
    const refUrl = ref.endsWith('=') || ref.endsWith('/comments/') ? `${ref}${Math.floor(Math.random() * 1e6)}` : ref
    const refHost = ref ? new URL(ref).host : ''
    const bot = device === 'bot' ? 1 : 0
    const utm = Math.random() < 0.25 ? ['newsletter', 'email', 'launch'] : ['', '', '']
    lines.push(
      [
        newClickId(linkId, at),
        linkId,
        domains[i % domains.length],
        linkId.slice(5, 12),
        clickTimestamp(at),
        refUrl,
        ua,
        ipHashes[Math.floor(Math.random() * ipHashes.length)],
        country(),
        device,
        browser,
        os,
        bot,
        bot ? (ua.split(/[ /;(]/).find((t) => /bot/i.test(t)) ?? 'bot') : '',
        refHost,
        ...utm,
        '',
        '',
      ].join('\t'),
    )
  }
  return new TextEncoder().encode(`${lines.join('\n')}\n`)
}

const client = await createClickHouse({ clickhouseUrl: undefined, dataDir: dir })
await migrateClickHouse(client)
const rollup = !args.includes('--no-rollup')
if (!rollup) await client.command({ query: 'DROP VIEW clicks_hourly_mv_v1' })
const insert = rawInsertOf(client)!
const endMs = Date.now()
const spanMs = DAYS * 86_400_000
const batches = Math.ceil(ROWS / BATCH)
let cpuUs = 0
let wallMs = 0
let inserted = 0
for (let b = 0; b < batches; b++) {
  const rows = Math.min(BATCH, ROWS - inserted)
  // Batches in time order, as clicks arrive: each covers its slice of the --days window.
  const values = tsvBatch(rows, endMs - spanMs + (spanMs * b) / batches, spanMs / batches)
  const cpu = process.cpuUsage()
  const started = performance.now()
  await insert({
    table: CLICKS_TABLE,
    columns: [...CLICK_COLUMNS],
    format: 'TabSeparated',
    values,
    settings: { insert_deduplicate: 1, insert_deduplication_token: `size-${b}`, deduplicate_blocks_in_dependent_materialized_views: 1 },
  })
  wallMs += performance.now() - started
  const used = process.cpuUsage(cpu)
  cpuUs += used.user + used.system
  inserted += rows
  process.stderr.write(`\rinserted ${inserted.toLocaleString('en')} / ${ROWS.toLocaleString('en')} clicks (${Math.round((inserted / ROWS) * 100)} %)`)
}
process.stderr.write('\nmerging (OPTIMIZE TABLE … FINAL), as a server does over time\n')
await client.command({ query: 'OPTIMIZE TABLE clicks_v1 FINAL' })
await client.command({ query: 'OPTIMIZE TABLE clicks_hourly_v1 FINAL' })

const parts = await client.query({
  query: `SELECT table, sum(rows) AS rows, sum(data_compressed_bytes) AS compressed, sum(data_uncompressed_bytes) AS uncompressed, sum(bytes_on_disk) AS on_disk
          FROM system.parts WHERE database = currentDatabase() AND active AND table IN ('clicks_v1', 'clicks_hourly_v1') GROUP BY table ORDER BY table`,
  format: 'JSONEachRow',
})
const columns = await client.query({
  query: `SELECT name, data_compressed_bytes AS compressed, data_uncompressed_bytes AS uncompressed FROM system.columns
          WHERE database = currentDatabase() AND table = 'clicks_v1' ORDER BY data_compressed_bytes DESC`,
  format: 'JSONEachRow',
})
type Sizes = { compressed: string; uncompressed: string }
const tables = await parts.json<Sizes & { table: string; rows: string; on_disk: string }>()
const perColumn = await columns.json<Sizes & { name: string }>()
const perClick = (bytes: string) => Number(bytes) / inserted

console.log(`\n${inserted.toLocaleString('en')} clicks, ${LINKS.toLocaleString('en')} links, ${DAYS} days, batches of ${BATCH.toLocaleString('en')}`)
console.log(
  `insert: ${Math.round(inserted / (cpuUs / 1e6)).toLocaleString('en')} clicks per CPU-second (${rollup ? 'rollup view included' : 'no rollup view'}); wall ${Math.round(inserted / (wallMs / 1000)).toLocaleString('en')} clicks/s`,
)
for (const t of tables) {
  console.log(
    `${t.table}: ${Number(t.rows).toLocaleString('en')} rows; per click ${perClick(t.compressed).toFixed(1)} B compressed, ${perClick(t.uncompressed).toFixed(1)} B uncompressed (ratio ${(Number(t.uncompressed) / Number(t.compressed)).toFixed(1)}), ${perClick(t.on_disk).toFixed(1)} B on disk`,
  )
  console.log(`  per billion clicks: ${((perClick(t.on_disk) * 1e9) / 1024 ** 3).toFixed(1)} GiB on disk, one replica`)
}
console.log('clicks_v1 columns, compressed bytes per click:')
console.log(perColumn.map((c) => `  ${c.name.padEnd(14)} ${perClick(c.compressed).toFixed(2).padStart(6)} B  (${perClick(c.uncompressed).toFixed(1)} B raw)`).join('\n'))
await client.close()
if (!dirArg) rmSync(dir, { recursive: true, force: true })
