import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { decodeCachedLink, linkCacheKey } from '../../../core/link-cache'
import { links } from '../../db/schema'
import { call, newGuestToken, show, testApi, TEST_INTERNAL_SECRET, type TestApp } from '../../../test/support/api'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

beforeAll(async () => {
  api = await testApi()
  app = api.app
})

const secret = { 'x-internal-secret': TEST_INTERNAL_SECRET }
const resolve = (query: string, headers: Record<string, string> = secret, target: TestApp = app) => call(target, 'GET', `/internal/resolve?${query}`, { headers })

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
      { 'x-internal-secret': `${TEST_INTERNAL_SECRET}x` },
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

describe('POST /internal/unlock', () => {
  async function protectedLink(password = 'correct horse', overrides: Partial<typeof links.$inferInsert> = {}) {
    const id = `link_${crypto.randomUUID()}`
    await api.deps.db.insert(links).values({
      id,
      domain: 'sho.rt',
      alias: `pw-${crypto.randomUUID().slice(0, 8)}`,
      url: 'https://example.com/behind-password',
      passwordHash: await Bun.password.hash(password, { algorithm: 'argon2id', memoryCost: 19_456, timeCost: 2 }),
      ...overrides,
    })
    return id
  }
  const unlock = (body: unknown, headers: Record<string, string> = secret) => call(app, 'POST', '/internal/unlock', { body, headers })

  test('the right password returns the link record; a wrong one is 401 PASSWORD_INCORRECT; nothing echoes it', async () => {
    const id = await protectedLink()
    const ok = await unlock({ link_id: id, password: 'correct horse', ip: '198.51.100.1' })
    expect(ok.status, show(ok)).toBe(200)
    expect(ok.body, show(ok)).toEqual({ v: 1, id, url: 'https://example.com/behind-password', pw: 1 })
    const wrong = await unlock({ link_id: id, password: 'Correct horse', ip: '198.51.100.1' })
    expect(wrong.status, show(wrong)).toBe(401)
    expect(wrong.body.error, show(wrong)).toBe('PASSWORD_INCORRECT')
    expect(wrong.text).not.toContain('orrect horse')
    expect(wrong.text).not.toContain('behind-password')
  })

  test('5 attempts per 15 minutes per IP and link (right ones count too), then 429 with Retry-After', async () => {
    const id = await protectedLink()
    const ip = `203.0.113.${Math.floor(Math.random() * 250)}-${crypto.randomUUID().slice(0, 4)}`
    for (let i = 0; i < 4; i++) expect((await unlock({ link_id: id, password: `guess ${i}`, ip })).status).toBe(401)
    expect((await unlock({ link_id: id, password: 'correct horse', ip })).status).toBe(200)
    const limited = await unlock({ link_id: id, password: 'correct horse', ip })
    expect(limited.status, show(limited)).toBe(429)
    expect(limited.body.error, show(limited)).toBe('RATE_LIMITED')
    const retryAfter = Number(limited.headers.get('retry-after'))
    expect(retryAfter, show(limited)).toBeGreaterThan(0)
    expect(retryAfter, show(limited)).toBeLessThanOrEqual(15 * 60 + 1)
    // Another visitor, or another link, has its own allowance.
    expect((await unlock({ link_id: id, password: 'correct horse', ip: `${ip}-other` })).status).toBe(200)
    expect((await unlock({ link_id: await protectedLink(), password: 'correct horse', ip })).status).toBe(200)
  })

  test('unknown link 404; a link without password unlocks as it is; an unreadable hash matches nothing', async () => {
    const missing = await unlock({ link_id: 'link_nope', password: 'x', ip: '1' })
    expect(missing.status, show(missing)).toBe(404)
    const open = await protectedLink('x', { passwordHash: null })
    expect((await unlock({ link_id: open, password: 'anything', ip: '1' })).body, 'open link').toMatchObject({ id: open })
    const broken = await protectedLink('x', { passwordHash: '$argon2id$not-a-real-hash' })
    expect((await unlock({ link_id: broken, password: 'x', ip: '1' })).status).toBe(401)
  })

  test('bad bodies are 400; security: the secret is checked first, and the route is not public', async () => {
    for (const body of [{}, { link_id: 'x; drop', password: 'a', ip: '1' }, { link_id: 'link_a', password: 'a'.repeat(1025), ip: '1' }, { link_id: 'link_a', password: 1, ip: '1' }]) {
      const res = await unlock(body)
      expect(res.status, `${JSON.stringify(body).slice(0, 60)}: ${show(res)}`).toBe(400)
    }
    const id = await protectedLink()
    for (const headers of [{}, { 'x-internal-secret': 'wrong' }] as Record<string, string>[]) {
      const res = await unlock({ link_id: id, password: 'correct horse', ip: '1' }, headers)
      expect(res.status, show(res)).toBe(401)
      expect(res.body.error, show(res)).toBe('UNAUTHORIZED')
    }
    const doc = await call(app, 'GET', '/swagger/json')
    expect(doc.text).not.toContain('/internal/unlock')
  })
})
