// POST /api/v1/shorten with a guest token, the refusals: the per-session link limit and the per-token
// request limit (also in parallel), bad URLs and bodies, and tokens that are not a valid guest's.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { links } from '../../db/schema'
import { call, newGuestToken, show, testApi } from '../../../test/support/api'
import { api, app, setUp, shorten } from '../../../test/support/suites/guest-links'

beforeAll(setUp)

describe('POST /api/v1/shorten with a guest token', () => {
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
    expect(
      results.filter((r) => r.status === 200).length,
      results
        .filter((r) => r.status !== 200)
        .map(show)
        .join('\n'),
    ).toBe(100)
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
    `https://example.com/${'a'.repeat(2100)}`,
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

  test.each([['https://sho.rt/abc'], ['http://SHO.RT./abc'], ['https://sho.rt:8443/x'], ['https://Sho.Rt']])('refuses a link to its own short domain (%p) with 400 DESTINATION_LOOPS', async (url) => {
    const token = await newGuestToken(app)
    const res = await shorten(token, { url })
    expect(res.status, show(res)).toBe(400)
    expect(res.body.error, show(res)).toBe('DESTINATION_LOOPS')
  })

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
    for (const token of ['mk_0123456789abcdefghijklmnop', 'garbage', `gt_${'B'.repeat(43)}`]) {
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
})
