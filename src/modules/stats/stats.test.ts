// GET /api/v1/links/{alias}/stats on Pro: periods, breakdowns, bots, custom domains, and conversions and
// revenue. Clicks are inserted straight into the shared chDB (test/support/suites/stats.ts).
import { beforeAll, describe, expect, test } from 'bun:test'
import { conversions } from '../../db/schema'
import { call, show, uniqueName } from '../../../test/support/api'
import { newAccount, newDomain } from '../../../test/support/fixtures'
import { api, createLink, DAY, insertClicks, setUp } from '../../../test/support/suites/stats'

beforeAll(setUp, 60_000) // the engines start in-process: seconds, more on a busy machine

describe('GET /api/v1/links/{alias}/stats: Pro', () => {
  test('7D by default: daily timeseries with empty days, breakdowns, bots left out, routing present', async () => {
    const pro = await newAccount(api.deps.db, 'pro')
    const link = await createLink(api.app, pro)
    await insertClicks(link.id, [
      { country: 'US', referrer_host: 'news.ycombinator.com' },
      { country: 'US', device_type: 'mobile', browser: 'Safari', os: 'iOS' },
      { country: 'DE', msAgo: 2 * DAY },
      { country: 'FR', msAgo: 40 * DAY },
      { country: 'US', is_bot: 1, browser: 'Googlebot' },
    ])
    const res = await call(api.app, 'GET', `/api/v1/links/${link.alias}/stats`, { token: pro.key })
    expect(res.status, show(res)).toBe(200)
    const data = res.body.data
    expect(res.body.success).toBe(true)
    expect(data).toMatchObject({ alias: link.alias, domain: 'sho.rt', period: '7D', bucket: 'day', total_clicks: 3 })
    // No routing: every human click of the period took the default route.
    expect(data.routingStats).toEqual([{ route: 'default', kind: 'default', url: 'https://example.com/stats', clicks: 3, leads: 0, sales: 0, conversions: 0 }])
    expect(data.routingSummary).toEqual({ rules: 0, ab: null, routed_clicks: 0, default_clicks: 3 })
    expect(typeof data.created_at).toBe('string')
    expect(data.timeseries.length).toBe(7)
    expect(data.timeseries.reduce((n: number, b: { clicks: number }) => n + b.clicks, 0)).toBe(3)
    expect(data.timeseries.at(-1).clicks).toBe(2)
    expect(data.countries).toEqual([
      { country: 'US', clicks: 2 },
      { country: 'DE', clicks: 1 },
    ])
    expect(data.referrers).toContainEqual({ referrer: 'news.ycombinator.com', clicks: 1 })
    expect(data.devices).toContainEqual({ device: 'mobile', clicks: 1 })
    expect(data.browsers.map((b: { browser: string }) => b.browser)).not.toContain('Googlebot')
    expect(data.os).toContainEqual({ os: 'iOS', clicks: 1 })
    expect(res.body.meta).toMatchObject({ account_type: 'pro', include_bots: false })
    expect(res.headers.get('x-ratelimit-limit')).toBe('120')
  })

  test('periods 24H, 30D and ALL; include_bots=true counts bots', async () => {
    const pro = await newAccount(api.deps.db, 'pro')
    const link = await createLink(api.app, pro)
    await insertClicks(link.id, [{}, { msAgo: 3 * DAY }, { msAgo: 20 * DAY }, { msAgo: 50 * DAY }, { is_bot: 1 }])
    const get = (q: string) => call(api.app, 'GET', `/api/v1/links/${link.alias}/stats?${q}`, { token: pro.key })
    const h24 = await get('period=24H')
    expect(h24.status, show(h24)).toBe(200)
    expect(h24.body.data).toMatchObject({ period: '24H', bucket: 'hour', total_clicks: 1 })
    expect(h24.body.data.timeseries.length).toBe(24)
    const d30 = await get('period=30D')
    expect(d30.body.data).toMatchObject({ period: '30D', total_clicks: 3 })
    expect(d30.body.data.timeseries.length).toBe(30)
    const all = await get('period=ALL')
    expect(all.body.data).toMatchObject({ period: 'ALL', total_clicks: 4 })
    const bots = await get('period=ALL&include_bots=true')
    expect(bots.body.data.total_clicks, show(bots)).toBe(5)
    expect(bots.body.meta.include_bots).toBe(true)
  })

  test('domain query: a link on a custom domain is found with ?domain=, not without', async () => {
    const pro = await newAccount(api.deps.db, 'pro')
    const host = await newDomain(api.deps.db, pro.id)
    const link = await createLink(api.app, pro, { alias: 'x', domain: host })
    await insertClicks(link.id, [{}, {}])
    const ok = await call(api.app, 'GET', `/api/v1/links/x/stats?domain=${host}`, { token: pro.key })
    expect(ok.status, show(ok)).toBe(200)
    expect(ok.body.data).toMatchObject({ alias: 'x', domain: host, total_clicks: 2 })
    const missing = await call(api.app, 'GET', '/api/v1/links/x/stats', { token: pro.key })
    expect(missing.status, show(missing)).toBe(404)
  })
})

describe('GET /api/v1/links/{alias}/stats: conversions and revenue', () => {
  test('by type and currency, refunds subtracted, same period as the clicks; none: empty arrays', async () => {
    const pro = await newAccount(api.deps.db, 'pro')
    const link = await createLink(api.app, pro)
    const conversion = (type: string, value: string | null, currency: string | null, msAgo: number) => ({
      id: uniqueName('conv_'),
      accountId: pro.id,
      linkId: link.id,
      clickId: uniqueName('click_'),
      conversionType: type,
      value,
      currency,
      externalOrderId: uniqueName('order_'),
      occurredAt: new Date(Date.now() - msAgo),
      payloadHash: uniqueName('hash_'),
    })
    await api.deps.db
      .insert(conversions)
      .values([
        conversion('purchase', '50', 'EUR', 0),
        conversion('purchase', '30.5', 'EUR', DAY),
        conversion('refund', '20', 'EUR', 0),
        conversion('signup', null, null, 0),
        conversion('purchase', '100', 'USD', 40 * DAY),
      ])
    const week = await call(api.app, 'GET', `/api/v1/links/${link.alias}/stats`, { token: pro.key })
    expect(week.status, show(week)).toBe(200)
    expect(week.body.data.conversions).toEqual([
      { type: 'purchase', currency: 'EUR', count: 2, value: 80.5 },
      { type: 'refund', currency: 'EUR', count: 1, value: 20 },
      { type: 'signup', currency: null, count: 1, value: 0 },
    ])
    expect(week.body.data.revenue).toEqual([{ currency: 'EUR', gross: 80.5, refunds: 20, net: 60.5 }])
    const all = await call(api.app, 'GET', `/api/v1/links/${link.alias}/stats?period=ALL`, { token: pro.key })
    expect(all.body.data.revenue).toContainEqual({ currency: 'USD', gross: 100, refunds: 0, net: 100 })

    const bare = await createLink(api.app, pro)
    const none = await call(api.app, 'GET', `/api/v1/links/${bare.alias}/stats`, { token: pro.key })
    expect(none.body.data).toMatchObject({ conversions: [], revenue: [], total_clicks: 0 })
  })

  test('Free: the 403 carries no revenue', async () => {
    const free = await newAccount(api.deps.db)
    const link = await createLink(api.app, free)
    const res = await call(api.app, 'GET', `/api/v1/links/${link.alias}/stats`, { token: free.key })
    expect(res.status, show(res)).toBe(403)
    expect(res.body.data.revenue).toBeUndefined()
    expect(res.body.data.conversions).toBeUndefined()
  })
})
