import { beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import type { Kv } from '../../adapters/ports'
import { decodeCachedLink, INVALIDATION_CHANNEL, linkCacheKey } from '../../core/link-cache'
import { links } from '../../db/schema'
import type { Services } from '../../services'
import { call, newGuestToken, show, testApi, uniqueIp, type TestApp } from '../../../test/support/api'
import { DEFAULT_LINK_TTL_MS } from '../account/plans'
import { ALIAS_CHECK_RATE } from './service'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

beforeAll(async () => {
  api = await testApi()
  app = api.app
})

const shorten = (token: string, body: unknown, target: TestApp = app) => call(target, 'POST', '/api/v1/shorten', { token, body })

async function waitFor(check: () => boolean, ms = 2000): Promise<boolean> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (check()) return true
    await Bun.sleep(10)
  }
  return check()
}

describe('POST /api/v1/shorten with a guest token', () => {
  test('creates a link: record per spec 2.3, 30-day expiry, meta with usage', async () => {
    const token = await newGuestToken(app)
    const before = Date.now()
    const res = await shorten(token, { url: 'https://example.com/some/page?x=1' })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.success, show(res)).toBe(true)
    const link = res.body.data
    expect(link.alias, show(res)).toMatch(/^[A-Za-z0-9]{7}$/)
    expect(link, show(res)).toMatchObject({
      short_url: `https://sho.rt/${link.alias}`,
      full_url: 'https://example.com/some/page?x=1',
      domain: 'sho.rt',
      manage_code: null,
      has_password: false,
      clicks: 0,
      last_clicked_at: null,
    })
    const created = Date.parse(link.created_at)
    expect(created, show(res)).toBeGreaterThanOrEqual(before - 1000)
    expect(Date.parse(link.expires_at) - created, show(res)).toBe(DEFAULT_LINK_TTL_MS)
    expect(res.body.meta, show(res)).toMatchObject({
      account_type: 'guest',
      usage: { links_created: 1, links_remaining: 9, requests_made: 1, requests_remaining: 99 },
      notices: [],
    })
    const [row] = await api.deps.db.select().from(links).where(and(eq(links.domain, 'sho.rt'), eq(links.alias, link.alias)))
    expect(row?.id, show(res)).toMatch(/^link_[A-Za-z0-9_-]{22}$/)
    expect(row?.guestId, show(res)).toMatch(/^guest_/)
  })

  test('ignores alias, domain, password, expiration and activated_at, listing each in meta.notices', async () => {
    const token = await newGuestToken(app)
    const res = await shorten(token, {
      url: 'https://example.com/ignored-fields',
      alias: 'my-chosen-alias',
      domain: 'links.example.com',
      password: 'hunter2',
      expiration: '2030-01-01T00:00:00Z',
      activated_at: '2029-01-01T00:00:00Z',
    })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data.alias, show(res)).not.toBe('my-chosen-alias')
    expect(res.body.data.domain, show(res)).toBe('sho.rt')
    expect(res.body.data.has_password, show(res)).toBe(false)
    expect(Date.parse(res.body.data.expires_at) - Date.parse(res.body.data.created_at), show(res)).toBe(DEFAULT_LINK_TTL_MS)
    const fields = res.body.meta.notices.map((n: { field: string }) => n.field)
    expect(fields, show(res)).toEqual(['alias', 'domain', 'password', 'expiration', 'activated_at'])
    expect(res.body.meta.notices[0].message, show(res)).toContain('ignored for guest tokens')
    const [row] = await api.deps.db.select().from(links).where(eq(links.alias, res.body.data.alias))
    expect(row?.passwordHash, show(res)).toBeNull()
    expect(row?.activatedAt, show(res)).toBeNull()
  })

  test('the 11th link of a session is 429 GUEST_LINK_LIMIT with limit fields, even in parallel', async () => {
    const token = await newGuestToken(app)
    const results = await Promise.all(Array.from({ length: 13 }, (_, i) => shorten(token, { url: `https://example.com/p/${i}` })))
    const ok = results.filter((r) => r.status === 200)
    const limited = results.filter((r) => r.status === 429)
    expect(ok.length, results.map(show).join('\n')).toBe(10)
    expect(limited.length, results.map(show).join('\n')).toBe(3)
    const res = limited[0]!
    expect(res.body, show(res)).toMatchObject({
      success: false,
      error: 'GUEST_LINK_LIMIT',
      limit: 10,
      remaining: 0,
      upgrade_url: 'https://api.sho.rt/api/v1/guest/register',
    })
    const retryAfter = Number(res.headers.get('retry-after'))
    expect(retryAfter, show(res)).toBeGreaterThan(0)
    expect(retryAfter, show(res)).toBeLessThanOrEqual(86_400)
    // The refused attempts left no rows behind.
    const [row] = await api.deps.db.select().from(links).where(eq(links.alias, ok[0]!.body.data.alias))
    const count = await api.deps.db.select({ id: links.id }).from(links).where(eq(links.guestId, row!.guestId!))
    expect(count.length).toBe(10)
  })

  test('the 101st request of a token is 429 GUEST_REQUEST_LIMIT, even in parallel', async () => {
    const token = await newGuestToken(app)
    const results = await Promise.all(Array.from({ length: 105 }, () => call(app, 'GET', '/api/v1/account/status', { token })))
    expect(results.filter((r) => r.status === 200).length, results.filter((r) => r.status !== 200).map(show).join('\n')).toBe(100)
    const res = await shorten(token, { url: 'https://example.com/too-many' })
    expect(res.status, show(res)).toBe(429)
    expect(res.body, show(res)).toMatchObject({ error: 'GUEST_REQUEST_LIMIT', limit: 100, remaining: 0 })
    expect(res.body.upgrade_url, show(res)).toContain('/api/v1/guest/register')
    expect(Number(res.headers.get('retry-after')), show(res)).toBeGreaterThan(0)
  })

  const badUrls = [
    'javascript:alert(1)',
    'JavaScript:alert(document.cookie)',
    'java\nscript:alert(1)',
    'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
    'file:///etc/passwd',
    'ftp://example.com/file',
    'vbscript:msgbox(1)',
    'blob:https://example.com/uuid',
    'about:blank',
    'mailto:a@example.com',
    '//example.com/no-scheme',
    'example.com',
    'https://',
    'http://exa mple.com/',
    '',
    'https://example.com/' + 'a'.repeat(2100),
  ]
  const label = (url: string) => JSON.stringify(url.length > 60 ? `${url.slice(0, 30)}… (${url.length} chars)` : url)

  test.each(badUrls.map((url) => [label(url), url]))('refuses %s with 400 INVALID_URL', async (_label, url) => {
    const token = await newGuestToken(app)
    const res = await shorten(token, { url })
    expect(res.status, show(res)).toBe(400)
    expect(res.body.error, show(res)).toBe('INVALID_URL')
    expect(typeof res.body.hint, show(res)).toBe('string')
  })

  test('refuses a NUL in the url with 400 naming body.url (no field may carry control characters)', async () => {
    const res = await shorten(await newGuestToken(app), { url: 'https://example.com/\u0000null' })
    expect(res.status, show(res)).toBe(400)
    expect(res.body.hint, show(res)).toStartWith('body.url:')
  })

  test.each([['https://sho.rt/abc'], ['http://SHO.RT./abc'], ['https://sho.rt:8443/x'], ['https://Sho.Rt']])(
    'refuses a link to its own short domain (%p) with 400 DESTINATION_LOOPS',
    async (url) => {
      const token = await newGuestToken(app)
      const res = await shorten(token, { url })
      expect(res.status, show(res)).toBe(400)
      expect(res.body.error, show(res)).toBe('DESTINATION_LOOPS')
    },
  )

  test('bad bodies are 400 VALIDATION_FAILED naming the field, or MALFORMED_JSON; never 422', async () => {
    const token = await newGuestToken(app)
    const cases: [unknown, string, string][] = [
      [{}, 'VALIDATION_FAILED', 'body.url'],
      [{ url: 42 }, 'VALIDATION_FAILED', 'body.url'],
      [{ url: null }, 'VALIDATION_FAILED', 'body.url'],
      [[{ url: 'https://example.com' }], 'VALIDATION_FAILED', 'body'],
      ['"https://example.com"', 'VALIDATION_FAILED', 'body'],
      ['null', 'VALIDATION_FAILED', 'body'],
      [{ url: 'https://example.com', alias: 'has space' }, 'VALIDATION_FAILED', 'body.alias'],
      [{ url: 'https://example.com', expiration: 'tomorrow' }, 'VALIDATION_FAILED', 'body.expiration'],
      ['{"url": "https://example.com",', 'MALFORMED_JSON', ''],
    ]
    for (const [body, code, field] of cases) {
      const res = await shorten(token, body)
      expect(res.status, `${JSON.stringify(body)}: ${show(res)}`).toBe(400)
      expect(res.body.error, `${JSON.stringify(body)}: ${show(res)}`).toBe(code)
      expect(res.body.hint, `${JSON.stringify(body)}: ${show(res)}`).toContain(field)
    }
  })

  test('security: no token, mk_ or garbage tokens, and an expired guest token are 401', async () => {
    const body = { url: 'https://example.com/secure' }
    const none = await call(app, 'POST', '/api/v1/shorten', { body })
    expect(none.status, show(none)).toBe(401)
    for (const token of ['mk_0123456789abcdefghijklmnop', 'garbage', 'gt_' + 'B'.repeat(43)]) {
      const res = await shorten(token, body)
      expect(res.status, `${token}: ${show(res)}`).toBe(401)
      expect(res.body.error, `${token}: ${show(res)}`).toBe('UNAUTHORIZED')
    }
    const token = await newGuestToken(app)
    const later = await testApi({ now: () => Date.now() + 86_400_000 + 1000 })
    const expired = await shorten(token, body, later.app)
    expect(expired.status, show(expired)).toBe(401)
    // Authentication comes before body validation: no token and a bad body is still 401.
    const bad = await call(app, 'POST', '/api/v1/shorten', { body: { url: 5 } })
    expect(bad.status, show(bad)).toBe(401)
  })

  test('writes the link through to the cache and publishes its key', async () => {
    const { kv } = api.adapters
    const messages: string[] = []
    const unsubscribe = await kv.subscribe(INVALIDATION_CHANNEL, (m) => messages.push(m))
    try {
      const token = await newGuestToken(app)
      const res = await shorten(token, { url: 'https://example.com/cached' })
      expect(res.status, show(res)).toBe(200)
      const key = linkCacheKey('sho.rt', res.body.data.alias)
      const cached = decodeCachedLink((await kv.get(key)) ?? '')
      const [row] = await api.deps.db.select().from(links).where(eq(links.alias, res.body.data.alias))
      expect(cached, show(res)).toEqual({ v: 1, id: row!.id, url: 'https://example.com/cached', exp: Date.parse(res.body.data.expires_at) })
      expect(await waitFor(() => messages.includes(key)), `published: ${JSON.stringify(messages)}`).toBe(true)
    } finally {
      await unsubscribe()
    }
  })

  test('a failing cache does not fail the request: the link is committed and the failure counted', async () => {
    const failing: Kv = {
      ...api.adapters.kv,
      get: () => Promise.reject(new Error('cache down')),
      set: () => Promise.reject(new Error('cache down')),
      publish: () => Promise.reject(new Error('cache down')),
      subscribe: () => Promise.reject(new Error('cache down')),
      del: () => Promise.reject(new Error('cache down')),
      close: async () => {},
    }
    const broken = await testApi({ kv: failing })
    const token = await newGuestToken(broken.app)
    const res = await shorten(token, { url: 'https://example.com/cache-down' }, broken.app)
    expect(res.status, show(res)).toBe(200)
    const services = (broken.app as unknown as { decorator: { services: Services } }).decorator.services
    expect(services.counters.cacheWriteFailures).toBe(1)
    const rows = await api.deps.db.select().from(links).where(eq(links.alias, res.body.data.alias))
    expect(rows.length, show(res)).toBe(1)
  })
})

describe('POST /api/v1/alias/check', () => {
  test('an existing alias exists, a fresh one does not, reserved words do on the default domain', async () => {
    const token = await newGuestToken(app)
    const made = await shorten(token, { url: 'https://example.com/check' })
    const alias = made.body.data.alias
    const taken = await call(app, 'POST', '/api/v1/alias/check', { body: { alias } })
    expect(taken.status, show(taken)).toBe(200)
    expect(taken.body, show(taken)).toEqual({ exists: true })
    const onDefault = await call(app, 'POST', '/api/v1/alias/check', { body: { alias, domain: 'SHO.RT' } })
    expect(onDefault.body, show(onDefault)).toEqual({ exists: true })
    const fresh = await call(app, 'POST', '/api/v1/alias/check', { body: { alias: `free-${crypto.randomUUID()}`.slice(0, 40) } })
    expect(fresh.body, show(fresh)).toEqual({ exists: false })
    const otherDomain = await call(app, 'POST', '/api/v1/alias/check', { body: { alias, domain: 'links.example.com' } })
    expect(otherDomain.body, show(otherDomain)).toEqual({ exists: false })
    for (const reserved of ['api', 'swagger', 'Health']) {
      const res = await call(app, 'POST', '/api/v1/alias/check', { body: { alias: reserved } })
      expect(res.body, `${reserved}: ${show(res)}`).toEqual({ exists: true })
    }
    const reservedElsewhere = await call(app, 'POST', '/api/v1/alias/check', { body: { alias: 'api', domain: 'links.example.com' } })
    expect(reservedElsewhere.body, show(reservedElsewhere)).toEqual({ exists: false })
  })

  test('invalid input is 400 VALIDATION_FAILED naming the field', async () => {
    const cases: [unknown, string][] = [
      [{}, 'body.alias'],
      [{ alias: 'bad alias!' }, 'body.alias'],
      [{ alias: 'a'.repeat(65) }, 'body.alias'],
      [{ alias: 123 }, 'body.alias'],
      [{ alias: 'ok\u0000' }, 'body.alias'],
      [{ alias: 'okay', domain: "x'; drop table links; --" }, 'body.domain'],
      [{ alias: 'okay', domain: 'a\u0000.com' }, 'body.domain'],
    ]
    for (const [body, field] of cases) {
      const res = await call(app, 'POST', '/api/v1/alias/check', { body })
      expect(res.status, `${JSON.stringify(body)}: ${show(res)}`).toBe(400)
      expect(res.body.error, show(res)).toBe('VALIDATION_FAILED')
      expect(res.body.hint, show(res)).toContain(field)
    }
  })

  test('security: 60 checks a minute per IP, then 429 with Retry-After; a bogus token changes nothing', async () => {
    const ip = uniqueIp()
    const results = await Promise.all(
      Array.from({ length: ALIAS_CHECK_RATE.limit }, () => call(app, 'POST', '/api/v1/alias/check', { ip, body: { alias: 'probe' } })),
    )
    expect(results.every((r) => r.status === 200), results.filter((r) => r.status !== 200).map(show).join('\n')).toBe(true)
    const limited = await call(app, 'POST', '/api/v1/alias/check', { ip, body: { alias: 'probe' } })
    expect(limited.status, show(limited)).toBe(429)
    expect(limited.body, show(limited)).toMatchObject({ error: 'RATE_LIMITED', limit: 60, remaining: 0 })
    expect(Number(limited.headers.get('retry-after')), show(limited)).toBeGreaterThan(0)
    const withToken = await call(app, 'POST', '/api/v1/alias/check', { token: 'mk_0123456789abcdefghijklmnop', body: { alias: 'probe' } })
    expect(withToken.status, show(withToken)).toBe(200)
    expect(Object.keys(withToken.body), show(withToken)).toEqual(['exists'])
  })
})
