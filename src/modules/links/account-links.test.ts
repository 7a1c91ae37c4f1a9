// POST /api/v1/shorten with an API key: the full request (alias, password, dates), custom domains, the
// URL rules, meta, and keys that are unknown or revoked.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { decodeCachedLink, linkCacheKey } from '../../../core/link-cache'
import { apiKeys, links } from '../../db/schema'
import { show } from '../../../test/support/api'
import { DEFAULT_LINK_TTL_MS } from '../../lib/plans'
import { newAccount, newDomain } from '../../../test/support/fixtures'
import { api, freshAlias, rowOf, setUp, shorten } from '../../../test/support/suites/account-links'

beforeAll(setUp)

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
    const res = await shorten(account.key, { url: 'https://example.com/d', alias: 'd', domain: `${host.toUpperCase()}.` })
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
    for (const [url, code] of [
      ['javascript:alert(1)', 'INVALID_URL'],
      ['https://sho.rt/loop', 'DESTINATION_LOOPS'],
    ]) {
      const res = await shorten(account.key, { url })
      expect(res.status, show(res)).toBe(400)
      expect(res.body.error, show(res)).toBe(code)
    }
  })

  test('security: unknown and revoked keys are 401; authentication comes before validation', async () => {
    const account = await newAccount(api.deps.db)
    await api.deps.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.accountId, account.id))
    for (const key of [account.key, `mk_${'Z'.repeat(43)}`]) {
      const res = await shorten(key, { url: 5 })
      expect(res.status, show(res)).toBe(401)
      expect(res.body.error, show(res)).toBe('UNAUTHORIZED')
    }
  })
})
