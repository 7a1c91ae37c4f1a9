import { beforeAll, describe, expect, test } from 'bun:test'
import { call, newGuestToken, show, testApi, type TestApp } from '../../../test/support/api'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

beforeAll(async () => {
  api = await testApi()
  app = api.app
})

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
    for (const bad of ['mk_0123456789abcdefghijklmnop', 'at_0123456789abcdefghijklmnop', 'gt_' + 'A'.repeat(43), 'garbage', 'gt_short']) {
      const res = await call(app, 'GET', '/api/v1/account/status', { token: bad })
      expect(res.status, `${bad}: ${show(res)}`).toBe(401)
      expect(res.body.error, `${bad}: ${show(res)}`).toBe('UNAUTHORIZED')
    }
  })
})
