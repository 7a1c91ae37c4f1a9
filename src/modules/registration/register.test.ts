// POST /api/v1/guest/register: the verification code mailed through a real SMTP server on loopback,
// address rules, rate limits, a failing relay, development delivery, and how the code is stored; and
// generateCode.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { emailVerifications } from '../../db/schema'
import { call, newGuestToken, show, testApi, testConfig } from '../../../test/support/api'
import { codePepper, generateCode, hashCode, REGISTER_RATES } from './service'
import { latestCode, signUp, uniqueEmail } from '../../../test/support/signup'
import { hashSecret } from '../../lib/secrets'
import { api, app, outboxDir, register, setUp, sink, tearDown, verify } from '../../../test/support/suites/registration'

beforeAll(setUp)
afterAll(tearDown)

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
