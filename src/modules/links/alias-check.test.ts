// POST /api/v1/alias/check: existing, fresh and reserved aliases, invalid input, the per-IP rate.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, newGuestToken, show, uniqueIp } from '../../../test/support/api'
import { ALIAS_CHECK_RATE } from './service'
import { app, setUp, shorten } from '../../../test/support/suites/guest-links'

beforeAll(setUp)

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
    const results = await Promise.all(Array.from({ length: ALIAS_CHECK_RATE.limit }, () => call(app, 'POST', '/api/v1/alias/check', { ip, body: { alias: 'probe' } })))
    expect(
      results.every((r) => r.status === 200),
      results
        .filter((r) => r.status !== 200)
        .map(show)
        .join('\n'),
    ).toBe(true)
    const limited = await call(app, 'POST', '/api/v1/alias/check', { ip, body: { alias: 'probe' } })
    expect(limited.status, show(limited)).toBe(429)
    expect(limited.body, show(limited)).toMatchObject({ error: 'RATE_LIMITED', limit: 60, remaining: 0 })
    expect(Number(limited.headers.get('retry-after')), show(limited)).toBeGreaterThan(0)
    const withToken = await call(app, 'POST', '/api/v1/alias/check', { token: 'mk_0123456789abcdefghijklmnop', body: { alias: 'probe' } })
    expect(withToken.status, show(withToken)).toBe(200)
    expect(Object.keys(withToken.body), show(withToken)).toEqual(['exists'])
  })
})
