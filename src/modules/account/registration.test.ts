import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryLimiter } from '../../adapters/memory-limiter'
import { linkCacheKey } from '../../core/link-cache'
import { accounts, emailVerifications, links } from '../../db/schema'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'
import { call, newGuestToken, show, testApi, testConfig, type TestApp } from '../../../test/support/api'
import { codePepper, generateCode, hashCode, MAX_CODE_ATTEMPTS, REGISTER_RATES } from './registration'
import { latestCode, signUp, uniqueEmail } from '../../../test/support/signup'
import { hashSecret } from '../../lib/secrets'

let sink: SmtpSink
let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
const outboxDir = mkdtempSync(join(tmpdir(), 'outbox-test-'))

/** The same database and cache, a fresh limiter: a second "server" whose rate windows are empty. */
async function freshLimiterApp(overrides: Parameters<typeof testApi>[0] = {}) {
  return (await testApi({ config: api.deps.config, limiter: new MemoryLimiter(), ...overrides })).app
}

beforeAll(async () => {
  sink = await startSmtpSink()
  api = await testApi({ config: testConfig({ SMTP_URL: sink.url, MAIL_FROM: 'Links <no-reply@sho.rt>' }) })
  app = api.app
})
afterAll(async () => {
  await sink.close()
  rmSync(outboxDir, { recursive: true, force: true })
})

async function register(token: string, email: string, target: TestApp = app) {
  return call(target, 'POST', '/api/v1/guest/register', { token, body: { email } })
}

async function verify(token: string, email: string, code: string, target: TestApp = app) {
  return call(target, 'POST', '/api/v1/guest/verify', { token, body: { email, code } })
}

describe('POST /api/v1/guest/register', () => {
  test('mails a six-digit code through SMTP; answers success, message and meta', async () => {
    const token = await newGuestToken(app)
    const email = uniqueEmail('reg')
    const res = await register(token, email)
    expect(res.status, show(res)).toBe(200)
    expect(res.body.success, show(res)).toBe(true)
    expect(res.body.message, show(res)).toContain(email)
    expect(res.body.meta.account_type, show(res)).toBe('guest')
    expect(res.body.meta.usage.requests_made, show(res)).toBe(1)
    expect(res.body.meta.notices, show(res)).toEqual([])
    const mails = sink.to(email)
    expect(mails.length).toBe(1)
    expect(mails[0]!.from).toBe('no-reply@sho.rt')
    expect(latestCode(sink, email)).toMatch(/^\d{6}$/)
  })

  test('normalises the address: trimmed and lower-case', async () => {
    const token = await newGuestToken(app)
    const email = uniqueEmail('case')
    const res = await register(token, `  ${email.toUpperCase()} `)
    expect(res.status, show(res)).toBe(200)
    expect(sink.to(email).length, show(res)).toBe(1)
    const rows = await api.deps.db.select().from(emailVerifications).where(eq(emailVerifications.email, email))
    expect(rows.length).toBe(1)
  })

  test('400 for a body that is not an e-mail address', async () => {
    const token = await newGuestToken(app)
    for (const body of [{ email: 'not-an-address' }, {}, { email: 42 }, { email: `${'a'.repeat(250)}@example.com` }]) {
      const res = await call(app, 'POST', '/api/v1/guest/register', { token, body })
      expect(res.status, show(res)).toBe(400)
      expect(res.body.error, show(res)).toBe('VALIDATION_FAILED')
      expect(res.body.hint, show(res)).toContain('body')
    }
  })

  test('409 EMAIL_TAKEN when the address already has an account (any case)', async () => {
    const { email } = await signUp(app, sink)
    const token = await newGuestToken(app)
    const before = sink.received.length
    const res = await register(token, email.toUpperCase())
    expect(res.status, show(res)).toBe(409)
    expect(res.body, show(res)).toMatchObject({ success: false, error: 'EMAIL_TAKEN', meta: { account_type: 'guest' } })
    expect(sink.received.length, 'no mail sent').toBe(before)
  })

  test('429 for a second code to the same address within a minute (any guest), with Retry-After', async () => {
    const email = uniqueEmail('resend')
    expect((await register(await newGuestToken(app), email)).status).toBe(200)
    for (const token of [await newGuestToken(app), await newGuestToken(app)]) {
      const res = await register(token, email)
      expect(res.status, show(res)).toBe(429)
      expect(res.body.error, show(res)).toBe('RATE_LIMITED')
      expect(res.body.hint, show(res)).toContain('less than a minute')
      const retryAfter = Number(res.headers.get('retry-after'))
      expect(retryAfter, show(res)).toBeGreaterThan(0)
      // The window's end is rounded up to whole seconds, so at most one second over the minute.
      expect(retryAfter, show(res)).toBeLessThanOrEqual(61)
    }
    expect(sink.to(email).length).toBe(1)
  })

  test(`429 after ${REGISTER_RATES.perGuest.limit} codes an hour from one guest token`, async () => {
    const token = await newGuestToken(app)
    for (let i = 0; i < REGISTER_RATES.perGuest.limit; i++) expect((await register(token, uniqueEmail('many'))).status).toBe(200)
    const res = await register(token, uniqueEmail('many'))
    expect(res.status, show(res)).toBe(429)
    expect(res.body.hint, show(res)).toContain('guest token')
    expect(Number(res.headers.get('retry-after')), show(res)).toBeGreaterThan(60)
  })

  test('503 MAIL_UNAVAILABLE when the relay refuses; that code is retired', async () => {
    const token = await newGuestToken(app)
    const email = uniqueEmail('relay')
    sink.failNext(1)
    const res = await register(token, email)
    expect(res.status, show(res)).toBe(503)
    expect(res.body.error, show(res)).toBe('MAIL_UNAVAILABLE')
    expect(Number(res.headers.get('retry-after')), show(res)).toBe(60)
    const [row] = await api.deps.db.select().from(emailVerifications).where(eq(emailVerifications.email, email))
    expect(row?.usedAt, 'retired').not.toBeNull()
  })

  test('without SMTP_URL: development delivery to the log and the outbox file, marked in meta', async () => {
    const outbox = join(outboxDir, 'outbox.log')
    const dev = (await testApi({ config: testConfig({ MAIL_OUTBOX: outbox }) })).app
    const token = await newGuestToken(dev)
    const email = uniqueEmail('dev')
    const res = await register(token, email, dev)
    expect(res.status, show(res)).toBe(200)
    expect(res.body.meta.notices, show(res)).toEqual([expect.objectContaining({ type: 'development_delivery' })])
    const file = readFileSync(outbox, 'utf8')
    expect(file).toContain('DEVELOPMENT DELIVERY')
    expect(file).toContain(`To: ${email}`)
    const code = /verification code is: (\d{6})/.exec(file.slice(file.lastIndexOf(`To: ${email}`)))?.[1]
    expect(code).toMatch(/^\d{6}$/)
    const verified = await verify(token, email, code!, dev)
    expect(verified.status, show(verified)).toBe(200)
  })

  test('security: API keys and missing tokens are 401; the code is stored only as a keyed hash', async () => {
    const { apiKey } = await signUp(app, sink)
    const withKey = await register(apiKey, uniqueEmail())
    expect(withKey.status, show(withKey)).toBe(401)
    expect(withKey.body.error, show(withKey)).toBe('UNAUTHORIZED')
    const none = await call(app, 'POST', '/api/v1/guest/register', { body: { email: uniqueEmail() } })
    expect(none.status, show(none)).toBe(401)

    const token = await newGuestToken(app)
    const email = uniqueEmail('hash')
    expect((await register(token, email)).status).toBe(200)
    const code = latestCode(sink, email)
    const [row] = await api.deps.db.select().from(emailVerifications).where(eq(emailVerifications.email, email))
    expect(row!.codeHash).toMatch(/^[0-9a-f]{64}$/)
    expect(row!.codeHash).not.toContain(code)
    expect(row!.codeHash).not.toBe(hashSecret(code))
    expect(row!.codeHash).toBe(hashCode(codePepper(api.deps.config), row!.id, email, code))
  })
})

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
    expect(owned.every((l) => l.guestId !== null), 'guest_id kept').toBe(true)
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
    const second = await freshLimiterApp() // the one-a-minute window is the first app's
    expect((await register(token, email, second)).status).toBe(200)
    const latest = latestCode(sink, email)
    if (latest !== first) {
      const old = await verify(token, email, first)
      expect(old.status, show(old)).toBe(400)
      expect(old.body.error, show(old)).toBe('INVALID_CODE')
    }
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
    const [row] = await api.deps.db.select().from(emailVerifications).where(and(eq(emailVerifications.email, email)))
    expect(row!.attempts).toBe(0)
    expect((await verify(owner, email, code)).status).toBe(200)
  })
})

describe('generateCode', () => {
  test('six digits, and draws above the last whole multiple of 10^6 are drawn again (no modulo bias)', () => {
    const limit = Math.floor(2 ** 32 / 1e6) * 1e6
    const draws = [2 ** 32 - 1, limit, limit - 1]
    const code = generateCode((buffer) => void (buffer[0] = draws.shift()!))
    expect(code).toBe(String((limit - 1) % 1e6).padStart(6, '0'))
    expect(draws).toEqual([])
    const seen = new Set(Array.from({ length: 200 }, () => generateCode()))
    for (const c of seen) expect(c).toMatch(/^\d{6}$/)
    expect(seen.size).toBeGreaterThan(190)
  })
})
