// Whatever a client sends, the API answers with JSON and never with 422 or 500.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, newGuestToken, show, testApi, TEST_IP_HEADER, uniqueIp, type CallResult, type TestApp } from '../test/support/api'

let app: TestApp
let token: string

beforeAll(async () => {
  app = (await testApi()).app
  token = await newGuestToken(app)
})

function expectJsonAnswer(res: CallResult, what: string, statuses?: number[]) {
  expect(res.status, `${what}: ${show(res)}`).not.toBe(500)
  expect(res.status, `${what}: ${show(res)}`).not.toBe(422)
  if (statuses) expect(statuses, `${what}: ${show(res)}`).toContain(res.status)
  expect(res.body, `${what}: not JSON: ${show(res)}`).toBeDefined()
  if (res.status >= 400) {
    expect(res.body.success, `${what}: ${show(res)}`).toBe(false)
    expect(res.body.error, `${what}: ${show(res)}`).toMatch(/^[A-Z_]+$/)
    expect(typeof res.body.hint, `${what}: ${show(res)}`).toBe('string')
    expect(res.body.meta, `${what}: ${show(res)}`).toBeDefined()
    expect(res.text, `${what}: ${show(res)}`).not.toMatch(/at .*\.(ts|js):\d+/)
  }
}

const BODY_ROUTES = ['/api/v1/shorten', '/api/v1/alias/check', '/api/v1/guest/token']

const HOSTILE_BODIES: [string, string, Record<string, string>?][] = [
  ['malformed JSON', '{"url": '],
  ['trailing garbage', '{"url":"https://example.com"} xyz'],
  ['array', '[{"url":"https://example.com","alias":"abcd"}]'],
  ['string', '"https://example.com"'],
  ['number', '42'],
  ['true', 'true'],
  ['null', 'null'],
  ['numbers for strings', '{"url": 12345, "alias": 99, "domain": 1.5, "password": 0}'],
  ['objects for strings', '{"url": {"href":"https://example.com"}, "alias": ["a"]}'],
  ['null bytes', '{"url":"https://example.com/\\u0000","alias":"ab\\u0000cd","domain":"a\\u0000b"}'],
  ['lone surrogates', '{"url":"https://example.com/\\ud800","alias":"\\udfff"}'],
  ['prototype pollution', '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}},"url":"https://example.com/p","alias":"abcd"}'],
  ['huge number', '{"url":"https://example.com","alias":1e999}'],
  ['deep nesting', `{"url":"https://example.com","extra":${'['.repeat(5000)}${']'.repeat(5000)}}`],
  ['form content type', 'url=https://example.com', { 'content-type': 'application/x-www-form-urlencoded' }],
  ['text content type', '{"url":"https://example.com"}', { 'content-type': 'text/plain' }],
  ['multipart', '--x\r\nContent-Disposition: form-data; name="url"\r\n\r\nhttps://example.com\r\n--x--', { 'content-type': 'multipart/form-data; boundary=x' }],
  ['garbage content type', '{}', { 'content-type': '\u00ff\u00fe;;;=' }],
  ['huge body', JSON.stringify({ url: `https://example.com/${'a'.repeat(600_000)}` })],
  ['long alias', JSON.stringify({ url: 'https://example.com', alias: 'a'.repeat(100_000) })],
]

describe('hostile requests', () => {
  // Rows padded to three elements: a test function with more parameters than its row gets a `done` callback.
  test.each(HOSTILE_BODIES.map(([name, body, headers]) => [name, body, headers ?? {}] as const))('%s body on every POST route → JSON 4xx or 200', async (_name, body, headers) => {
    for (const path of BODY_ROUTES) {
      for (const auth of [token, undefined]) {
        const res = await call(app, 'POST', path, { token: auth, body, headers })
        expectJsonAnswer(res, `${path} ${auth ? 'with' : 'without'} token`)
      }
    }
  })

  test('weird paths and methods are 404 JSON', async () => {
    const paths = [
      '/%',
      '/%zz',
      '/..%2f..%2fetc%2fpasswd',
      '/api/v1/shorten/',
      '/API/V1/SHORTEN',
      '//api//v1//shorten',
      '/api/v1/shorten?x=%ZZ&&&=',
      `/${'a'.repeat(5000)}`,
      '/api/v1/\u00e9',
      '/internal/resolve/../../health',
      '/api/v1/links/abc',
      '/api/v1/guest/register',
    ]
    for (const path of paths) {
      const res = await call(app, 'GET', path.replace(/[^\x21-\x7e]/g, encodeURIComponent))
      expectJsonAnswer(res, path.slice(0, 60))
    }
    for (const method of ['PUT', 'DELETE', 'PATCH', 'GET']) {
      const res = await call(app, method, '/api/v1/shorten', { token, body: { url: 'https://example.com' } })
      expectJsonAnswer(res, `${method} /api/v1/shorten`, [404, 405])
    }
  })

  test('odd headers do not break anything', async () => {
    const cases: Record<string, string>[] = [
      { authorization: 'Bearer' },
      { authorization: 'Bearer \u00e9' },
      { authorization: ',,,' },
      { [TEST_IP_HEADER]: '' },
      { [TEST_IP_HEADER]: ',,, ,' },
      { [TEST_IP_HEADER]: 'x'.repeat(5000) },
      { 'content-length': 'abc' },
      { accept: 'text/html' },
    ]
    for (const headers of cases) {
      for (const [method, path] of [
        ['GET', '/api/v1/account/status'],
        ['POST', '/api/v1/alias/check'],
        ['POST', '/api/v1/guest/token'],
      ]) {
        const res = await call(app, method!, path!, { headers, ...(method === 'POST' && { body: { alias: 'abcd' } }) })
        expectJsonAnswer(res, `${method} ${path} ${JSON.stringify(headers).slice(0, 60)}`)
      }
    }
  })

  test('the full happy path still works after all that', async () => {
    const fresh = await newGuestToken(app)
    const res = await call(app, 'POST', '/api/v1/shorten', { token: fresh, body: { url: 'https://example.com/after' }, ip: uniqueIp() })
    expect(res.status, show(res)).toBe(200)
  })
})
