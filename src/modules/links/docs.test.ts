// The links routes in the OpenAPI document: schemas, examples, error responses, bearer auth.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, testApi } from '../../../test/support/api'

/** [method, path, error statuses]: every route of this module that needs an API key or a token (503: the limiter or idempotency store is down). */
const ROUTES: [string, string, string[]][] = [
  ['post', '/api/v1/shorten', ['202', '400', '401', '403', '409', '413', '429', '503']],
  ['get', '/api/v1/links', ['400', '401', '403', '429', '503']],
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
    expect(op.security, where).toEqual([{ bearerAuth: [] }, { oauth2: op['x-scopes'] }])
    expect(Object.keys(op.responses).sort(), where).toEqual(['200', ...errors].sort())
    for (const status of errors) expect(op.responses[status].content['application/json'].schema.$ref, `${where} ${status}`).toBe(status === '202' ? '#/components/schemas/HeldResponse' : '#/components/schemas/ErrorResponse')
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
    expect(Object.keys(params).sort()).toEqual(['cursor', 'domain', 'limit', 'offset', 'search'])
    expect(params.limit).toMatchObject({ minimum: 1, maximum: 100, default: 20 })
    expect(params.offset).toMatchObject({ minimum: 0 })
    expect(JSON.stringify(doc.components.schemas.LinkListResponse)).toContain('next_cursor')
    expect(doc.components.schemas.ErrorResponse.properties.error.enum).toEqual(expect.arrayContaining(['ALIAS_TAKEN', 'DOMAIN_NOT_ALLOWED', 'LINK_QUOTA_EXCEEDED']))
  })
})
