// The webhook routes in the OpenAPI document: exactly these, each with the session, a bearer key or an
// OAuth token holding its scope, the refusals of the credential (INSUFFICIENT_SCOPE; CSRF_TOKEN_INVALID on
// writes) and 404 WEBHOOK_NOT_FOUND where an id is given, the changes of where events go held as the
// policy operation webhooks.change, and an example for every answer and body.
import { beforeAll, describe, expect, test } from 'bun:test'
import { codesAt, fetchOpenApiDoc, type OpenApiDoc, schemaOf as schemaOfDoc } from '../../../test/support/openapi-doc'

const ROUTES: [method: string, path: string, scope: 'webhooks:read' | 'webhooks:write', body: boolean, held: boolean][] = [
  ['get', '/api/v1/webhooks', 'webhooks:read', false, false],
  ['post', '/api/v1/webhooks', 'webhooks:write', true, true],
  ['get', '/api/v1/webhooks/{id}', 'webhooks:read', false, false],
  ['patch', '/api/v1/webhooks/{id}', 'webhooks:write', true, true],
  ['delete', '/api/v1/webhooks/{id}', 'webhooks:write', false, true],
  ['post', '/api/v1/webhooks/{id}/rotate-secret', 'webhooks:write', false, true],
  ['post', '/api/v1/webhooks/{id}/test', 'webhooks:write', false, false],
  ['get', '/api/v1/webhooks/{id}/deliveries', 'webhooks:read', false, false],
  ['post', '/api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver', 'webhooks:write', false, false],
]

let doc: OpenApiDoc
beforeAll(async () => {
  doc = await fetchOpenApiDoc()
}, 120_000)

const schemaOf = (ref: string) => schemaOfDoc(doc, ref)

describe('the webhook routes in /swagger/json', () => {
  test('exactly these routes are under /api/v1/webhooks', () => {
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith('/api/v1/webhooks'))
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))
    expect(documented.sort()).toEqual(ROUTES.map(([method, path]) => `${method} ${path}`).sort())
  })

  test('credentials: the session, a bearer key or an OAuth token with the scope; the refusals of a credential; the held changes', () => {
    for (const [method, path, scope, , held] of ROUTES) {
      const op = doc.paths[path][method]
      const where = `${method} ${path}`
      expect(op.security, where).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }, { oauth2: [scope] }])
      expect(op['x-scopes'], where).toEqual([scope])
      expect(op.description.includes('Policy operation `webhooks.change`'), where).toBe(held)
      expect(Boolean(op.responses['202']), where).toBe(held)
      expect(codesAt(op, '401'), where).toContain('UNAUTHORIZED')
      expect(codesAt(op, '403').sort(), where).toEqual(method === 'get' ? ['INSUFFICIENT_SCOPE'] : ['CSRF_TOKEN_INVALID', 'INSUFFICIENT_SCOPE'])
      expect(op.description, where).toContain(`\`${scope}\``)
    }
    for (const [method, path] of ROUTES.filter(([, path]) => path.includes('{id}'))) {
      expect(codesAt(doc.paths[path][method], '404'), `${method} ${path}`).toContain('WEBHOOK_NOT_FOUND')
    }
    const create = doc.paths['/api/v1/webhooks'].post
    expect(codesAt(create, '409'), 'create').toEqual(['WEBHOOK_LIMIT_REACHED'])
    expect(codesAt(create, '400'), 'create').toContain('WEBHOOK_URL_INVALID')
  })

  test('every answer and every body has an example; the secret is in the create and rotate answers only', () => {
    for (const [method, path] of ROUTES) {
      const op = doc.paths[path][method]
      const where = `${method} ${path}`
      const ok = ['200', '201'].filter((status) => op.responses[status])
      expect(ok.length, where).toBe(1)
      const model = schemaOf(op.responses[ok[0]!].content['application/json'].schema.$ref)
      expect(model.examples?.length, where).toBeGreaterThan(0)
      const hasSecret = JSON.stringify(model.properties.data).includes('"secret"')
      expect(hasSecret, where).toBe(path.endsWith('rotate-secret') || (method === 'post' && path === '/api/v1/webhooks'))
    }
    for (const [method, path] of ROUTES.filter(([, , , body]) => body)) {
      const op = doc.paths[path][method]
      expect(schemaOf(op.requestBody.content['application/json'].schema.$ref).examples?.length, `${method} ${path} body`).toBeGreaterThan(0)
    }
  })

  test('a key may be given the webhook scopes, and so may an OAuth client', () => {
    const create = doc.paths['/api/v1/account/keys'].post
    const scopes = JSON.stringify(schemaOf(create.requestBody.content['application/json'].schema.$ref).properties.scopes)
    expect(scopes).toContain('webhooks:read')
    expect(scopes).toContain('webhooks:write')
    expect(Object.keys(doc.components.securitySchemes.oauth2.flows.authorizationCode.scopes)).toEqual(expect.arrayContaining(['webhooks:read', 'webhooks:write']))
  })
})
