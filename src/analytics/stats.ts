// Link statistics from ClickHouse (docs/statistics.md#statistics). Pure: a client and plain arguments in, plain data out;
// the route adds alias, domain and created_at from the link record. Every value reaches ClickHouse as a
// {name:Type} parameter; the only SQL chosen in code is the bucket function, picked from a fixed table.
import type { ClickHouseClient } from '@clickhouse/client'

export const PERIODS = ['24H', '7D', '30D', 'ALL'] as const
export type Period = (typeof PERIODS)[number]
export type Bucket = 'hour' | 'day' | 'month'

export interface StatsOptions {
  linkId: string
  period: Period
  includeBots?: boolean
  /** Entries kept in each breakdown (countries, referrers, …). */
  top?: number
  /** The clock, for tests; defaults to the current time. */
  now?: Date
}

export interface LinkStats {
  period: Period
  bucket: Bucket
  total_clicks: number
  last_clicked_at: string | null
  timeseries: { date: string; clicks: number }[]
  countries: { country: string; clicks: number }[]
  referrers: { referrer: string; clicks: number }[]
  devices: { device: string; clicks: number }[]
  browsers: { browser: string; clicks: number }[]
  os: { os: string; clicks: number }[]
  routingStats: Record<string, unknown>[]
  routingSummary: Record<string, unknown>
}

const HOUR = 3_600_000
const DAY = 24 * HOUR
export const DEFAULT_TOP = 10
/** ALL switches from daily to monthly buckets past this span: ~3 months of days still reads as a chart. */
export const ALL_DAILY_MAX_DAYS = 92

// Fixed windows end with the bucket holding `now`: 24 hourly, 7 or 30 daily buckets.
const WINDOWS: Record<Exclude<Period, 'ALL'>, { bucket: 'hour' | 'day'; count: number }> = {
  '24H': { bucket: 'hour', count: 24 },
  '7D': { bucket: 'day', count: 7 },
  '30D': { bucket: 'day', count: 30 },
}
const BUCKET_SQL: Record<Exclude<Bucket, 'month'>, string> = { hour: 'toStartOfHour', day: 'toStartOfDay' }

// Reads the hourly rollup clicks_hourly_v1 (migrations/clickhouse/0003_clicks_hourly.sql), never the raw rows:
// ~100 rollup rows an hour for a busy link instead of thousands of clicks. One statement: the breakdowns
// with a window function keeping each one's top N, and the timeseries from the 'total' rows.
const FILTER = `link_id = {linkId:String}
    AND hour >= toDateTime({fromS:Int64}, 'UTC') AND hour < toDateTime({toS:Int64}, 'UTC')
    AND (is_bot = 0 OR {includeBots:UInt8} = 1)`
function statsQuery(bucket: 'hour' | 'day'): string {
  return `
SELECT dim, key, clicks, last_ms FROM (
  SELECT dim, key, clicks, last_ms FROM (
    SELECT dim, value AS key, sum(clicks) AS clicks, toUnixTimestamp64Milli(max(last_click)) AS last_ms,
           row_number() OVER (PARTITION BY dim ORDER BY clicks DESC, key) AS rank
    FROM clicks_hourly_v1 WHERE ${FILTER}
    GROUP BY dim, value
  ) WHERE dim = 'total' OR rank <= {top:UInt32}
  UNION ALL
  -- UNION ALL matches columns by position; these aliases differ so none shadows a column in WHERE.
  SELECT 'timeseries' AS series, toString(toUnixTimestamp(${BUCKET_SQL[bucket]}(hour))) AS bucket_key,
         sum(clicks) AS bucket_clicks, 0 AS no_last
  FROM clicks_hourly_v1 WHERE ${FILTER} AND dim = 'total'
  GROUP BY bucket_key
)
ORDER BY dim, clicks DESC, key`
}

type Row = { dim: string; key: string; clicks: string | number; last_ms: string | number }

export async function linkStats(client: ClickHouseClient, opts: StatsOptions): Promise<LinkStats> {
  const now = (opts.now ?? new Date()).getTime()
  const window = opts.period === 'ALL' ? null : WINDOWS[opts.period]
  const fromMs = window ? floorTo(now, window.bucket) - (window.count - 1) * unit(window.bucket) : 0
  const toMs = window ? floorTo(now, window.bucket) + unit(window.bucket) : now + 1
  const result = await client.query({
    query: statsQuery(window?.bucket ?? 'day'),
    query_params: {
      linkId: opts.linkId,
      fromS: Math.floor(fromMs / 1000),
      toS: Math.ceil(toMs / 1000),
      includeBots: opts.includeBots ? 1 : 0,
      top: opts.top ?? DEFAULT_TOP,
    },
    format: 'JSONEachRow',
  })
  const rows = await result.json<Row>()
  const by = (dim: string) => rows.filter((r) => r.dim === dim)
  const total = by('total')[0]
  const totalClicks = Number(total?.clicks ?? 0)
  const counts = new Map(by('timeseries').map((r) => [Number(r.key) * 1000, Number(r.clicks)]))

  let bucket: Bucket
  let starts: number[]
  if (window) {
    bucket = window.bucket
    const step = unit(window.bucket)
    starts = Array.from({ length: window.count }, (_, i) => fromMs + i * step)
  } else {
    // ALL: from the first click's day to today, rolled up into months when the span is long.
    const first = counts.size ? Math.min(...counts.keys()) : null
    const days = first === null ? 0 : (floorTo(now, 'day') - first) / DAY + 1
    bucket = days > ALL_DAILY_MAX_DAYS ? 'month' : 'day'
    starts = first === null ? [] : bucketStarts(first, now, bucket)
    if (bucket === 'month') rollUpMonths(counts)
  }
  const named = <K extends string>(dim: string, name: K) => by(dim).map((r) => ({ [name]: r.key, clicks: Number(r.clicks) }) as { [P in K]: string } & { clicks: number })

  return {
    period: opts.period,
    bucket,
    total_clicks: totalClicks,
    last_clicked_at: totalClicks > 0 ? new Date(Number(total!.last_ms)).toISOString() : null,
    timeseries: starts.map((t) => ({ date: new Date(t).toISOString(), clicks: counts.get(t) ?? 0 })),
    countries: named('countries', 'country'),
    referrers: named('referrers', 'referrer'),
    devices: named('devices', 'device'),
    browsers: named('browsers', 'browser'),
    os: named('os', 'os'),
    routingStats: [],
    routingSummary: {},
  }
}

/** What a Free account sees in its 403 body: human clicks of all time and the last one. */
export async function basicTotals(client: ClickHouseClient, linkId: string): Promise<{ total_clicks: number; last_clicked_at: string | null }> {
  const found = (await clickCounts(client, [linkId])).get(linkId)!
  return { total_clicks: found.clicks, last_clicked_at: found.last_clicked_at }
}

/** Human clicks of all time and the last click for many links in one query (link records in lists). */
export async function clickCounts(client: ClickHouseClient, linkIds: readonly string[]): Promise<Map<string, { clicks: number; last_clicked_at: string | null }>> {
  const out = new Map(linkIds.map((id) => [id, { clicks: 0, last_clicked_at: null as string | null }]))
  if (linkIds.length === 0) return out
  const result = await client.query({
    query: `SELECT link_id, sum(clicks) AS clicks, toUnixTimestamp64Milli(max(last_click)) AS last_ms
            FROM clicks_hourly_v1 WHERE link_id IN {linkIds:Array(String)} AND dim = 'total' AND is_bot = 0
            GROUP BY link_id`,
    query_params: { linkIds: [...new Set(linkIds)] },
    format: 'JSONEachRow',
  })
  for (const r of await result.json<{ link_id: string; clicks: string | number; last_ms: string | number }>()) {
    out.set(r.link_id, { clicks: Number(r.clicks), last_clicked_at: new Date(Number(r.last_ms)).toISOString() })
  }
  return out
}

function unit(bucket: 'hour' | 'day'): number {
  return bucket === 'hour' ? HOUR : DAY
}

function floorTo(ms: number, bucket: Bucket): number {
  if (bucket === 'hour') return ms - (ms % HOUR)
  if (bucket === 'day') return ms - (ms % DAY)
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
}

function bucketStarts(firstMs: number, nowMs: number, bucket: Bucket): number[] {
  const starts: number[] = []
  for (let t = floorTo(firstMs, bucket); t <= nowMs; ) {
    starts.push(t)
    if (bucket === 'month') {
      const d = new Date(t)
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
    } else t += unit(bucket)
  }
  return starts
}

/** Replaces daily counts by monthly sums, keyed by each month's first day. */
function rollUpMonths(counts: Map<number, number>): void {
  const days = [...counts]
  counts.clear()
  for (const [day, n] of days) {
    const month = floorTo(day, 'month')
    counts.set(month, (counts.get(month) ?? 0) + n)
  }
}
