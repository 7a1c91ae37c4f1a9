import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { guestSessions } from '../../db/schema'
import { call, show, testApi, uniqueIp, type TestApp } from '../../../test/support/api'
import { GUEST_LIMITS } from './model'
import { GUEST_TOKEN_RATE } from './service'
import { hashSecret } from '../../lib/secrets'

let app: TestApp
let db: Awaited<ReturnType<typeof testApi>>['deps']['db']

beforeAll(async () => {
  const api = await testApi()
  app = api.app
  db = api.deps.db
})

describe('POST /api/v1/guest/token', () => {
  test('creates a guest session and returns the token once, with limits and meta', async () => {
    const before = Date.now()
    const res = await call(app, 'POST', '/api/v1/guest/token')
    expect(res.status, show(res)).toBe(200)
    expect(res.body.success, show(res)).toBe(true)
    const { guest_token, expires_at, limits } = res.body.data
    expect(guest_token, show(res)).toMatch(/^gt_[A-Za-z0-9_-]{43}$/)
    expect(limits, show(res)).toEqual({ max_links: 10, max_requests: 100, expires_in_seconds: 86400 })
    const expires = Date.parse(expires_at)
    expect(expires - before, show(res)).toBeGreaterThanOrEqual(86_400_000 - 1000)
    expect(expires - Date.now(), show(res)).toBeLessThanOrEqual(86_400_000 + 1000)
    expect(typeof res.body.meta.hint, show(res)).toBe('string')
    expect(res.headers.get('cache-control'), show(res)).toBe('no-store')
    expect(res.headers.get('x-ratelimit-limit'), show(res)).toBe(String(GUEST_TOKEN_RATE.limit))
  })

  test('ignores an empty or JSON body but refuses a malformed one with 400 JSON', async () => {
    const empty = await call(app, 'POST', '/api/v1/guest/token', { body: '', headers: { 'content-type': 'application/json' } })
    expect(empty.status, show(empty)).toBe(200)
    const json = await call(app, 'POST', '/api/v1/guest/token', { body: { anything: 1 } })
    expect(json.status, show(json)).toBe(200)
    const bad = await call(app, 'POST', '/api/v1/guest/token', { body: '{nope', headers: { 'content-type': 'application/json' } })
    expect(bad.status, show(bad)).toBe(400)
    expect(bad.body.error, show(bad)).toBe('MALFORMED_JSON')
  })

  test('allows 10 tokens an hour per client IP, then 429 RATE_LIMITED with Retry-After', async () => {
    const ip = uniqueIp()
    for (let i = 0; i < GUEST_TOKEN_RATE.limit; i++) {
      const ok = await call(app, 'POST', '/api/v1/guest/token', { ip })
      expect(ok.status, `token ${i + 1}: ${show(ok)}`).toBe(200)
    }
    const limited = await call(app, 'POST', '/api/v1/guest/token', { ip })
    expect(limited.status, show(limited)).toBe(429)
    expect(limited.body, show(limited)).toMatchObject({ success: false, error: 'RATE_LIMITED', limit: 10, remaining: 0 })
    const retryAfter = Number(limited.headers.get('retry-after'))
    expect(retryAfter, show(limited)).toBeGreaterThan(0)
    // The window's end is rounded up to whole seconds, so at most one second over the hour.
    expect(retryAfter, show(limited)).toBeLessThanOrEqual(3601)
    expect(limited.headers.get('x-ratelimit-remaining'), show(limited)).toBe('0')
    // Another IP is not affected.
    const other = await call(app, 'POST', '/api/v1/guest/token', { ip: uniqueIp() })
    expect(other.status, show(other)).toBe(200)
  })

  test('security: the token is stored only as its SHA-256 hash', async () => {
    const res = await call(app, 'POST', '/api/v1/guest/token')
    const token: string = res.body.data.guest_token
    const byHash = await db
      .select()
      .from(guestSessions)
      .where(eq(guestSessions.tokenHash, hashSecret(token)))
    expect(byHash.length, show(res)).toBe(1)
    expect(byHash[0]!.tokenHash, show(res)).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.stringify(byHash[0]), show(res)).not.toContain(token)
    const byPlain = await db.select().from(guestSessions).where(eq(guestSessions.tokenHash, token))
    expect(byPlain.length).toBe(0)
  })

  test('security: an Authorization header is neither needed nor used', async () => {
    const res = await call(app, 'POST', '/api/v1/guest/token', { token: 'mk_definitely_not_a_real_key_123' })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data.limits.max_links, show(res)).toBe(GUEST_LIMITS.max_links)
  })
})
