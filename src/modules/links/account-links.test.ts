// POST /api/v1/shorten with an API key: the full request, custom domains, the monthly quota, meta.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { decodeCachedLink, linkCacheKey } from '../../core/link-cache'
import { apiKeys, links } from '../../db/schema'
import { call, newGuestToken, show, testApi, type TestApp, uniqueName } from '../../../test/support/api'
import { monthWindow } from '../account/meta'
import { DEFAULT_LINK_TTL_MS } from '../account/plans'
import { newAccount, newDomain, type TestAccount } from '../../../test/support/fixtures'
import { newId } from '../../lib/ids'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

beforeAll(async () => {
  api = await testApi()
  app = api.app
})

const shorten = (key: string, body: unknown, headers: Record<string, string> = {}) => call(app, 'POST', '/api/v1/shorten', { token: key, body, headers })
/** An alias nobody else has used, in this run or an earlier one against the same database. */
const freshAlias = (prefix = 'a') => `${prefix}-${crypto.randomUUID().slice(0, 12)}`
const rowOf = async (domain: string, alias: string) => (await api.deps.db.select().from(links).where(eq(links.alias, alias))).find((r) => r.domain === domain)

async function fillMonth(account: TestAccount, count: number, createdAt = new Date()) {
  const tag = uniqueName('', 6)
  await api.deps.db.insert(links).values(
    Array.from({ length: count }, (_, i) => ({ id: newId('link'), domain: 'sho.rt', alias: `fill-${tag}-${i}`, url: 'https://example.com/filler', accountId: account.id, createdAt })),
  )
}

describe('POST /api/v1/shorten with an API key', () => {
  test('applies alias, password, expiration and activated_at; returns the record and account meta', async () => {
    const account = await newAccount(api.deps.db)
    const alias = freshAlias('launch')
    const body = { url: 'https://example.com/launch', alias, password: 'open sesame 42', expiration: '2099-12-31T23:59:59Z', activated_at: '2099-06-01T09:00:00Z' }
    const res = await shorten(account.key, body)
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data, show(res)).toEqual({
      short_url: `https://sho.rt/${alias}`,
      alias,
      full_url: 'https://example.com/launch',
      domain: 'sho.rt',
      manage_code: null,
      created_at: expect.any(String),
      expires_at: '2099-12-31T23:59:59.000Z',
      has_password: true,
      clicks: 0,
      last_clicked_at: null,
    })
    expect(res.body.meta, show(res)).toMatchObject({
      account_type: 'free',
      usage: { links_this_month: 1, links_per_month: 1000, links_remaining: 999 },
      notices: [],
      upgrade: { plan: 'pro', url: 'https://api.sho.rt/api/v1/account/upgrade' },
    })
    expect(res.body.meta.hint, show(res)).toContain('Pro')
    expect(res.headers.get('x-ratelimit-limit'), show(res)).toBe('30')
    // The password is stored as an argon2id hash only, and never comes back.
    expect(res.text).not.toContain('open sesame')
    const row = await rowOf('sho.rt', alias)
    expect(row?.accountId).toBe(account.id)
    expect(row?.passwordHash).toStartWith('$argon2id$')
    expect(await Bun.password.verify('open sesame 42', row!.passwordHash!)).toBe(true)
    expect(row?.activatedAt?.toISOString()).toBe('2099-06-01T09:00:00.000Z')
    // The cache record says "protected" and "not yet active", never the hash.
    const raw = (await api.adapters.kv.get(linkCacheKey('sho.rt', alias))) ?? ''
    expect(decodeCachedLink(raw), raw).toEqual({ v: 1, id: row!.id, url: 'https://example.com/launch', exp: Date.parse(body.expiration), act: Date.parse(body.activated_at), pw: 1 })
    expect(raw).not.toContain('argon2')
  })

  test('without alias or expiration: a generated alias and the 30-day default; Pro meta has no upgrade hint', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const res = await shorten(account.key, { url: 'https://example.com/plain' })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data.alias, show(res)).toMatch(/^[A-Za-z0-9]{7}$/)
    expect(Date.parse(res.body.data.expires_at) - Date.parse(res.body.data.created_at), show(res)).toBe(DEFAULT_LINK_TTL_MS)
    expect(res.body.data.has_password, show(res)).toBe(false)
    expect(res.body.meta, show(res)).toMatchObject({ account_type: 'pro', usage: { links_this_month: 1, links_per_month: 50_000 } })
    expect(res.body.meta.upgrade, show(res)).toBeUndefined()
    expect(res.headers.get('x-ratelimit-limit'), show(res)).toBe('120')
  })

  test('alias rules on the default domain: 4-64 characters, reserved words and taken aliases are refused', async () => {
    const account = await newAccount(api.deps.db)
    const other = await newAccount(api.deps.db)
    const taken = freshAlias('taken')
    expect((await shorten(other.key, { url: 'https://example.com/o', alias: taken })).status).toBe(200)
    const cases: [unknown, number, string, string][] = [
      [{ url: 'https://example.com/x', alias: 'abc' }, 400, 'VALIDATION_FAILED', 'body.alias: must be 4-64'],
      [{ url: 'https://example.com/x', alias: 'a'.repeat(65) }, 400, 'VALIDATION_FAILED', 'body.alias'],
      [{ url: 'https://example.com/x', alias: 'no spaces' }, 400, 'VALIDATION_FAILED', 'body.alias'],
      [{ url: 'https://example.com/x', alias: 'swagger' }, 409, 'ALIAS_TAKEN', 'reserved'],
      [{ url: 'https://example.com/x', alias: 'Health' }, 409, 'ALIAS_TAKEN', 'reserved'],
      [{ url: 'https://example.com/x', alias: taken }, 409, 'ALIAS_TAKEN', `"${taken}" is taken on sho.rt`],
      [{ url: 'https://example.com/x', alias: taken, domain: 'SHO.RT.' }, 409, 'ALIAS_TAKEN', 'taken'],
    ]
    for (const [body, status, code, hint] of cases) {
      const res = await shorten(account.key, body)
      expect(res.status, `${JSON.stringify(body)}: ${show(res)}`).toBe(status)
      expect(res.body.error, show(res)).toBe(code)
      expect(res.body.hint, show(res)).toContain(hint)
    }
    // Aliases are case-sensitive: another spelling is another alias.
    expect((await shorten(account.key, { url: 'https://example.com/x', alias: taken.toUpperCase() })).status).toBe(200)
    // Nothing was created by the refusals.
    expect((await api.deps.db.select().from(links).where(eq(links.accountId, account.id))).length).toBe(1)
  })

  test('a verified custom domain of the account takes 1-character aliases and reserved words', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const host = await newDomain(api.deps.db, account.id)
    const res = await shorten(account.key, { url: 'https://example.com/d', alias: 'd', domain: host.toUpperCase() + '.' })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data, show(res)).toMatchObject({ short_url: `https://${host}/d`, alias: 'd', domain: host })
    expect((await shorten(account.key, { url: 'https://example.com/api', alias: 'api', domain: host })).status).toBe(200)
    const again = await shorten(account.key, { url: 'https://example.com/d2', alias: 'd', domain: host })
    expect(again.status, show(again)).toBe(409)
    expect(again.body.error).toBe('ALIAS_TAKEN')
    // The same alias on the default domain is another link (and too short there).
    expect((await shorten(account.key, { url: 'https://example.com/d', alias: 'd' })).body.error).toBe('VALIDATION_FAILED')
    const generated = await shorten(account.key, { url: 'https://example.com/g', domain: host })
    expect(generated.body.data?.domain, show(generated)).toBe(host)
    expect(decodeCachedLink((await api.adapters.kv.get(linkCacheKey(host, 'd'))) ?? '')?.url).toBe('https://example.com/d')
  })

  test('security: unknown, foreign and unverified domains are 403 DOMAIN_NOT_ALLOWED; a foreign one looks like an unknown one', async () => {
    const account = await newAccount(api.deps.db)
    const other = await newAccount(api.deps.db)
    const foreign = await newDomain(api.deps.db, other.id)
    const unverified = await newDomain(api.deps.db, account.id, { verified: false })
    const unknown = `nobody-${crypto.randomUUID().slice(0, 8)}.example.com`
    const hints: Record<string, string> = {}
    for (const [name, domain] of Object.entries({ foreign, unknown, unverified })) {
      const res = await shorten(account.key, { url: 'https://example.com/x', alias: freshAlias(), domain })
      expect(res.status, `${name}: ${show(res)}`).toBe(403)
      expect(res.body.error, show(res)).toBe('DOMAIN_NOT_ALLOWED')
      hints[name] = res.body.hint.replace(domain, '<host>')
    }
    expect(hints.foreign).toBe(hints.unknown!)
    expect(hints.unverified).toContain('not verified')
    // The owner of the foreign domain can use it.
    expect((await shorten(other.key, { url: 'https://example.com/x', alias: 'x', domain: foreign })).status).toBe(200)
  })

  test('dates: expiration must be in the future, activation before expiration; past activation is "active now"', async () => {
    const account = await newAccount(api.deps.db)
    const cases: [unknown, string][] = [
      [{ url: 'https://example.com/x', expiration: '2001-01-01T00:00:00Z' }, 'body.expiration: must be in the future'],
      [{ url: 'https://example.com/x', expiration: 'soon' }, 'body.expiration'],
      [{ url: 'https://example.com/x', activated_at: '2098-01-01T00:00:00Z', expiration: '2097-01-01T00:00:00Z' }, 'body.activated_at: must be before'],
      // With the default expiry of 30 days, an activation in 60 days would never be reached.
      [{ url: 'https://example.com/x', activated_at: new Date(Date.now() + 60 * 86_400_000).toISOString() }, 'body.activated_at'],
      [{ url: 'https://example.com/x', activated_at: '2030-02-30T00:00:00Z' }, 'body.activated_at'],
      [{ url: 'https://example.com/x', activated_at: '0000-01-01T00:00:00Z' }, 'body.activated_at: must be between the years 1 and 9999'],
      [{ url: 'https://example.com/x', activated_at: '2026-01-01T23:59:60Z' }, 'body.activated_at'],
    ]
    for (const [body, hint] of cases) {
      const res = await shorten(account.key, body)
      expect(res.status, `${JSON.stringify(body)}: ${show(res)}`).toBe(400)
      expect(res.body.error, show(res)).toBe('VALIDATION_FAILED')
      expect(res.body.hint, show(res)).toContain(hint)
    }
    const past = await shorten(account.key, { url: 'https://example.com/x', activated_at: '2020-01-01T00:00:00Z' })
    expect(past.status, show(past)).toBe(200)
  })

  test('the URL rules of guest links apply', async () => {
    const account = await newAccount(api.deps.db)
    for (const [url, code] of [['javascript:alert(1)', 'INVALID_URL'], ['https://sho.rt/loop', 'URL_POINTS_TO_SHORT_DOMAIN']]) {
      const res = await shorten(account.key, { url })
      expect(res.status, show(res)).toBe(400)
      expect(res.body.error, show(res)).toBe(code)
    }
  })

  test('security: unknown and revoked keys are 401; authentication comes before validation', async () => {
    const account = await newAccount(api.deps.db)
    await api.deps.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.accountId, account.id))
    for (const key of [account.key, 'mk_' + 'Z'.repeat(43)]) {
      const res = await shorten(key, { url: 5 })
      expect(res.status, show(res)).toBe(401)
      expect(res.body.error, show(res)).toBe('UNAUTHORIZED')
    }
  })
})

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
    expect(res.body.meta.notices.map((n: { field: string }) => n.field), show(res)).toEqual(['alias'])
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
