// The admin API in the OpenAPI document: every route under the `admin` tag, credentials shown as the
// session or a bearer key with the role `admin` (no OAuth scope, no 401: anyone else gets 404), an example
// for every answer and body, and each route's refusals.
import { beforeAll, describe, expect, test } from 'bun:test'
import { codesAt, fetchOpenApiDoc, type OpenApiDoc, schemaOf as schemaOfDoc } from '../../../test/support/openapi-doc'

const ADMIN_ROUTES: [method: string, path: string, body: boolean][] = [
  ['get', '/api/v1/admin/me', false],
  ['get', '/api/v1/admin/reports', false],
  ['post', '/api/v1/admin/reports/{id}/dismiss', true],
  ['get', '/api/v1/admin/links', false],
  ['post', '/api/v1/admin/links/{id}/{action}', true],
  ['get', '/api/v1/admin/hosts', false],
  ['post', '/api/v1/admin/hosts', true],
  ['delete', '/api/v1/admin/hosts/{host}', true],
  ['get', '/api/v1/admin/accounts/{id}', false],
  ['post', '/api/v1/admin/accounts/{id}/{action}', true],
  ['get', '/api/v1/admin/actions', false],
]

let doc: OpenApiDoc
beforeAll(async () => {
  doc = await fetchOpenApiDoc()
}, 120_000)

const schemaOf = (ref: string) => schemaOfDoc(doc, ref)

describe('the admin API in /swagger/json', () => {
  test('exactly these routes are under /api/v1/admin, each tagged admin', () => {
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith('/api/v1/admin'))
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))
    expect(documented.sort()).toEqual(ADMIN_ROUTES.map(([method, path]) => `${method} ${path}`).sort())
    expect(doc.tags.map((tag: { name: string }) => tag.name)).toContain('admin')
    for (const [method, path] of ADMIN_ROUTES) expect(doc.paths[path][method].tags, `${method} ${path}`).toEqual(['admin'])
  })

  test('credentials: a bearer key with the role admin, or the session; never an OAuth scope; 404 NOT_FOUND and never 401', () => {
    for (const [method, path] of ADMIN_ROUTES) {
      const op = doc.paths[path][method]
      const where = `${method} ${path}`
      expect(op.security, where).toEqual([{ bearerAuth: ['admin'] }, { sessionCookie: [] }])
      expect(op['x-scopes'], where).toBeUndefined()
      expect(codesAt(op, '404'), where).toContain('NOT_FOUND')
      expect(op.responses['401'], where).toBeUndefined()
      expect(op.description, where).toContain('404 NOT_FOUND as for an unknown path')
      if (method !== 'get') expect(codesAt(op, '403'), where).toEqual(['CSRF_TOKEN_INVALID'])
    }
    expect(Object.keys(doc.components.securitySchemes.oauth2.flows.authorizationCode.scopes)).not.toContain('admin')
  })

  test('every answer and every body has an example', () => {
    for (const [method, path, body] of ADMIN_ROUTES) {
      const op = doc.paths[path][method]
      const where = `${method} ${path}`
      const ok = ['200', '201'].filter((status) => op.responses[status])
      expect(ok.length, where).toBeGreaterThan(0)
      for (const status of ok) expect(schemaOf(op.responses[status].content['application/json'].schema.$ref).examples?.length, `${where} ${status}`).toBeGreaterThan(0)
      if (body) expect(schemaOf(op.requestBody.content['application/json'].schema.$ref).examples?.length, `${where} body`).toBeGreaterThan(0)
    }
  })

  test('the key route documents admin as a scope an operator may give a key', () => {
    const create = doc.paths['/api/v1/account/keys'].post
    expect(create.description).toContain('`admin`')
  })
})
