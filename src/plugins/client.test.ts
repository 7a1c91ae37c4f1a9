import { describe, expect, test } from 'bun:test'
import type { Server } from 'bun'
import type { LimitResult, Limiter } from '../adapters/ports'
import { call, show, testApi, testConfig, uniqueIp } from '../../test/support/api'
import { clientIp, enforceRateLimit } from './client'
import { ApiError } from './errors'

const request = (headers: Record<string, string> = {}) => new Request('http://localhost/x', { headers })
const fakeServer = (address: string) => ({ requestIP: () => ({ address, family: 'IPv4', port: 1 }) }) as unknown as Server<unknown>

describe('clientIp', () => {
  test('the trusted header wins (taken whole; of a list, the right-most entry), then requestIP, then the server socket, else "unknown"', () => {
    const withHeader = { config: testConfig({ TRUSTED_IP_HEADER: 'X-Real-IP' }), requestIP: undefined }
    expect(clientIp(withHeader, request({ 'x-real-ip': ' 203.0.113.9 ' }), fakeServer('10.9.9.9'))).toBe('203.0.113.9')
    expect(clientIp(withHeader, request({ 'x-real-ip': '6.6.6.6, 203.0.113.9' }), fakeServer('10.9.9.9'))).toBe('203.0.113.9')
    expect(clientIp(withHeader, request(), fakeServer('10.9.9.9'))).toBe('10.9.9.9')
    const plain = { config: testConfig({ TRUSTED_IP_HEADER: '' }), requestIP: undefined }
    // Without a trusted header configured, a client cannot choose its own key.
    expect(clientIp(plain, request({ 'x-forwarded-for': '1.1.1.1' }), fakeServer('10.9.9.9'))).toBe('10.9.9.9')
    expect(clientIp(plain, request(), null)).toBe('unknown')
    expect(clientIp({ ...plain, requestIP: () => '198.51.100.7' }, request(), fakeServer('10.9.9.9'))).toBe('198.51.100.7')
    expect(
      clientIp(
        {
          ...plain,
          requestIP: () => {
            throw new Error('not ours')
          },
        },
        request(),
        null,
      ),
    ).toBe('unknown')
  })

  test('TRUSTED_PROXY_HOPS: the N-th X-Forwarded-For entry from the right; a shorter list falls back to the socket', () => {
    const hops = (n: number) => ({ config: testConfig({ TRUSTED_IP_HEADER: '', TRUSTED_PROXY_HOPS: String(n) }), requestIP: undefined })
    const xff = (value: string) => request({ 'x-forwarded-for': value })
    expect(clientIp(hops(1), xff('6.6.6.6, 203.0.113.9'), fakeServer('10.0.0.2'))).toBe('203.0.113.9')
    expect(clientIp(hops(2), xff('6.6.6.6, 203.0.113.9, 10.0.0.1'), fakeServer('10.0.0.2'))).toBe('203.0.113.9')
    expect(clientIp(hops(2), xff('203.0.113.9'), fakeServer('10.0.0.2'))).toBe('10.0.0.2')
    expect(clientIp(hops(1), request(), fakeServer('10.0.0.2'))).toBe('10.0.0.2')
  })

  test('deps.requestIP keys the per-IP limits when the app is served through app.handle()', async () => {
    const ip = uniqueIp()
    const { app } = await testApi({ config: testConfig({ TRUSTED_IP_HEADER: '' }), requestIP: () => ip })
    for (let i = 0; i < 10; i++) expect((await call(app, 'POST', '/api/v1/guest/token')).status).toBe(200)
    const limited = await call(app, 'POST', '/api/v1/guest/token')
    expect(limited.status, show(limited)).toBe(429)
  })
})

describe('spoofed X-Forwarded-For at the API', () => {
  // Behind one proxy (10.0.0.2) that appends the address it saw: whatever a client puts to the left of
  // that entry, it stays one client with one allowance.
  test('POST /api/v1/guest/token: a new left-most entry on every request does not escape the per-IP limit', async () => {
    const { app } = await testApi({ config: testConfig({ TRUSTED_IP_HEADER: '', TRUSTED_PROXY_HOPS: '1' }), requestIP: () => '10.0.0.2' })
    const real = uniqueIp()
    const forwarded = (i: number) => ({ 'x-forwarded-for': `198.51.100.${i}, ${real}` })
    for (let i = 0; i < 10; i++) expect((await call(app, 'POST', '/api/v1/guest/token', { headers: forwarded(i) })).status).toBe(200)
    const limited = await call(app, 'POST', '/api/v1/guest/token', { headers: forwarded(10) })
    expect(limited.status, show(limited)).toBe(429)
    // Another client behind the same proxy has its own allowance.
    const other = await call(app, 'POST', '/api/v1/guest/token', { headers: { 'x-forwarded-for': uniqueIp() } })
    expect(other.status, show(other)).toBe(200)
  })

  test('TRUSTED_IP_HEADER: a client-sent list in the header does not escape the per-IP limit either', async () => {
    const { app } = await testApi({ config: testConfig({ TRUSTED_IP_HEADER: 'cf-connecting-ip' }), requestIP: () => '10.0.0.2' })
    const real = uniqueIp()
    for (let i = 0; i < 10; i++) {
      const res = await call(app, 'POST', '/api/v1/guest/token', { headers: { 'cf-connecting-ip': `198.51.100.${i},${real}` } })
      expect(res.status, show(res)).toBe(200)
    }
    const limited = await call(app, 'POST', '/api/v1/guest/token', { headers: { 'cf-connecting-ip': `spoofed, ${real}` } })
    expect(limited.status, show(limited)).toBe(429)
  })
})

describe('enforceRateLimit', () => {
  test('a limiter that fails is 503 SERVICE_UNAVAILABLE, not 500', async () => {
    const broken: Limiter = { hit: () => Promise.reject(new Error('redis down')), close: async () => {} }
    const err = await enforceRateLimit(broken, 'k', 1, 1000, Date.now()).catch((e) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect((err as ApiError).code).toBe('SERVICE_UNAVAILABLE')
  })

  test('returns the X-RateLimit headers while allowed', async () => {
    const result: LimitResult = { allowed: true, limit: 60, remaining: 59, resetAt: 1_900_000_000 }
    const limiter: Limiter = { hit: async () => result, close: async () => {} }
    expect(await enforceRateLimit(limiter, 'k', 60, 60_000, Date.now())).toEqual({
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '59',
      'x-ratelimit-reset': '1900000000',
    })
  })
})
