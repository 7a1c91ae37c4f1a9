// GET /api/v1/links/{alias}/stats and the clicks / last_clicked_at of link records. Clicks are inserted
// straight into the shared chDB for each test's own link ids (each insert with its own dedup token).
import { beforeAll, describe, expect, test } from 'bun:test'
import type { ClickHouseClient } from '@clickhouse/client'
import { and, eq } from 'drizzle-orm'
import { conversions, links } from '../../db/schema'
import { call, newGuestToken, show, testApi, uniqueName } from '../../../test/support/api'
import { insertTestClicks, testClickHouse } from '../../../test/support/clickhouse'
import { newAccount, newDomain, type TestAccount } from '../../../test/support/fixtures'
import { CLICK_COUNTS_BUDGET_MS } from '../links/clicks'

type Api = Awaited<ReturnType<typeof testApi>>
let api: Api
let ch: ClickHouseClient

beforeAll(async () => {
  api = await testApi()
  ch = await testClickHouse()
}, 60_000) // the engines start in-process: seconds, more on a busy machine

type Click = { msAgo?: number; country?: string; referrer_host?: string; device_type?: string; browser?: string; os?: string; is_bot?: number }

function insertClicks(linkId: string, clicks: Click[]): Promise<void> {
  const now = Date.now()
  return insertTestClicks(ch, linkId, clicks.map(({ msAgo, ...rest }) => ({ ...rest, at: now - (msAgo ?? 0) })))
}

async function createLink(app: Api['app'], account: TestAccount, body: Record<string, unknown> = {}) {
  const res = await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: 'https://example.com/stats', ...body } })
  if (res.status !== 200) throw new Error(`shorten: ${show(res)}`)
  const { alias, domain } = res.body.data as { alias: string; domain: string }
  const [row] = await api.deps.db.select({ id: links.id }).from(links).where(and(eq(links.domain, domain), eq(links.alias, alias)))
  return { alias, domain, id: row!.id }
}

const DAY = 24 * 3_600_000

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
    expect(data).toMatchObject({ alias: link.alias, domain: 'sho.rt', period: '7D', bucket: 'day', total_clicks: 3, routingStats: [], routingSummary: {} })
    expect(typeof data.created_at).toBe('string')
    expect(data.timeseries.length).toBe(7)
    expect(data.timeseries.reduce((n: number, b: { clicks: number }) => n + b.clicks, 0)).toBe(3)
    expect(data.timeseries.at(-1).clicks).toBe(2)
    expect(data.countries).toEqual([{ country: 'US', clicks: 2 }, { country: 'DE', clicks: 1 }])
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
    await api.deps.db.insert(conversions).values([
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

describe('GET /api/v1/links/{alias}/stats: Free and errors', () => {
  test('Free: 403 STATS_REQUIRES_PRO with basic totals (all time, humans) in data and upgrade_url', async () => {
    const free = await newAccount(api.deps.db)
    const link = await createLink(api.app, free)
    await insertClicks(link.id, [{}, { msAgo: 60 * DAY }, { is_bot: 1 }])
    const res = await call(api.app, 'GET', `/api/v1/links/${link.alias}/stats`, { token: free.key })
    expect(res.status, show(res)).toBe(403)
    expect(res.body).toMatchObject({ success: false, error: 'STATS_REQUIRES_PRO', upgrade_url: 'https://api.sho.rt/api/v1/account/upgrade' })
    expect(res.body.data).toMatchObject({ alias: link.alias, domain: 'sho.rt', total_clicks: 2 })
    expect(typeof res.body.data.last_clicked_at).toBe('string')
    expect(res.body.data.timeseries).toBeUndefined()
    expect(res.body.meta.account_type).toBe('free')
  })

  test('bad period or include_bots: 400 VALIDATION_FAILED', async () => {
    const pro = await newAccount(api.deps.db, 'pro')
    const link = await createLink(api.app, pro)
    for (const q of ['period=1Y', 'period=7d', 'period=', 'include_bots=maybe']) {
      const res = await call(api.app, 'GET', `/api/v1/links/${link.alias}/stats?${q}`, { token: pro.key })
      expect(res.status, `${q}: ${show(res)}`).toBe(400)
      expect(res.body.error).toBe('VALIDATION_FAILED')
    }
  })

  test('security: another account\'s link and an unknown link are 404 alike, for Free and Pro', async () => {
    const owner = await newAccount(api.deps.db, 'pro')
    const link = await createLink(api.app, owner)
    await insertClicks(link.id, [{}])
    for (const plan of ['pro', 'free'] as const) {
      const stranger = await newAccount(api.deps.db, plan)
      const other = await call(api.app, 'GET', `/api/v1/links/${link.alias}/stats`, { token: stranger.key })
      expect(other.status, show(other)).toBe(404)
      expect(other.body.error).toBe('LINK_NOT_FOUND')
      expect(other.body.data).toBeUndefined()
      const unknown = await call(api.app, 'GET', '/api/v1/links/no-such-link-here/stats', { token: stranger.key })
      expect(unknown.status, show(unknown)).toBe(404)
      expect(unknown.body.error).toBe('LINK_NOT_FOUND')
    }
  })

  test('security: guest token, no token, malformed token: 401', async () => {
    const pro = await newAccount(api.deps.db, 'pro')
    const link = await createLink(api.app, pro)
    const gt = await newGuestToken(api.app)
    const path = `/api/v1/links/${link.alias}/stats`
    for (const res of [
      await call(api.app, 'GET', path, { token: gt }),
      await call(api.app, 'GET', path),
      await call(api.app, 'GET', path, { token: 'mk_not-a-real-key-0000000000' }),
    ]) {
      expect(res.status, show(res)).toBe(401)
      expect(res.body.error).toBe('UNAUTHORIZED')
      expect(res.text).not.toContain('total_clicks')
    }
  })
})

describe('clicks and last_clicked_at on link records', () => {
  test('get, list and update carry all-time human clicks; a list costs one ClickHouse query', async () => {
    let queries = 0
    const counting = new Proxy(ch, {
      get(target, prop, receiver) {
        if (prop === 'query') return (...args: Parameters<ClickHouseClient['query']>) => (queries++, target.query(...args))
        return Reflect.get(target, prop, receiver)
      },
    })
    const local = await testApi({ clickhouse: counting })
    const account = await newAccount(api.deps.db)
    const a = await createLink(local.app, account)
    const b = await createLink(local.app, account)
    await createLink(local.app, account)
    await insertClicks(a.id, [{}, { msAgo: 100 * DAY }, { is_bot: 1 }])
    await insertClicks(b.id, [{ msAgo: DAY }])

    const got = await call(local.app, 'GET', `/api/v1/links/${a.alias}`, { token: account.key })
    expect(got.status, show(got)).toBe(200)
    expect(got.body.data.clicks).toBe(2)
    expect(Date.now() - Date.parse(got.body.data.last_clicked_at)).toBeLessThan(60_000)
    expect(got.body.meta.notices).toEqual([])

    queries = 0
    const list = await call(local.app, 'GET', '/api/v1/links?limit=10', { token: account.key })
    expect(list.status, show(list)).toBe(200)
    expect(queries).toBe(1)
    const byAlias = Object.fromEntries(list.body.data.links.map((l: { alias: string }) => [l.alias, l]))
    expect(byAlias[a.alias]).toMatchObject({ clicks: 2 })
    expect(byAlias[b.alias]).toMatchObject({ clicks: 1 })
    expect(Object.values(byAlias).filter((l) => (l as { clicks: number }).clicks === 0).length).toBe(1)

    const patched = await call(local.app, 'PATCH', `/api/v1/links/${b.alias}`, { token: account.key, body: { url: 'https://example.com/new' } })
    expect(patched.status, show(patched)).toBe(200)
    expect(patched.body.data).toMatchObject({ full_url: 'https://example.com/new', clicks: 1 })
    expect(typeof patched.body.data.last_clicked_at).toBe('string')
  })

  test('ClickHouse down: links still answer without counts and with a notice; stats 503; Free 403 keeps its shape', async () => {
    const down = { query: async () => { throw new Error('connect ECONNREFUSED') } } as unknown as ClickHouseClient
    const local = await testApi({ clickhouse: down })
    const free = await newAccount(api.deps.db)
    const link = await createLink(local.app, free)
    const got = await call(local.app, 'GET', `/api/v1/links/${link.alias}`, { token: free.key })
    expect(got.status, show(got)).toBe(200)
    expect(got.body.data.clicks).toBeUndefined()
    expect(got.body.data.last_clicked_at).toBeUndefined()
    expect(got.body.meta.notices).toContainEqual(expect.objectContaining({ field: 'clicks' }))
    const list = await call(local.app, 'GET', '/api/v1/links', { token: free.key })
    expect(list.status, show(list)).toBe(200)
    expect(list.body.data.links[0].clicks).toBeUndefined()
    expect(list.body.meta.notices.length).toBe(1)
    const freeStats = await call(local.app, 'GET', `/api/v1/links/${link.alias}/stats`, { token: free.key })
    expect(freeStats.status, show(freeStats)).toBe(403)
    expect(freeStats.body.data).toMatchObject({ alias: link.alias, total_clicks: null })

    const pro = await newAccount(api.deps.db, 'pro')
    const proLink = await createLink(local.app, pro)
    const proStats = await call(local.app, 'GET', `/api/v1/links/${proLink.alias}/stats`, { token: pro.key })
    expect(proStats.status, show(proStats)).toBe(503)
    expect(proStats.body.error).toBe('STATS_UNAVAILABLE')
  })

  test('ClickHouse hanging: a link answers within the click-count budget', async () => {
    const hanging = { query: () => new Promise(() => {}) } as unknown as ClickHouseClient
    const local = await testApi({ clickhouse: hanging })
    const account = await newAccount(api.deps.db)
    const link = await createLink(local.app, account)
    const started = Date.now()
    const got = await call(local.app, 'GET', `/api/v1/links/${link.alias}`, { token: account.key })
    expect(got.status, show(got)).toBe(200)
    expect(got.body.data.clicks).toBeUndefined()
    expect(Date.now() - started).toBeLessThan(CLICK_COUNTS_BUDGET_MS + 1500)
  })
})
