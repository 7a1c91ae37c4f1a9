// The links routes in the OpenAPI document: schemas, examples, error responses, bearer auth.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, testApi } from '../../../test/support/api'

/** [method, path, error statuses]: every route of this module that needs an API key or a token (503: the limiter or idempotency store is down). */
const ROUTES: [string, string, string[]][] = [
  ['post', '/api/v1/shorten', ['202', '400', '401', '403', '409', '413', '429', '503']],
  ['get', '/api/v1/links', ['400', '401', '403', '404', '429', '503']],
  ['post', '/api/v1/links/bulk', ['202', '400', '401', '403', '409', '413', '429', '503']],
  ['get', '/api/v1/links/{alias}', ['400', '401', '403', '404', '429', '503']],
  ['patch', '/api/v1/links/{alias}', ['202', '400', '401', '403', '404', '409', '413', '429', '503']],
  ['delete', '/api/v1/links/{alias}', ['202', '400', '401', '403', '404', '409', '429', '503']],
]

// eslint-disable-next-line @typescript-eslint/no-explicit-any
let doc: any

beforeAll(async () => {
  const res = await call((await testApi()).app, 'GET', '/swagger/json')
  if (res.status !== 200) throw new Error(show(res))
  doc = res.body
})

const model = (ref: string) => doc.components.schemas[ref.split('/').pop()!]

describe('links routes in /swagger/json', () => {
  test.each(ROUTES)('%s %s: bearer auth, request and response schemas with examples, its error responses', (method, path, errors) => {
    const op = doc.paths[path]?.[method]
    const where = `${method.toUpperCase()} ${path}: ${JSON.stringify(op)?.slice(0, 300)}`
    expect(op, where).toBeDefined()
    expect(op.tags, where).toEqual(['links'])
    expect(typeof op.summary, where).toBe('string')
    expect(op.description?.length, where).toBeGreaterThan(20)
    expect(op.security, where).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }, { oauth2: op['x-scopes'] }])
    expect(Object.keys(op.responses).sort(), where).toEqual(['200', ...errors].sort())
    for (const status of errors)
      expect(op.responses[status].content['application/json'].schema.$ref, `${where} ${status}`).toBe(status === '202' ? '#/components/schemas/HeldResponse' : '#/components/schemas/ErrorResponse')
    expect(model(op.responses['200'].content['application/json'].schema.$ref)?.examples?.length, where).toBeGreaterThan(0)
    if (method === 'post' || method === 'patch') {
      expect(Object.keys(op.requestBody.content), where).toEqual(['application/json'])
      expect(model(op.requestBody.content['application/json'].schema.$ref)?.examples?.length, where).toBeGreaterThan(0)
    }
    if (path.includes('{alias}')) {
      const names = op.parameters.map((p: { in: string; name: string }) => `${p.in}:${p.name}`)
      expect(names, where).toEqual(expect.arrayContaining(['path:alias', 'query:domain']))
    }
  })

  test('bulk items are documented as the shorten request; list parameters are integers with their bounds', () => {
    const bulk = doc.components.schemas.BulkRequest
    expect(bulk.properties.links.items).toEqual({ $ref: '#/components/schemas/ShortenRequest' })
    expect(bulk.properties.links.maxItems).toBe(100)
    const params = Object.fromEntries(doc.paths['/api/v1/links'].get.parameters.map((p: { name: string; schema: unknown }) => [p.name, p.schema]))
    expect(Object.keys(params).sort()).toEqual(['cursor', 'domain', 'limit', 'offset', 'search', 'sort', 'tag'])
    expect(params.tag).toMatchObject({ minimum: 1, maximum: 2_147_483_647 })
    expect(JSON.stringify(params.sort)).toContain('clicks_desc')
    expect(params.limit).toMatchObject({ minimum: 1, maximum: 100, default: 20 })
    expect(params.offset).toMatchObject({ minimum: 0 })
    expect(JSON.stringify(doc.components.schemas.LinkListResponse)).toContain('next_cursor')
    expect(doc.paths['/api/v1/links'].get.responses['404'].content['application/json'].examples).toHaveProperty('TAG_NOT_FOUND')
    expect(doc.components.schemas.ErrorResponse.properties.error.enum).toEqual(expect.arrayContaining(['ALIAS_TAKEN', 'DOMAIN_NOT_ALLOWED', 'LINK_QUOTA_EXCEEDED']))
  })

  test('the QR code: an SVG or PNG image, 304 on revalidation, ETag and Cache-Control, links:read', () => {
    const op = doc.paths['/api/v1/links/{alias}/qr'].get
    expect(op.tags).toEqual(['links'])
    expect(op['x-scopes']).toEqual(['links:read'])
    expect(op.security).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }, { oauth2: ['links:read'] }])
    expect(Object.keys(op.responses['200'].content).sort()).toEqual(['image/png', 'image/svg+xml'])
    expect(op.responses['200'].content['image/png'].schema).toEqual({ type: 'string', format: 'binary' })
    expect(op.responses['200'].headers).toHaveProperty('ETag')
    expect(op.responses['200'].headers).toHaveProperty('Cache-Control')
    expect(op.responses['304'].content).toBeUndefined()
    expect(op.responses['404'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorResponse')
    const params = Object.fromEntries(op.parameters.map((p: { name: string; schema: unknown }) => [p.name, p.schema]))
    expect(Object.keys(params).sort()).toEqual(['alias', 'domain', 'format', 'size'])
    expect(params.size).toMatchObject({ minimum: 64, maximum: 2048 })
  })
})
