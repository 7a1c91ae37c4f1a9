import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { apiKeys } from '../../db/schema'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'
import { call, newGuestToken, show, testApi, testConfig, type TestApp } from '../../../test/support/api'
import { signUp } from '../../../test/support/signup'
import { hashSecret } from '../../lib/secrets'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

let sink: SmtpSink

beforeAll(async () => {
  sink = await startSmtpSink()
  api = await testApi({ config: testConfig({ SMTP_URL: sink.url }) })
  app = api.app
})
afterAll(() => sink.close())

describe('GET /api/v1/account/status', () => {
  test('guest: plan, usage (this request counted), features and meta', async () => {
    const token = await newGuestToken(app)
    const made = await call(app, 'POST', '/api/v1/shorten', { token, body: { url: 'https://example.com/a' } })
    expect(made.status, show(made)).toBe(200)
    const res = await call(app, 'GET', '/api/v1/account/status', { token })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.success, show(res)).toBe(true)
    const { data, meta } = res.body
    expect(data.account_type, show(res)).toBe('guest')
    expect(data.email, show(res)).toBeNull()
    expect(data.plan, show(res)).toMatchObject({ name: 'guest', max_links: 10, max_requests: 100 })
    expect(data.usage, show(res)).toMatchObject({ links_created: 1, links_remaining: 9, requests_made: 2, requests_remaining: 98 })
    expect(Date.parse(data.usage.expires_at), show(res)).toBeGreaterThan(Date.now())
    expect(data.features.custom_alias, show(res)).toBe(false)
    expect(meta.account_type, show(res)).toBe('guest')
    expect(res.headers.get('x-ratelimit-limit'), show(res)).toBe('100')
    expect(res.headers.get('x-ratelimit-remaining'), show(res)).toBe('98')
    expect(Number(res.headers.get('x-ratelimit-reset')), show(res)).toBe(Math.ceil(Date.parse(data.usage.expires_at) / 1000))
  })

  test('without a token: 401 UNAUTHORIZED with a hint', async () => {
    const res = await call(app, 'GET', '/api/v1/account/status')
    expect(res.status, show(res)).toBe(401)
    expect(res.body, show(res)).toMatchObject({ success: false, error: 'UNAUTHORIZED' })
    expect(res.body.hint, show(res)).toContain('Authorization')
  })

  test('security: mk_-looking, garbage, unknown and expired tokens are 401', async () => {
    const token = await newGuestToken(app)
    const later = await testApi({ now: () => Date.now() + 86_400_000 + 60_000 })
    const expired = await call(later.app, 'GET', '/api/v1/account/status', { token })
    expect(expired.status, show(expired)).toBe(401)
    expect(expired.body.hint, show(expired)).toContain('expired')
    for (const bad of ['mk_0123456789abcdefghijklmnop', 'at_0123456789abcdefghijklmnop', `gt_${'A'.repeat(43)}`, 'garbage', 'gt_short']) {
      const res = await call(app, 'GET', '/api/v1/account/status', { token: bad })
      expect(res.status, `${bad}: ${show(res)}`).toBe(401)
      expect(res.body.error, `${bad}: ${show(res)}`).toBe('UNAUTHORIZED')
    }
  })
})

describe('GET /api/v1/account/status with an API key', () => {
  test('Free account: plan and limits, links this month against the quota, requests this minute, features, meta', async () => {
    const { apiKey, email } = await signUp(app, sink, { links: 2 })
    const res = await call(app, 'GET', '/api/v1/account/status', { token: apiKey })
    expect(res.status, show(res)).toBe(200)
    const { data, meta } = res.body
    expect(data.account_type, show(res)).toBe('free')
    expect(data.email, show(res)).toBe(email)
    expect(data.plan, show(res)).toMatchObject({
      name: 'free',
      interval: null,
      pro_since: null,
      limits: { requests_per_minute: 30, links_per_month: 1000, custom_domains: 1, tags: 20, stats: false, attribution: false },
    })
    expect(data.usage, show(res)).toMatchObject({
      links_this_month: 2,
      links_per_month: 1000,
      links_remaining: 998,
      requests_this_minute: 1,
      requests_per_minute: 30,
      requests_remaining: 29,
    })
    const now = new Date()
    expect(data.usage.period_start, show(res)).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString())
    expect(data.features, show(res)).toMatchObject({ custom_alias: true, bulk: true, analytics: false, conversions: false })
    expect(meta, show(res)).toMatchObject({
      account_type: 'free',
      usage: { links_this_month: 2, links_remaining: 998, requests_remaining: 29 },
      upgrade: { url: 'https://api.sho.rt/api/v1/account/upgrade', prices: { monthly: '9.00 USD', yearly: '90.00 USD' } },
    })
    expect(meta.limitations.length, show(res)).toBeGreaterThan(0)
    expect(res.headers.get('x-ratelimit-limit'), show(res)).toBe('30')

    const again = await call(app, 'GET', '/api/v1/account/status', { token: apiKey })
    expect(again.body.data.usage.requests_this_minute, show(again)).toBe(2)
  })

  test('401 for an unknown or revoked key', async () => {
    const { apiKey } = await signUp(app, sink)
    await api.deps.db
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(eq(apiKeys.keyHash, hashSecret(apiKey)))
    const revoked = await call(app, 'GET', '/api/v1/account/status', { token: apiKey })
    expect(revoked.status, show(revoked)).toBe(401)
    expect(revoked.body.error, show(revoked)).toBe('UNAUTHORIZED')
    const unknown = await call(app, 'GET', '/api/v1/account/status', { token: `mk_${'Z'.repeat(43)}` })
    expect(unknown.status, show(unknown)).toBe(401)
  })

  test('security: each key sees its own account only', async () => {
    const [a, b] = [await signUp(app, sink, { links: 1 }), await signUp(app, sink)]
    const resA = await call(app, 'GET', '/api/v1/account/status', { token: a.apiKey })
    const resB = await call(app, 'GET', '/api/v1/account/status', { token: b.apiKey })
    expect(resA.body.data.email, show(resA)).toBe(a.email)
    expect(resB.body.data.email, show(resB)).toBe(b.email)
    expect(resA.body.data.usage.links_this_month, show(resA)).toBe(1)
    expect(resB.body.data.usage.links_this_month, show(resB)).toBe(0)
  })
})
