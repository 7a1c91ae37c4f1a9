// POST /api/v1/guest/verify: the Free account made from a guest (its links claimed), wrong, malformed,
// expired and replaced codes, races on one address or one code, and what verify does not give away.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { linkCacheKey } from '../../../core/link-cache'
import { accounts, emailVerifications, links } from '../../db/schema'
import { call, newGuestToken, show } from '../../../test/support/api'
import { MAX_CODE_ATTEMPTS } from './service'
import { latestCode, signUp, uniqueEmail } from '../../../test/support/signup'
import { api, app, freshLimiterApp, register, setUp, sink, tearDown, verify } from '../../../test/support/suites/registration'

beforeAll(setUp)
afterAll(tearDown)

describe('POST /api/v1/guest/verify', () => {
  test('creates a Free account: api_key once, links claimed, plan, limits; the cache record does not change', async () => {
    const token = await newGuestToken(app)
    const aliases: string[] = []
    for (const path of ['a', 'b']) {
      const made = await call(app, 'POST', '/api/v1/shorten', { token, body: { url: `https://example.com/${path}` } })
      expect(made.status, show(made)).toBe(200)
      aliases.push(made.body.data.alias)
    }
    const cachedBefore = await Promise.all(aliases.map((a) => api.deps.kv.get(linkCacheKey('sho.rt', a))))
    const email = uniqueEmail('verify')
    expect((await register(token, email)).status).toBe(200)
    const res = await verify(token, email, latestCode(sink, email))
    expect(res.status, show(res)).toBe(200)
    const { data, meta } = res.body
    expect(data.api_key, show(res)).toMatch(/^mk_[A-Za-z0-9_-]{43}$/)
    expect(data.links_claimed, show(res)).toBe(2)
    expect(data.plan, show(res)).toBe('free')
    expect(data.limits, show(res)).toMatchObject({ requests_per_minute: 30, links_per_month: 1000, custom_domains: 1, stats: false })
    expect(meta.account_type, show(res)).toBe('free')
    expect(meta.upgrade.url, show(res)).toBe('https://api.sho.rt/api/v1/account/upgrade')
    expect(meta.usage.links_this_month, show(res)).toBe(2)
    expect(meta.notices, show(res)).toContainEqual(expect.objectContaining({ type: 'guest_token_retired' }))

    const [account] = await api.deps.db.select().from(accounts).where(eq(accounts.email, email))
    expect(account?.plan).toBe('free')
    const owned = await api.deps.db.select().from(links).where(eq(links.accountId, account!.id))
    expect(owned.map((l) => l.alias).sort()).toEqual([...aliases].sort())
    expect(
      owned.every((l) => l.guestId !== null),
      'guest_id kept',
    ).toBe(true)
    const cachedAfter = await Promise.all(aliases.map((a) => api.deps.kv.get(linkCacheKey('sho.rt', a))))
    expect(cachedAfter).toEqual(cachedBefore)

    // The key works; the guest token has become the account and stops working.
    const status = await call(app, 'GET', '/api/v1/account/status', { token: data.api_key })
    expect(status.status, show(status)).toBe(200)
    expect(status.body.data.email, show(status)).toBe(email)
    const retired = await call(app, 'GET', '/api/v1/account/status', { token })
    expect(retired.status, show(retired)).toBe(401)
  })

  test('400 INVALID_CODE with the attempts left, then 429 TOO_MANY_ATTEMPTS: the fifth wrong code burns it', async () => {
    const token = await newGuestToken(app)
    const email = uniqueEmail('wrong')
    expect((await register(token, email)).status).toBe(200)
    const code = latestCode(sink, email)
    const wrong = code === '000000' ? '000001' : '000000'
    for (let left = MAX_CODE_ATTEMPTS - 1; left >= 1; left--) {
      const res = await verify(token, email, wrong)
      expect(res.status, show(res)).toBe(400)
      expect(res.body, show(res)).toMatchObject({ error: 'INVALID_CODE', remaining: left, limit: MAX_CODE_ATTEMPTS })
      expect(res.body.hint, show(res)).toContain(`${left} attempt`)
    }
    const fifth = await verify(token, email, wrong)
    expect(fifth.status, show(fifth)).toBe(429)
    expect(fifth.body, show(fifth)).toMatchObject({ error: 'TOO_MANY_ATTEMPTS', remaining: 0 })
    expect(Number(fifth.headers.get('retry-after')), show(fifth)).toBeGreaterThan(0)
    // Burnt: even the right code is refused, and no account exists.
    const right = await verify(token, email, code)
    expect(right.status, show(right)).toBe(429)
    expect(await api.deps.db.select().from(accounts).where(eq(accounts.email, email))).toEqual([])
  })

  test('a malformed code does not cost an attempt; spaces and dashes are ignored', async () => {
    const token = await newGuestToken(app)
    const email = uniqueEmail('format')
    expect((await register(token, email)).status).toBe(200)
    const bad = await verify(token, email, 'abc')
    expect(bad.status, show(bad)).toBe(400)
    expect(bad.body, show(bad)).toMatchObject({ error: 'INVALID_CODE', remaining: MAX_CODE_ATTEMPTS })
    const code = latestCode(sink, email)
    const ok = await verify(token, email, `${code.slice(0, 3)} ${code.slice(3)}`)
    expect(ok.status, show(ok)).toBe(200)
  })

  test('400 CODE_EXPIRED after 15 minutes', async () => {
    const token = await newGuestToken(app)
    const email = uniqueEmail('expired')
    expect((await register(token, email)).status).toBe(200)
    const later = await freshLimiterApp({ now: () => Date.now() + 15 * 60_000 + 1000 })
    const res = await verify(token, email, latestCode(sink, email), later)
    expect(res.status, show(res)).toBe(400)
    expect(res.body.error, show(res)).toBe('CODE_EXPIRED')
  })

  test('a newer code replaces the older one; a code never requested is INVALID_CODE', async () => {
    const token = await newGuestToken(app)
    const email = uniqueEmail('replace')
    expect((await register(token, email)).status).toBe(200)
    const first = latestCode(sink, email)
    // A newer code, drawn again in the one time in a million it equals the first (each from an app of its
    // own: the one-a-minute window is the app's).
    let latest = first
    for (let draw = 0; draw < 3 && latest === first; draw++) {
      expect((await register(token, email, await freshLimiterApp())).status).toBe(200)
      latest = latestCode(sink, email)
    }
    expect(latest, 'a newer code').not.toBe(first)
    const old = await verify(token, email, first)
    expect(old.status, show(old)).toBe(400)
    expect(old.body.error, show(old)).toBe('INVALID_CODE')
    const never = await verify(token, uniqueEmail('never'), '123456')
    expect(never.status, show(never)).toBe(400)
    expect(never.body, show(never)).toMatchObject({ error: 'INVALID_CODE', remaining: null })
    expect((await verify(token, email, latest)).status).toBe(200)
  })

  test('409 EMAIL_TAKEN when the address was registered meanwhile', async () => {
    const email = uniqueEmail('taken')
    const other = await newGuestToken(app)
    expect((await register(other, email)).status).toBe(200)
    const otherCode = latestCode(sink, email)
    await signUp(await freshLimiterApp(), sink, { email })
    const res = await verify(other, email, otherCode)
    expect(res.status, show(res)).toBe(409)
    expect(res.body.error, show(res)).toBe('EMAIL_TAKEN')
  })

  test('race: two verifies for the same address at once → one 200, one 409 (the unique e-mail decides)', async () => {
    const email = uniqueEmail('race')
    const [a, b] = [await newGuestToken(app), await newGuestToken(app)]
    expect((await register(a, email)).status).toBe(200)
    const codeA = latestCode(sink, email)
    expect((await register(b, email, await freshLimiterApp())).status).toBe(200)
    const codeB = latestCode(sink, email)
    const results = await Promise.all([verify(a, email, codeA), verify(b, email, codeB)])
    expect(results.map((r) => r.status).sort(), results.map(show).join('\n')).toEqual([200, 409])
    expect(results.find((r) => r.status === 409)!.body.error).toBe('EMAIL_TAKEN')
    expect((await api.deps.db.select().from(accounts).where(eq(accounts.email, email))).length).toBe(1)
  })

  test('race: the same code sent twice at once → exactly one account', async () => {
    const token = await newGuestToken(app)
    const email = uniqueEmail('twice')
    expect((await register(token, email)).status).toBe(200)
    const code = latestCode(sink, email)
    const results = await Promise.all([verify(token, email, code), verify(token, email, code)])
    const statuses = results.map((r) => r.status).sort()
    // The loser meets the unique e-mail (409), or, when the winner committed first, the used code (400)
    // or the retired guest token (401); never a second account.
    expect(statuses[0], results.map(show).join('\n')).toBe(200)
    expect([400, 401, 409], results.map(show).join('\n')).toContain(statuses[1]!)
    expect((await api.deps.db.select().from(accounts).where(eq(accounts.email, email))).length).toBe(1)
  })

  test('security: verify does not tell whether an address has an account without its code', async () => {
    const { email } = await signUp(app, sink)
    const res = await verify(await newGuestToken(app), email, '123456')
    expect(res.status, show(res)).toBe(400)
    expect(res.body.error, show(res)).toBe('INVALID_CODE')
  })

  test('security: the code is bound to the guest token that asked for it; API keys are 401', async () => {
    const owner = await newGuestToken(app)
    const email = uniqueEmail('bound')
    expect((await register(owner, email)).status).toBe(200)
    const code = latestCode(sink, email)
    const intruder = await newGuestToken(app)
    const stolen = await verify(intruder, email, code)
    expect(stolen.status, show(stolen)).toBe(400)
    expect(stolen.body.error, show(stolen)).toBe('INVALID_CODE')
    const { apiKey } = await signUp(app, sink)
    const withKey = await verify(apiKey, email, code)
    expect(withKey.status, show(withKey)).toBe(401)
    // Nothing was spent: the owner still verifies.
    const [row] = await api.deps.db
      .select()
      .from(emailVerifications)
      .where(and(eq(emailVerifications.email, email)))
    expect(row!.attempts).toBe(0)
    expect((await verify(owner, email, code)).status).toBe(200)
  })
})
