// POST /api/v1/links/bulk: per-item outcomes, the 100-item bound, the quota per item.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { links } from '../../db/schema'
import { call, newGuestToken, show, testApi, type TestApp, uniqueName } from '../../../test/support/api'
import { ApiError } from '../../plugins/errors'
import { checkItem } from './bulk'
import { MAX_BULK_LINKS } from './model'
import { newAccount } from '../../../test/support/fixtures'
import { newId } from '../../lib/ids'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

beforeAll(async () => {
  api = await testApi()
  app = api.app
})

const bulk = (key: string, body: unknown, headers: Record<string, string> = {}) => call(app, 'POST', '/api/v1/links/bulk', { token: key, body, headers })
const freshAlias = (prefix = 'b') => `${prefix}-${crypto.randomUUID().slice(0, 12)}`
const countOf = async (accountId: string) => (await api.deps.db.select({ id: links.id }).from(links).where(eq(links.accountId, accountId))).length

describe('POST /api/v1/links/bulk', () => {
  test('each item succeeds or fails on its own, in order; the summary adds up', async () => {
    const account = await newAccount(api.deps.db)
    const dup = freshAlias('dup')
    const items = [
      { url: 'https://example.com/1', alias: dup, password: 'pw-bulk-1' },
      { url: 'javascript:alert(1)' },
      { url: 'https://example.com/3', alias: dup },
      { url: 42 },
      'not an object',
      { url: 'https://example.com/6', alias: 'bad alias!' },
      { url: 'https://example.com/7', alias: 'swagger' },
      { url: 'https://example.com/8', domain: 'unknown.example.com' },
      { url: 'https://example.com/9', expiration: '2001-01-01T00:00:00Z' },
      { alias: freshAlias() },
      { url: 'https://example.com/11' },
    ]
    const res = await bulk(account.key, { links: items })
    expect(res.status, show(res)).toBe(200)
    const { results, summary } = res.body.data
    expect(summary, show(res)).toEqual({ total: 11, succeeded: 2, failed: 9 })
    expect(results.map((r: { index: number }) => r.index)).toEqual(items.map((_, i) => i))
    const outcome = results.map((r: { success: boolean; error?: string }) => (r.success ? 'ok' : r.error))
    expect(outcome, show(res)).toEqual([
      'ok',
      'INVALID_URL',
      'ALIAS_TAKEN',
      'VALIDATION_FAILED',
      'VALIDATION_FAILED',
      'VALIDATION_FAILED',
      'ALIAS_TAKEN',
      'DOMAIN_NOT_ALLOWED',
      'VALIDATION_FAILED',
      'VALIDATION_FAILED',
      'ok',
    ])
    expect(results[0].data, show(res)).toMatchObject({ alias: dup, has_password: true, full_url: 'https://example.com/1' })
    expect(results[2], show(res)).toMatchObject({ status: 409, hint: expect.stringContaining('links[2].alias') })
    expect(results[3].hint, show(res)).toBe('links[3].url: Expected string')
    expect(results[4].hint, show(res)).toContain('links[4]: must be a JSON object')
    expect(results[5].hint, show(res)).toContain('links[5].alias')
    expect(results[9].hint, show(res)).toBe('links[9].url: is required')
    expect(res.text).not.toContain('pw-bulk-1')
    expect(res.body.meta.usage.links_this_month, show(res)).toBe(2)
    expect(await countOf(account.id)).toBe(2)
  })

  test(`at most ${MAX_BULK_LINKS} items; none or a non-array is 400 for the whole request`, async () => {
    const account = await newAccount(api.deps.db)
    const over = Array.from({ length: MAX_BULK_LINKS + 1 }, (_, i) => ({ url: `https://example.com/${i}` }))
    for (const body of [{ links: over }, { links: [] }, { links: 'x' }, {}, { links: [{ url: 'https://example.com/' }], extra: 1 }]) {
      const res = await bulk(account.key, body)
      if ('extra' in body) {
        expect(res.status, show(res)).toBe(200)
        continue
      }
      expect(res.status, `${JSON.stringify(body).slice(0, 80)}: ${show(res)}`).toBe(400)
      expect(res.body.error, show(res)).toBe('VALIDATION_FAILED')
      expect(res.body.hint, show(res)).toContain('body')
    }
    expect(await countOf(account.id)).toBe(1)
  })

  test(`${MAX_BULK_LINKS} items with passwords are created`, async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const items = Array.from({ length: MAX_BULK_LINKS }, (_, i) => ({ url: `https://example.com/many/${i}`, ...(i % 10 === 0 && { password: `pw-${i}` }) }))
    const res = await bulk(account.key, { links: items })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data.summary, show(res)).toEqual({ total: MAX_BULK_LINKS, succeeded: MAX_BULK_LINKS, failed: 0 })
    expect(res.body.data.results.filter((r: { data: { has_password: boolean } }) => r.data.has_password).length).toBe(10)
  }, 30_000)

  test('the monthly quota applies item by item', async () => {
    const account = await newAccount(api.deps.db)
    const tag = uniqueName('', 6)
    await api.deps.db
      .insert(links)
      .values(Array.from({ length: 998 }, (_, i) => ({ id: newId('link'), domain: 'sho.rt', alias: `bq-${tag}-${i}`, url: 'https://example.com/f', accountId: account.id })))
    const res = await bulk(account.key, { links: [1, 2, 3].map((i) => ({ url: `https://example.com/q/${i}` })) })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data.summary, show(res)).toEqual({ total: 3, succeeded: 2, failed: 1 })
    expect(res.body.data.results[2], show(res)).toMatchObject({
      index: 2,
      success: false,
      error: 'LINK_QUOTA_EXCEEDED',
      status: 429,
      limit: 1000,
      remaining: 0,
      upgrade_url: 'https://api.sho.rt/api/v1/account/upgrade',
    })
    expect(res.body.meta.usage, show(res)).toMatchObject({ links_this_month: 1000, links_remaining: 0 })
  })

  test('in one transaction the quota still counts item by item: a taken alias uses none, items past it are not stored', async () => {
    const account = await newAccount(api.deps.db)
    const tag = uniqueName('', 6)
    await api.deps.db
      .insert(links)
      .values(Array.from({ length: 998 }, (_, i) => ({ id: newId('link'), domain: 'sho.rt', alias: `bt-${tag}-${i}`, url: 'https://example.com/f', accountId: account.id })))
    const past = freshAlias('past')
    const items = [{ url: 'https://example.com/t/0' }, { url: 'https://example.com/t/1', alias: `bt-${tag}-0` }, { url: 'https://example.com/t/2' }, { url: 'https://example.com/t/3', alias: past }]
    const res = await bulk(account.key, { links: items })
    expect(res.status, show(res)).toBe(200)
    expect(
      res.body.data.results.map((r: { success: boolean; error?: string }) => (r.success ? 'ok' : r.error)),
      show(res),
    ).toEqual(['ok', 'ALIAS_TAKEN', 'ok', 'LINK_QUOTA_EXCEEDED'])
    expect(res.body.meta.usage.links_this_month, show(res)).toBe(1000)
    expect(await countOf(account.id)).toBe(1000)
    expect((await api.deps.db.select({ id: links.id }).from(links).where(eq(links.alias, past))).length, 'an item past the quota leaves its alias free').toBe(0)
  })

  test('security: concurrent bulk requests and shortens of one account never exceed the quota', async () => {
    const account = await newAccount(api.deps.db)
    const tag = uniqueName('', 6)
    await api.deps.db
      .insert(links)
      .values(Array.from({ length: 995 }, (_, i) => ({ id: newId('link'), domain: 'sho.rt', alias: `bc-${tag}-${i}`, url: 'https://example.com/f', accountId: account.id })))
    const batch = (n: number) => ({ links: Array.from({ length: 4 }, (_, i) => ({ url: `https://example.com/c/${n}/${i}` })) })
    const answers = await Promise.all([
      bulk(account.key, batch(1)),
      bulk(account.key, batch(2)),
      call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: 'https://example.com/c/s' } }),
      bulk(account.key, batch(3)),
    ])
    const created = answers.reduce((sum, res) => sum + (res.body.data?.summary?.succeeded ?? (res.status === 200 ? 1 : 0)), 0)
    expect(created, answers.map(show).join('\n')).toBe(5)
    expect(await countOf(account.id)).toBe(1000)
  })

  test('security: guest tokens and missing tokens are 401, before the body is looked at', async () => {
    const token = await newGuestToken(app)
    for (const res of [await bulk(token, { links: [{ url: 'https://example.com/' }] }), await call(app, 'POST', '/api/v1/links/bulk', { body: { links: 'x' } })]) {
      expect(res.status, show(res)).toBe(401)
      expect(res.body.error, show(res)).toBe('UNAUTHORIZED')
    }
  })

  test('Idempotency-Key: a retried bulk request replays and creates nothing more', async () => {
    const account = await newAccount(api.deps.db)
    const headers = { 'idempotency-key': crypto.randomUUID() }
    const body = { links: [{ url: 'https://example.com/i1' }, { url: 'https://example.com/i2' }] }
    const first = await bulk(account.key, body, headers)
    const replay = await bulk(account.key, body, headers)
    expect(first.status, show(first)).toBe(200)
    expect(replay.headers.get('idempotent-replayed'), show(replay)).toBe('true')
    expect(replay.text).toBe(first.text)
    expect(await countOf(account.id)).toBe(2)
  })
})

describe('checkItem', () => {
  test('passes a valid item through and names the first bad field', () => {
    const hintOf = (item: unknown, prefix: string) => {
      try {
        checkItem(item, prefix)
        return 'OK'
      } catch (error) {
        return error instanceof ApiError ? `${error.code} ${error.hint}` : String(error)
      }
    }
    expect(checkItem({ url: 'https://example.com' }, 'links[0]')).toEqual({ url: 'https://example.com' })
    expect(hintOf({ url: 'https://example.com', expiration: 'later' }, 'links[1]')).toStartWith('VALIDATION_FAILED links[1].expiration: ')
    expect(hintOf(null, 'links[2]')).toStartWith('VALIDATION_FAILED links[2]: must be a JSON object')
    expect(hintOf([], 'links[3]')).toStartWith('VALIDATION_FAILED links[3]: must be a JSON object')
    expect(hintOf({ url: 'https://example.com', password: '' }, 'links[4]')).toStartWith('VALIDATION_FAILED links[4].password: ')
  })
})
