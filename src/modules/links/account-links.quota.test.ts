// POST /api/v1/shorten with an API key: the monthly link quota (exact under concurrency, per month and
// per account), guest tokens keeping the guest behaviour, and Idempotency-Key.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { links } from '../../db/schema'
import { newGuestToken, show } from '../../../test/support/api'
import { monthWindow } from '../account/meta'
import { newAccount } from '../../../test/support/fixtures'
import { api, app, fillMonth, freshAlias, setUp, shorten } from '../../../test/support/suites/account-links'

beforeAll(setUp)

describe('monthly link quota', () => {
  test('exact under concurrency: with 999 of 1000 used, one of six parallel creates succeeds, five get 429', async () => {
    const account = await newAccount(api.deps.db)
    await fillMonth(account, 999)
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => shorten(account.key, { url: `https://example.com/q/${i}` })))
    const ok = results.filter((r) => r.status === 200)
    const limited = results.filter((r) => r.status === 429)
    expect(ok.length, results.map(show).join('\n')).toBe(1)
    expect(limited.length, results.map(show).join('\n')).toBe(5)
    expect(ok[0]!.body.meta.usage, show(ok[0]!)).toMatchObject({ links_this_month: 1000, links_remaining: 0 })
    const res = limited[0]!
    expect(res.body, show(res)).toMatchObject({
      success: false,
      error: 'LINK_QUOTA_EXCEEDED',
      limit: 1000,
      remaining: 0,
      upgrade_url: 'https://api.sho.rt/api/v1/account/upgrade',
      meta: { account_type: 'free', usage: { links_this_month: 1000, links_remaining: 0 } },
    })
    const untilNextMonth = (monthWindow(Date.now()).next.getTime() - Date.now()) / 1000
    expect(Math.abs(Number(res.headers.get('retry-after')) - untilNextMonth), show(res)).toBeLessThan(5)
    expect((await api.deps.db.select({ id: links.id }).from(links).where(eq(links.accountId, account.id))).length).toBe(1000)
  })

  test("last month's links do not count; another account's quota is its own", async () => {
    const account = await newAccount(api.deps.db)
    await fillMonth(account, 1000, new Date(monthWindow(Date.now()).start.getTime() - 1000))
    const res = await shorten(account.key, { url: 'https://example.com/new-month' })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.meta.usage.links_this_month, show(res)).toBe(1)
  })

  test('a guest token still gets the guest behaviour (fields ignored, listed in notices)', async () => {
    const token = await newGuestToken(app)
    const res = await shorten(token, { url: 'https://example.com/g', alias: freshAlias() })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.meta.account_type, show(res)).toBe('guest')
    expect(
      res.body.meta.notices.map((n: { field: string }) => n.field),
      show(res),
    ).toEqual(['alias'])
  })
})

describe('Idempotency-Key on POST /api/v1/shorten', () => {
  test('a retry with the same key and body replays the first answer and creates nothing more', async () => {
    const account = await newAccount(api.deps.db)
    const headers = { 'idempotency-key': `create-${crypto.randomUUID()}` }
    const body = { url: 'https://example.com/once' }
    const first = await shorten(account.key, body, headers)
    expect(first.status, show(first)).toBe(200)
    const again = await shorten(account.key, body, headers)
    expect(again.status, show(again)).toBe(200)
    expect(again.headers.get('idempotent-replayed'), show(again)).toBe('true')
    expect(again.body.data.alias, show(again)).toBe(first.body.data.alias)
    const other = await shorten(account.key, { url: 'https://example.com/other' }, headers)
    expect(other.status, show(other)).toBe(400)
    expect(other.body.error, show(other)).toBe('IDEMPOTENCY_KEY_REUSED')
    expect((await api.deps.db.select({ id: links.id }).from(links).where(eq(links.accountId, account.id))).length).toBe(1)
  })
})
