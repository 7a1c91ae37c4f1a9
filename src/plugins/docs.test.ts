import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, testApi, TEST_INTERNAL_SECRET, type TestApp } from '../../test/support/api'
import { API_DOCUMENT_VERSION, normalizeDocument } from './docs'

/** Every public route, with whether it takes a bearer token. */
const PUBLIC_ROUTES: [method: string, path: string, auth: boolean][] = [
  ['post', '/api/v1/guest/token', false],
  ['get', '/api/v1/account/status', true],
  ['post', '/api/v1/guest/register', true],
  ['post', '/api/v1/guest/verify', true],
  ['post', '/api/v1/account/upgrade', true],
  ['get', '/api/v1/account/upgrade/{checkout_id}', true],
  ['post', '/api/v1/billing/stripe/webhook', false],
  ['post', '/api/v1/alias/check', false],
  ['post', '/api/v1/shorten', true],
  ['get', '/api/v1/links', true],
  ['post', '/api/v1/links/bulk', true],
  ['get', '/api/v1/links/{alias}', true],
  ['patch', '/api/v1/links/{alias}', true],
  ['delete', '/api/v1/links/{alias}', true],
  ['get', '/api/v1/links/{alias}/stats', true],
  ['get', '/api/v1/links/{alias}/tags', true],
  ['post', '/api/v1/links/{alias}/tags', true],
  ['delete', '/api/v1/links/{alias}/tags/{tagId}', true],
  ['get', '/api/v1/tags', true],
  ['post', '/api/v1/tags', true],
  ['delete', '/api/v1/tags/{tagId}', true],
  ['get', '/api/v1/domains', true],
  ['post', '/api/v1/domains', true],
  ['post', '/api/v1/domains/{hostname}/verify', true],
  ['delete', '/api/v1/domains/{hostname}', true],
  ['get', '/health', false],
  ['post', '/api/analytics/link-conversion', true],
  ['get', '/api/analytics/link-conversion/pixel', false],
]

/** Routes whose success answer is not JSON (the conversion pixel is a GIF); checked on their own below. */
const NOT_JSON = new Set(['/api/analytics/link-conversion/pixel'])

/** POST routes that take no JSON body: the token request, the DNS check, and Stripe's raw signed payload. */
const BODYLESS = new Set(['/api/v1/guest/token', '/api/v1/domains/{hostname}/verify', '/api/v1/billing/stripe/webhook'])

let app: TestApp
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let doc: any
let raw: string

beforeAll(async () => {
  app = (await testApi()).app
  const res = await call(app, 'GET', '/swagger/json')
  if (res.status !== 200) throw new Error(show(res))
  doc = res.body
  raw = res.text
})

describe('GET /swagger/json', () => {
  test('is OpenAPI 3.1, version 1.2.0, with the bearer scheme and tags', () => {
    expect(doc.openapi, raw.slice(0, 300)).toBe('3.1.0')
    expect(doc.info.version).toBe(API_DOCUMENT_VERSION)
    expect(doc.info.version).toBe('1.2.0')
    expect(typeof doc.info.title).toBe('string')
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(doc.tags.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['guest', 'account', 'links']))
  })

  test('lists every public route with request and response schemas, examples and error responses', () => {
    for (const [method, path, auth] of PUBLIC_ROUTES) {
      const op = doc.paths[path]?.[method]
      const where = `${method.toUpperCase()} ${path}: ${JSON.stringify(op)?.slice(0, 400)}`
      expect(op, where).toBeDefined()
      if (NOT_JSON.has(path)) {
        expect(Object.keys(op.responses), where).toEqual(['200'])
        // docs.ts keeps only JSON media types, so the GIF body is described in words (summary/description).
        expect(typeof op.responses['200'].description, where).toBe('string')
        expect(op.description, where).toContain('GIF')
        expect(op.security, where).toBeUndefined()
        continue
      }
      expect(op.tags?.length, where).toBeGreaterThan(0)
      expect(typeof op.summary, where).toBe('string')
      for (const [status, response] of Object.entries(op.responses as Record<string, { description?: string; content?: object }>)) {
        expect(typeof response.description, `${where} ${status}`).toBe('string')
        expect(Object.keys(response.content ?? {}), `${where} ${status}`).toEqual(['application/json'])
      }
      const okStatus = ['200', '201'].find((status) => op.responses[status])!
      const okRef: string = op.responses[okStatus].content['application/json'].schema.$ref
      const okModel = doc.components.schemas[okRef.split('/').pop()!]
      expect(okModel?.examples?.length, `${where}: example of ${okRef}`).toBeGreaterThan(0)
      if (auth) {
        expect(op.security, where).toEqual([{ bearerAuth: [] }])
        expect(op.responses['401'].content['application/json'].schema.$ref, where).toBe('#/components/schemas/ErrorResponse')
      } else {
        expect(op.security, where).toBeUndefined()
      }
      if (method === 'post' && !BODYLESS.has(path)) {
        const ref: string = op.requestBody.content['application/json'].schema.$ref
        expect(Object.keys(op.requestBody.content), where).toEqual(['application/json'])
        expect(doc.components.schemas[ref.split('/').pop()!]?.examples?.length, `${where}: example of ${ref}`).toBeGreaterThan(0)
        expect(op.responses['400'], where).toBeDefined()
      }
    }
    expect(doc.paths['/api/v1/shorten'].post.responses['429'].headers['Retry-After'], 'Retry-After documented').toBeDefined()
    expect(Object.keys(doc.paths['/api/v1/shorten'].post.responses).sort()).toEqual(['200', '400', '401', '403', '409', '413', '429'])
  })

  test('every $ref resolves; integers are integers; no $id fragments', () => {
    const refs = [...raw.matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!)
    expect(refs.length).toBeGreaterThan(0)
    for (const ref of refs) {
      expect(ref, ref).toStartWith('#/components/schemas/')
      expect(doc.components.schemas[ref.slice('#/components/schemas/'.length)], ref).toBeDefined()
    }
    expect(raw).not.toContain('"$id"')
    expect(raw).not.toContain('"multipleOf":1')
    expect(doc.components.schemas.GuestTokenResponse.properties.data.properties.limits.properties.max_links.type).toBe('integer')
    expect(doc.components.schemas.ErrorResponse.properties.error.enum).toContain('GUEST_LINK_LIMIT')
  })

  test('security: /internal is not in the public document, nor is the internal secret', () => {
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/internal'))).toEqual([])
    expect(raw).not.toContain('x-internal-secret')
    expect(raw).not.toContain(TEST_INTERNAL_SECRET)
    expect(Object.keys(doc.paths).sort()).toEqual([...new Set(PUBLIC_ROUTES.map(([, path]) => path))].sort())
  })

  test('the UI is served at /swagger', async () => {
    const res = await call(app, 'GET', '/swagger')
    expect(res.status, show(res)).toBe(200)
    expect(res.headers.get('content-type'), show(res)).toContain('text/html')
    expect(res.text, show(res)).toContain('swagger-ui')
  })

  test('normalizeDocument leaves its input alone', () => {
    const input = { paths: { '/x': { get: { responses: { 200: { $id: 'a', content: { 'text/plain': {} } } } } } } }
    const before = JSON.stringify(input)
    normalizeDocument(input)
    expect(JSON.stringify(input)).toBe(before)
  })
})
