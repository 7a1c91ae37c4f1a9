import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { decodeCachedLink, linkCacheKey } from '../../core/link-cache'
import { links } from '../../db/schema'
import { call, newGuestToken, show, testApi, TEST_INTERNAL_SECRET, type TestApp } from '../../../test/support/api'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

beforeAll(async () => {
  api = await testApi()
  app = api.app
})

const secret = { 'x-internal-secret': TEST_INTERNAL_SECRET }
const resolve = (query: string, headers: Record<string, string> = secret, target: TestApp = app) =>
  call(target, 'GET', `/internal/resolve?${query}`, { headers })

async function createLink(target: TestApp = app): Promise<{ alias: string; expires_at: string }> {
  const token = await newGuestToken(target)
  const res = await call(target, 'POST', '/api/v1/shorten', { token, body: { url: 'https://example.com/resolve-me' } })
  if (res.status !== 200) throw new Error(show(res))
  return res.body.data
}

describe('GET /internal/resolve', () => {
  test('returns the CachedLink and refills the cache', async () => {
    const link = await createLink()
    const key = linkCacheKey('sho.rt', link.alias)
    await api.adapters.kv.del(key)
    const res = await resolve(`domain=SHO.RT&alias=${link.alias}`)
    expect(res.status, show(res)).toBe(200)
    const [row] = await api.deps.db.select().from(links).where(eq(links.alias, link.alias))
    expect(res.body, show(res)).toEqual({ v: 1, id: row!.id, url: 'https://example.com/resolve-me', exp: Date.parse(link.expires_at) })
    expect(decodeCachedLink((await api.adapters.kv.get(key)) ?? ''), show(res)).toEqual(res.body)
    expect(res.headers.get('cache-control'), show(res)).toBe('no-store')
  })

  test('flags password and activation; returns expired links as they are', async () => {
    const alias = `pw-${crypto.randomUUID().slice(0, 8)}`
    const act = Date.now() + 3_600_000
    const exp = Date.now() - 1000
    await api.deps.db.insert(links).values({
      id: `link_${crypto.randomUUID()}`,
      domain: 'sho.rt',
      alias,
      url: 'https://example.com/locked',
      passwordHash: '$argon2id$not-a-real-hash',
      activatedAt: new Date(act),
      expiresAt: new Date(exp),
    })
    const res = await resolve(`domain=sho.rt&alias=${alias}`)
    expect(res.status, show(res)).toBe(200)
    expect(res.body, show(res)).toMatchObject({ v: 1, url: 'https://example.com/locked', pw: 1, act, exp })
    expect(res.text, show(res)).not.toContain('argon2')
  })

  test('unknown link is 404 LINK_NOT_FOUND; bad query is 400 VALIDATION_FAILED', async () => {
    const missing = await resolve(`domain=sho.rt&alias=nope-${crypto.randomUUID().slice(0, 8)}`)
    expect(missing.status, show(missing)).toBe(404)
    expect(missing.body.error, show(missing)).toBe('LINK_NOT_FOUND')
    for (const query of ['domain=sho.rt', 'alias=abc', 'domain=sho.rt&alias=bad%20alias', 'domain=%00&alias=abc', 'domain=sho.rt&alias=%E0%A4%A']) {
      const res = await resolve(query)
      expect(res.status, `${query}: ${show(res)}`).toBe(400)
      expect(res.body.error, `${query}: ${show(res)}`).toBe('VALIDATION_FAILED')
    }
  })

  test('security: missing or wrong x-internal-secret is 401, checked before anything else', async () => {
    const link = await createLink()
    const cases: Record<string, string>[] = [
      {},
      { 'x-internal-secret': '' },
      { 'x-internal-secret': 'wrong' },
      { 'x-internal-secret': TEST_INTERNAL_SECRET + 'x' },
      { 'x-internal-secret': TEST_INTERNAL_SECRET.slice(0, -1) },
      { authorization: `Bearer ${TEST_INTERNAL_SECRET}` },
    ]
    for (const headers of cases) {
      const res = await resolve(`domain=sho.rt&alias=${link.alias}`, headers)
      expect(res.status, `${JSON.stringify(headers)}: ${show(res)}`).toBe(401)
      expect(res.body.error, show(res)).toBe('UNAUTHORIZED')
      expect(res.text, show(res)).not.toContain('resolve-me')
    }
    const noQuery = await call(app, 'GET', '/internal/resolve')
    expect(noQuery.status, show(noQuery)).toBe(401)
  })
})
