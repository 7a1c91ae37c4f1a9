// Hostile bytes: NUL and other control characters in any string a client sends — JSON fields and
// keys, query strings, path segments — are a 400 naming the field, never a 500. And an unexpected
// error's log line names the route and the request id, never a value of the request or of a query.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { newAccount, newSignedClick, type TestAccount } from '../support/fixtures'
import { body } from '../../src/plugins/body'
import { errors } from '../../src/plugins/errors'
import { logTo } from '../../src/lib/log'
import { call, show, testApi, uniqueName, type TestApp } from '../support/api'

let app: TestApp
let api: Awaited<ReturnType<typeof testApi>>
let pro: TestAccount

beforeAll(async () => {
  api = await testApi()
  app = api.app
  pro = await newAccount(api.deps.db, 'pro')
})

function expectFieldRefused(res: Awaited<ReturnType<typeof call>>, field: string) {
  expect(res.status, show(res)).toBe(400)
  expect(res.body.error, show(res)).toBe('VALIDATION_FAILED')
  expect(res.body.hint, show(res)).toStartWith(`${field}:`)
}

async function conversion(extra: Record<string, unknown>) {
  const click = await newSignedClick(api.deps.db, api.deps.config.clickSigningKeys, pro.id)
  return { ...click, conversionType: 'purchase', externalOrderId: uniqueName('o'), value: 10, currency: 'EUR', ...extra }
}

describe('control characters are a 400 naming the field', () => {
  test.each([
    ['externalOrderId', { externalOrderId: 'order\u0000-1' }, 'body.externalOrderId'],
    ['eventId', { eventId: 'evt\u0000' }, 'body.eventId'],
    ['conversionType', { conversionType: 'pur\u0000chase' }, 'body.conversionType'],
    ['currency', { currency: 'EU\u0000' }, 'body.currency'],
    ['source', { source: 'news\u001bletter' }, 'body.source'],
    ['a metadata value', { metadata: { plan: 'gold\u0000' } }, 'body.metadata.plan'],
    ['a metadata key', { metadata: { 'pl\u0000an': 'gold' } }, 'body.metadata'],
  ])('conversion with NUL/ESC in %s', async (_, extra, field) => {
    const res = await call(app, 'POST', '/api/analytics/link-conversion', { token: pro.key, body: await conversion(extra) })
    expectFieldRefused(res, field)
  })

  test('shorten, tags and domains: the field is named', async () => {
    expectFieldRefused(await call(app, 'POST', '/api/v1/shorten', { token: pro.key, body: { url: 'https://example.com/a', alias: 'ab\u0000cd' } }), 'body.alias')
    expectFieldRefused(await call(app, 'POST', '/api/v1/tags', { token: pro.key, body: { name: 'ta\u0007g' } }), 'body.name')
    expectFieldRefused(await call(app, 'POST', '/api/v1/domains', { token: pro.key, body: { hostname: 'go.example\u0000.com' } }), 'body.hostname')
    expectFieldRefused(await call(app, 'POST', '/api/v1/links/bulk', { token: pro.key, body: { links: [{ url: 'https://example.com/\u0000' }] } }), 'body.links[0].url')
  })

  test('query strings and path segments: %00 is a NUL too', async () => {
    expectFieldRefused(await call(app, 'GET', '/api/v1/links?search=a%00b', { token: pro.key }), 'query.search')
    expectFieldRefused(await call(app, 'GET', '/api/v1/links/ab%00cd', { token: pro.key }), 'params.alias')
    expectFieldRefused(await call(app, 'GET', '/api/v1/links/abcd?domain=sho.rt%01', { token: pro.key }), 'query.domain')
  })

  test('tab, newline and carriage return are ordinary text where a field allows text', async () => {
    const res = await call(app, 'POST', '/api/analytics/link-conversion', { token: pro.key, body: await conversion({ metadata: { note: 'line one\nline two\tend\r' } }) })
    expect(res.status, show(res)).toBe(201)
  })

  test('the pixel stays a GIF whatever bytes it gets', async () => {
    const res = await call(app, 'GET', `/api/analytics/link-conversion/pixel?mu_click=a%00&mu_sig=b&conversionType=sig%00nup`)
    expect(res.status, show(res)).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/gif')
  })
})

describe('what an unexpected error logs', () => {
  // The process log's lines (src/lib/log.ts), read from its destination.
  let logged: string[] = []
  let previous: ReturnType<typeof logTo>
  beforeAll(() => {
    previous = logTo({ write: (line: string) => void logged.push(line) })
  })
  afterAll(() => {
    logTo(previous)
  })
  afterEach(() => {
    logged = []
  })

  test("the route and the request id, never the query's parameters nor the request", async () => {
    const secret = 'cus_SECRET_4242'
    const boom = new Elysia()
      .use(errors)
      .use(body)
      .post('/t/:id', () => {
        // What a driver's error says: the statement and its parameters.
        throw new Error(`Failed query: insert into conversions values ($1, $2)\nparams: ${secret},49.90`, { cause: new Error(`value ${secret}`) })
      })
    const res = await boom.handle(
      new Request('http://localhost/t/42', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer mk_${secret}` }, body: JSON.stringify({ customer: secret }) }),
    )
    const text = await res.text()
    expect(res.status, text).toBe(500)
    expect(JSON.parse(text).error).toBe('INTERNAL_ERROR')
    const requestId = res.headers.get('x-request-id')
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
    const line = logged.join('\n')
    expect(line).toContain('INTERNAL_ERROR POST /t/:id')
    expect(line).toContain(`"request_id":"${requestId}"`)
    expect(line).not.toContain(secret)
    expect(text).not.toContain(secret)
  })
})
