// The end of an A/B test and the routing statistics: the winner chosen by winner_by over the test's
// clicks (ties: clicks, then the first listed), written as the link's URL and through to the cache, the
// test kept as completed; exactly one of two API instances ends it; the statistics count each route's
// human clicks of the period and the conversions of those clicks.
import { beforeAll, describe, expect, test } from 'bun:test'
import type { ClickHouseClient } from '@clickhouse/client'
import { eq } from 'drizzle-orm'
import { links } from '../../db/schema'
import { createServices } from '../../services'
import { call, show, testApi } from '../../../test/support/api'
import { insertTestClicks, testClickHouse } from '../../../test/support/clickhouse'
import { newAccount, type TestAccount } from '../../../test/support/fixtures'
import { decodeCachedLink, linkCacheKey } from '../../../core/link-cache'
import { writeConversionMirror } from '../conversions/mirror'
import { chooseWinner, completeAbTest, completeDueAbTests } from './routing-manage'

let api: Awaited<ReturnType<typeof testApi>>
let ch: ClickHouseClient

beforeAll(async () => {
  api = await testApi()
  ch = await testClickHouse()
}, 120_000)

const HOUR = 3_600_000

async function routedLink(account: TestAccount, winnerBy: 'leads' | 'sales' | 'conversions' = 'leads') {
  const alias = `ab-${crypto.randomUUID().slice(0, 10)}`
  const made = await call(api.app, 'POST', '/api/v1/shorten', {
    token: account.key,
    body: {
      url: 'https://example.com/home',
      alias,
      routing: {
        rules: [{ id: 'ios', url: 'https://apps.example/ios', when: { device: ['ios'] } }],
        ab: {
          variants: [
            { url: 'https://example.com/a', weight: 50 },
            { url: 'https://example.com/b', weight: 30 },
            { url: 'https://example.com/c', weight: 20 },
          ],
          ends_at: new Date(Date.now() + 2 * HOUR).toISOString(),
          winner_by: winnerBy,
        },
      },
    },
  })
  if (made.status !== 200) throw new Error(show(made))
  const [row] = await api.deps.db.select().from(links).where(eq(links.alias, alias))
  return { alias, id: row!.id }
}

/** Moves the link's test end into the past, as if its time had come. */
async function endNow(linkId: string) {
  const [row] = await api.deps.db.select().from(links).where(eq(links.id, linkId))
  const past = new Date(Date.now() - 1000)
  const routing = { ...row!.routing!, ab: { ...row!.routing!.ab!, ends_at: past.toISOString() } }
  await api.deps.db.update(links).set({ routing, abEndsAt: past }).where(eq(links.id, linkId))
}

async function convert(linkId: string, accountId: string, clickId: string, type: string) {
  const now = Date.now()
  await writeConversionMirror(ch, { conversionId: `cv_${crypto.randomUUID()}`, linkId, clickId, accountId, conversionType: type, value: null, currency: null, occurredAtMs: now, createdAtMs: now })
}

describe('chooseWinner', () => {
  const ab = {
    variants: [
      { id: 'a', url: 'x', weight: 50 },
      { id: 'b', url: 'y', weight: 30 },
      { id: 'c', url: 'z', weight: 20 },
    ],
    winner_by: 'leads' as const,
  }
  const c = (clicks: number, leads: number) => ({ clicks, leads, sales: 0, conversions: leads })

  test('the highest count of winner_by; ties by clicks, then the first listed', () => {
    expect(
      chooseWinner(
        ab,
        new Map([
          ['ab:a', c(10, 1)],
          ['ab:b', c(5, 3)],
          ['ab:c', c(50, 2)],
        ]),
      ),
    ).toBe('b')
    expect(
      chooseWinner(
        ab,
        new Map([
          ['ab:a', c(10, 3)],
          ['ab:b', c(20, 3)],
          ['ab:c', c(15, 3)],
        ]),
      ),
    ).toBe('b')
    expect(
      chooseWinner(
        ab,
        new Map([
          ['ab:a', c(10, 3)],
          ['ab:b', c(10, 3)],
        ]),
      ),
    ).toBe('a')
    expect(chooseWinner(ab, new Map())).toBe('a')
    expect(chooseWinner({ ...ab, winner_by: 'sales' }, new Map([['ab:c', { clicks: 1, leads: 0, sales: 1, conversions: 1 }]]))).toBe('c')
  })
})

describe('the end of an A/B test', () => {
  test('on a read after ends_at: the winner by leads becomes the URL, the test stays completed, the cache follows', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const { alias, id } = await routedLink(account)
    // Clicks of the test: after its start (the shorten above), before its end.
    const now = Date.now()
    await insertTestClicks(ch, id, [
      { at: now, route: 'ab:a', click_id: `${id}-a1` },
      { at: now, route: 'ab:a', click_id: `${id}-a2` },
      { at: now, route: 'ab:b', click_id: `${id}-b1` },
      { at: now, route: 'ab:c', click_id: `${id}-c1` },
      { at: now, route: 'ab:c', click_id: `${id}-c2`, is_bot: 1 },
    ])
    await convert(id, account.id, `${id}-b1`, 'lead')
    await convert(id, account.id, `${id}-b1`, 'signup')
    await convert(id, account.id, `${id}-a1`, 'purchase')
    // A bot's click converts nothing that counts.
    await convert(id, account.id, `${id}-c2`, 'lead')
    await convert(id, account.id, `${id}-c2`, 'lead')
    await convert(id, account.id, `${id}-c2`, 'lead')
    await endNow(id)

    const read = await call(api.app, 'GET', `/api/v1/links/${alias}/routing`, { token: account.key })
    expect(read.status, show(read)).toBe(200)
    expect(read.body.data.ab, show(read)).toMatchObject({ status: 'completed', winner: 'b', completed_at: expect.any(String) })
    expect(read.body.data.rules).toHaveLength(1)
    const link = await call(api.app, 'GET', `/api/v1/links/${alias}`, { token: account.key })
    expect(link.body.data.full_url).toBe('https://example.com/b')
    const record = decodeCachedLink((await api.adapters.kv.get(linkCacheKey('sho.rt', alias)))!)
    expect(record, JSON.stringify(record)).toMatchObject({ url: 'https://example.com/b', r: { rules: [{ id: 'ios' }] } })
    expect(record!.r!.ab, 'a completed test splits no traffic').toBeUndefined()
    const [row] = await api.deps.db.select().from(links).where(eq(links.id, id))
    expect(row!.abEndsAt).toBeNull()
  })

  test('a read of the link itself ends it too', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const { alias, id } = await routedLink(account, 'conversions')
    await insertTestClicks(ch, id, [{ at: Date.now(), route: 'ab:c', click_id: `${id}-c1` }])
    await convert(id, account.id, `${id}-c1`, 'signup')
    await endNow(id)
    const link = await call(api.app, 'GET', `/api/v1/links/${alias}`, { token: account.key })
    expect(link.body.data.full_url, show(link)).toBe('https://example.com/c')
  })

  test('a test still running is not ended by the sweep', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const { alias } = await routedLink(account)
    await completeDueAbTests(createServices(api.deps))
    const read = await call(api.app, 'GET', `/api/v1/links/${alias}/routing`, { token: account.key })
    expect(read.body.data.ab.status).toBe('running')
  })

  test('two API instances ending the same tests at once: each is ended by exactly one', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const made = await Promise.all([routedLink(account), routedLink(account), routedLink(account)])
    for (const { id } of made) await endNow(id)
    const other = await testApi()
    const [a, b] = [createServices(api.deps), createServices(other.deps)]
    const rows = await Promise.all(made.map(async ({ id }) => (await api.deps.db.select().from(links).where(eq(links.id, id)))[0]!))
    const ended = await Promise.all(rows.map((row) => Promise.all([completeAbTest(a, row), completeAbTest(b, row)])))
    for (const [i, pair] of ended.entries()) {
      expect(
        pair.filter((result) => result !== null),
        `link ${i}`,
      ).toHaveLength(1)
      const [row] = await api.deps.db.select().from(links).where(eq(links.id, made[i]!.id))
      expect(row!.routing!.ab!.status).toBe('completed')
    }
  })

  test('the sweep ends every test whose time has come', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const { id } = await routedLink(account)
    await endNow(id)
    expect(await completeDueAbTests(createServices(api.deps))).toBeGreaterThanOrEqual(1)
    const [row] = await api.deps.db.select().from(links).where(eq(links.id, id))
    expect(row!.routing!.ab!.status).toBe('completed')
  })
})

describe('routing statistics', () => {
  test('each route of the period: its human clicks and the conversions of those clicks; the summary', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const { alias, id } = await routedLink(account)
    const now = Date.now()
    await insertTestClicks(ch, id, [
      { at: now - HOUR, route: 'rule:ios', click_id: `${id}-i1` },
      { at: now - HOUR, route: 'rule:ios', click_id: `${id}-i2` },
      { at: now - HOUR, route: 'rule:ios', click_id: `${id}-i3`, is_bot: 1 },
      { at: now - HOUR, route: 'ab:a', click_id: `${id}-a1` },
      { at: now - HOUR, route: 'ab:b', click_id: `${id}-b1` },
      { at: now - HOUR, route: 'default', click_id: `${id}-d1` },
      { at: now - HOUR, route: 'rule:gone', click_id: `${id}-g1` },
      { at: now - 10 * 24 * HOUR, route: 'ab:a', click_id: `${id}-old` },
    ])
    await convert(id, account.id, `${id}-i1`, 'lead')
    await convert(id, account.id, `${id}-i1`, 'purchase')
    await convert(id, account.id, `${id}-a1`, 'refund')
    await convert(id, account.id, `${id}-i3`, 'lead')
    const stats = await call(api.app, 'GET', `/api/v1/links/${alias}/stats?period=7D`, { token: account.key })
    expect(stats.status, show(stats)).toBe(200)
    const byRoute = Object.fromEntries(stats.body.data.routingStats.map((item: { route: string }) => [item.route, item]))
    expect(byRoute['rule:ios']).toEqual({ route: 'rule:ios', kind: 'rule', url: 'https://apps.example/ios', clicks: 2, leads: 1, sales: 1, conversions: 2 })
    expect(byRoute['ab:a']).toEqual({ route: 'ab:a', kind: 'variant', url: 'https://example.com/a', clicks: 1, leads: 0, sales: 0, conversions: 0 })
    expect(byRoute['ab:b']).toMatchObject({ kind: 'variant', clicks: 1 })
    expect(byRoute['ab:c']).toMatchObject({ kind: 'variant', clicks: 0 })
    expect(byRoute.default).toMatchObject({ kind: 'default', url: 'https://example.com/home', clicks: 1 })
    expect(byRoute['rule:gone']).toMatchObject({ kind: 'rule', url: null, clicks: 1 })
    expect(stats.body.data.routingSummary).toEqual({
      rules: 1,
      ab: { status: 'running', winner_by: 'leads', ends_at: expect.any(String), winner: null, variants: 3 },
      routed_clicks: 5,
      default_clicks: 1,
    })
    const all = await call(api.app, 'GET', `/api/v1/links/${alias}/stats?period=ALL`, { token: account.key })
    const allA = all.body.data.routingStats.find((item: { route: string }) => item.route === 'ab:a')
    expect(allA.clicks, show(all)).toBe(2)
  })
})
