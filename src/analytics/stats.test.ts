import { beforeAll, describe, expect, test } from 'bun:test'
import type { ClickHouseClient } from '@clickhouse/client'
import { insertTestClicks, testClickHouse, type TestClick } from '../../test/support/clickhouse'
import { ALL_DAILY_MAX_DAYS, basicTotals, clickCounts, linkStats } from './stats'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const NOW = new Date('2026-03-10T15:20:00.000Z')
const at = (msAgo: number) => NOW.getTime() - msAgo

let client: ClickHouseClient
let seq = 0
const newLink = () => `link_stats_${process.pid}_${Date.now()}_${seq++}`

const insert = (linkId: string, clicks: TestClick[], dedupToken?: string) => insertTestClicks(client, linkId, clicks, dedupToken)

beforeAll(async () => {
  client = await testClickHouse()
})

describe('linkStats periods', () => {
  test('24H: 24 hourly buckets ending with the current hour, empty ones 0', async () => {
    const link = newLink()
    await insert(link, [{ at: at(0) }, { at: at(10 * 60_000) }, { at: at(5 * HOUR) }, { at: at(23 * HOUR) }, { at: at(24 * HOUR) }])
    const s = await linkStats(client, { linkId: link, period: '24H', now: NOW })
    expect(s.bucket).toBe('hour')
    expect(s.timeseries.length, JSON.stringify(s)).toBe(24)
    expect(s.timeseries[0]!.date).toBe('2026-03-09T16:00:00.000Z')
    expect(s.timeseries[23]).toEqual({ date: '2026-03-10T15:00:00.000Z', clicks: 2 })
    expect(s.timeseries[18]).toEqual({ date: '2026-03-10T10:00:00.000Z', clicks: 1 })
    expect(s.timeseries[0]!.clicks).toBe(1) // 23 h ago falls in 16:00 of the day before
    expect(s.timeseries.filter((b) => b.clicks === 0).length).toBe(21)
    expect(s.total_clicks).toBe(4) // 24 h ago is in the 15:00 bucket of yesterday: outside
    expect(s.last_clicked_at).toBe(NOW.toISOString())
  })

  test('7D and 30D: daily buckets ending today', async () => {
    const link = newLink()
    await insert(link, [{ at: at(0) }, { at: at(6 * DAY) }, { at: at(7 * DAY) }, { at: at(29 * DAY) }, { at: at(30 * DAY) }])
    const week = await linkStats(client, { linkId: link, period: '7D', now: NOW })
    expect(week.bucket).toBe('day')
    expect(week.timeseries.length).toBe(7)
    expect(week.timeseries[0]).toEqual({ date: '2026-03-04T00:00:00.000Z', clicks: 1 })
    expect(week.timeseries[6]).toEqual({ date: '2026-03-10T00:00:00.000Z', clicks: 1 })
    expect(week.total_clicks).toBe(2)
    const month = await linkStats(client, { linkId: link, period: '30D', now: NOW })
    expect(month.timeseries.length).toBe(30)
    expect(month.timeseries[0]).toEqual({ date: '2026-02-09T00:00:00.000Z', clicks: 1 })
    expect(month.timeseries.reduce((n, b) => n + b.clicks, 0)).toBe(month.total_clicks)
    expect(month.total_clicks).toBe(4)
  })

  test('ALL over a short span: daily buckets from the first click to today', async () => {
    const link = newLink()
    await insert(link, [{ at: at(10 * DAY) }, { at: at(10 * DAY + HOUR) }, { at: at(0) }])
    const s = await linkStats(client, { linkId: link, period: 'ALL', now: NOW })
    expect(s.bucket).toBe('day')
    expect(s.timeseries.length, JSON.stringify(s.timeseries)).toBe(11)
    expect(s.timeseries[0]).toEqual({ date: '2026-02-28T00:00:00.000Z', clicks: 2 })
    expect(s.timeseries.slice(1, 10).every((b) => b.clicks === 0)).toBe(true)
    expect(s.total_clicks).toBe(3)
  })

  test('ALL over a long span: monthly buckets, each month summed', async () => {
    const link = newLink()
    await insert(link, [{ at: Date.UTC(2025, 7, 15) }, { at: Date.UTC(2025, 7, 31) }, { at: Date.UTC(2026, 1, 1) }, { at: at(0) }])
    expect((NOW.getTime() - Date.UTC(2025, 7, 15)) / DAY).toBeGreaterThan(ALL_DAILY_MAX_DAYS)
    const s = await linkStats(client, { linkId: link, period: 'ALL', now: NOW })
    expect(s.bucket).toBe('month')
    expect(s.timeseries.map((b) => b.date.slice(0, 7))).toEqual(['2025-08', '2025-09', '2025-10', '2025-11', '2025-12', '2026-01', '2026-02', '2026-03'])
    expect(s.timeseries.map((b) => b.clicks)).toEqual([2, 0, 0, 0, 0, 0, 1, 1])
  })
})

describe('linkStats breakdowns', () => {
  test('bots are left out unless asked for', async () => {
    const link = newLink()
    await insert(link, [{ at: at(HOUR) }, { at: at(0), is_bot: 1, country: 'XX', browser: 'Googlebot' }])
    const humans = await linkStats(client, { linkId: link, period: '24H', now: NOW })
    expect(humans.total_clicks).toBe(1)
    expect(humans.countries).toEqual([{ country: 'US', clicks: 1 }])
    expect(humans.last_clicked_at).toBe(new Date(at(HOUR)).toISOString())
    const all = await linkStats(client, { linkId: link, period: '24H', now: NOW, includeBots: true })
    expect(all.total_clicks).toBe(2)
    expect(all.browsers).toEqual([
      { browser: 'Chrome', clicks: 1 },
      { browser: 'Googlebot', clicks: 1 },
    ])
    expect((await basicTotals(client, link)).total_clicks).toBe(1)
  })

  test('each breakdown is ordered by clicks, then name, and cut to the top N', async () => {
    const link = newLink()
    const clicks: TestClick[] = [
      ...Array.from({ length: 3 }, () => ({ at: at(0), country: 'DE', referrer_host: 'news.ycombinator.com', device_type: 'mobile', browser: 'Safari', os: 'iOS' })),
      ...Array.from({ length: 2 }, () => ({ at: at(0), country: 'FR', referrer_host: '' })),
      { at: at(0), country: 'BR', referrer_host: 't.co' },
      { at: at(0), country: 'AR', referrer_host: 't.co' },
    ]
    await insert(link, clicks)
    const s = await linkStats(client, { linkId: link, period: '7D', now: NOW, top: 3 })
    expect(s.countries).toEqual([
      { country: 'DE', clicks: 3 },
      { country: 'FR', clicks: 2 },
      { country: 'AR', clicks: 1 },
    ])
    expect(s.referrers).toEqual([
      { referrer: 'news.ycombinator.com', clicks: 3 },
      { referrer: '', clicks: 2 },
      { referrer: 't.co', clicks: 2 },
    ])
    expect(s.devices).toEqual([
      { device: 'desktop', clicks: 4 },
      { device: 'mobile', clicks: 3 },
    ])
    expect(s.os).toEqual([
      { os: 'Windows', clicks: 4 },
      { os: 'iOS', clicks: 3 },
    ])
    expect(s.timeseries.length).toBe(7) // the top N never cuts the timeseries
    expect(s.routingStats).toEqual([])
    expect(s.routingSummary).toEqual({})
  })

  test('a link without clicks: zeros, filled buckets, empty breakdowns', async () => {
    const link = newLink()
    const s = await linkStats(client, { linkId: link, period: '24H', now: NOW })
    expect(s.total_clicks).toBe(0)
    expect(s.last_clicked_at).toBeNull()
    expect(s.timeseries.length).toBe(24)
    expect(s.timeseries.every((b) => b.clicks === 0)).toBe(true)
    expect([s.countries, s.referrers, s.devices, s.browsers, s.os]).toEqual([[], [], [], [], []])
    expect((await linkStats(client, { linkId: link, period: 'ALL', now: NOW })).timeseries).toEqual([])
    expect(await basicTotals(client, link)).toEqual({ total_clicks: 0, last_clicked_at: null })
  })

  test('a link id is a value, never SQL', async () => {
    const s = await linkStats(client, { linkId: "x' OR 1=1 --", period: 'ALL', now: NOW })
    expect(s.total_clicks).toBe(0)
  })
})

describe('clickCounts', () => {
  test('counts human clicks of many links in one query, zero for unknown ones', async () => {
    const [a, b, c] = [newLink(), newLink(), newLink()]
    await insert(a, [{ at: at(DAY) }, { at: at(HOUR) }, { at: at(0), is_bot: 1 }])
    await insert(b, [{ at: at(400 * DAY) }])
    const counts = await clickCounts(client, [a, b, c])
    expect(counts.get(a)).toEqual({ clicks: 2, last_clicked_at: new Date(at(HOUR)).toISOString() })
    expect(counts.get(b)).toEqual({ clicks: 1, last_clicked_at: new Date(at(400 * DAY)).toISOString() })
    expect(counts.get(c)).toEqual({ clicks: 0, last_clicked_at: null })
    expect((await clickCounts(client, [])).size).toBe(0)
  })
})

describe('hourly rollup', () => {
  test('a retried batch (same dedup token) is counted once, as in clicks_v1', async () => {
    const link = newLink()
    const batch = [{ at: at(HOUR) }, { at: at(0) }]
    await insert(link, batch, `${link}_batch`)
    await insert(link, batch, `${link}_batch`)
    const raw = await client.query({ query: 'SELECT count() AS n FROM clicks_v1 WHERE link_id = {link:String}', query_params: { link }, format: 'JSONEachRow' })
    expect(Number((await raw.json<{ n: string }>())[0]!.n)).toBe(2)
    expect((await linkStats(client, { linkId: link, period: '24H', now: NOW })).total_clicks).toBe(2)
  })
})
