import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Elysia, t } from 'elysia'
import { call, show } from '../../test/support/api'
import { body } from './body'
import { ApiError, ERROR_STATUS, errors, toApiError, type ErrorCode } from './errors'

describe('ApiError', () => {
  test('every code has its status, a hint and the ErrorResponse shape', () => {
    for (const code of Object.keys(ERROR_STATUS) as ErrorCode[]) {
      const err = new ApiError(code)
      expect(err.status).toBe(ERROR_STATUS[code])
      expect(code).toMatch(/^[A-Z][A-Z_]+$/)
      expect(err.toBody()).toEqual({ success: false, error: code, hint: expect.any(String), meta: {} })
    }
  })

  test('docs/api.md lists every code with its status, and no code the API does not answer', () => {
    const table = readFileSync(join(import.meta.dir, '../../docs/api.md'), 'utf8')
    const rows = new Map([...table.matchAll(/^\| `([A-Z][A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]))
    for (const code of Object.keys(ERROR_STATUS) as ErrorCode[]) expect(rows.get(code), code).toBe(ERROR_STATUS[code])
    expect([...rows.keys()].filter((code) => !(code in ERROR_STATUS))).toEqual([])
  })

  test('limit fields, Retry-After and extra headers reach the response', async () => {
    const err = new ApiError('RATE_LIMITED', 'slow down', { limit: 5, remaining: 0, upgrade_url: 'https://x/up', retryAfter: 2.2, headers: { 'x-ratelimit-limit': '5' } })
    const res = err.toResponse({ 'x-other': '1' })
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('3')
    expect(res.headers.get('x-ratelimit-limit')).toBe('5')
    expect(res.headers.get('x-other')).toBe('1')
    expect(res.headers.get('content-type')).toBe('application/json')
    expect(await res.json()).toEqual({ success: false, error: 'RATE_LIMITED', hint: 'slow down', limit: 5, remaining: 0, upgrade_url: 'https://x/up', meta: {} })
  })

  test('Elysia errors map onto our codes; a response that fails its schema is our 500, not a 400', () => {
    expect(toApiError('NOT_FOUND', new Error()).code).toBe('NOT_FOUND')
    expect(toApiError('PARSE', new Error()).code).toBe('MALFORMED_JSON')
    expect(toApiError('PARSE', new Error('x', { cause: new ApiError('PAYLOAD_TOO_LARGE') })).code).toBe('PAYLOAD_TOO_LARGE')
    expect(toApiError('VALIDATION', { type: 'body', all: [{ path: '/url', message: 'Expected string' }], value: { url: 1 } }).code).toBe('VALIDATION_FAILED')
    expect(toApiError('VALIDATION', { type: 'response', all: [] }).code).toBe('INTERNAL_ERROR')
    expect(toApiError('UNKNOWN', new Error('boom')).code).toBe('INTERNAL_ERROR')
  })
})

describe('the errors plugin in an app', () => {
  const app = new Elysia()
    .use(errors)
    .use(body)
    .get('/crash', () => {
      throw new Error('db password=hunter2 at /srv/app.ts:12')
    })
    .get('/teapot', ({ set }) => {
      set.headers['x-ratelimit-remaining'] = '7'
      throw new ApiError('GUEST_LINK_LIMIT', undefined, { limit: 10, remaining: 0, retryAfter: 60 })
    })
    .post('/echo', ({ body }) => body, { body: t.Object({ name: t.String() }) })
    .get('/wrong-shape', () => ({ n: 'not a number' }) as unknown as { n: number }, { response: t.Object({ n: t.Number() }) })

  test('an unexpected exception is 500 INTERNAL_ERROR JSON without message, stack or secrets', async () => {
    for (const path of ['/crash', '/wrong-shape']) {
      const res = await call(app, 'GET', path)
      expect(res.status, show(res)).toBe(500)
      expect(res.body, show(res)).toEqual({ success: false, error: 'INTERNAL_ERROR', hint: expect.any(String), meta: {} })
      expect(res.text, show(res)).not.toContain('hunter2')
      expect(res.text, show(res)).not.toContain('app.ts')
    }
  })

  test('headers set before the error survive; Retry-After is added', async () => {
    const res = await call(app, 'GET', '/teapot')
    expect(res.status, show(res)).toBe(429)
    expect(res.headers.get('x-ratelimit-remaining'), show(res)).toBe('7')
    expect(res.headers.get('retry-after'), show(res)).toBe('60')
    expect(res.body, show(res)).toMatchObject({ error: 'GUEST_LINK_LIMIT', limit: 10, remaining: 0 })
  })

  test('validation is 400 VALIDATION_FAILED naming the field (never 422)', async () => {
    const res = await call(app, 'POST', '/echo', { body: { name: 7 } })
    expect(res.status, show(res)).toBe(400)
    expect(res.body.error, show(res)).toBe('VALIDATION_FAILED')
    expect(res.body.hint, show(res)).toBe('body.name: Expected string')
    expect(res.body.data.errors, show(res)).toEqual([{ field: 'body.name', message: 'Expected string' }])
    const missing = await call(app, 'POST', '/echo', { body: {} })
    expect(missing.body.hint, show(missing)).toBe('body.name: is required')
  })

  test('unknown routes and methods are 404 NOT_FOUND JSON', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['DELETE', '/echo'],
      ['GET', '/echo'],
    ]) {
      const res = await call(app, method!, path!)
      expect(res.status, show(res)).toBe(404)
      expect(res.body, show(res)).toMatchObject({ success: false, error: 'NOT_FOUND' })
    }
  })
})
