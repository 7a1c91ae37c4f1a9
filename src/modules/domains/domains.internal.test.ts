// GET /internal/domains (the redirector's list of verified domains, behind the internal secret), and the
// public OpenAPI document of the domain and tag routes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, show, TEST_INTERNAL_SECRET } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { addDomain, api, app, dns, setUp, tearDown, uniqueHost } from '../../../test/support/suites/domains'

beforeAll(setUp)
afterAll(tearDown)

describe('GET /internal/domains', () => {
  test('lists verified domains only (with the root URLs set among them), for the redirector; needs the internal secret', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const verified = await addDomain(account, uniqueHost('listed'))
    const pending = await addDomain(account, uniqueHost('pending'))
    dns.setTxt(verified.verification.name, [verified.verification.value])
    expect((await call(app, 'POST', `/api/v1/domains/${verified.hostname}/verify`, { token: account.key })).status).toBe(200)
    const res = await call(app, 'GET', '/internal/domains', { headers: { 'x-internal-secret': TEST_INTERNAL_SECRET } })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.domains, show(res)).toContain(verified.hostname)
    expect(res.body.domains, show(res)).not.toContain(pending.hostname)
    expect(res.body.root_urls, show(res)).toBeObject()
    expect(res.headers.get('cache-control'), show(res)).toBe('no-store')
    for (const headers of [{}, { 'x-internal-secret': 'wrong' }, { authorization: `Bearer ${account.key}` }] as Record<string, string>[]) {
      const refused = await call(app, 'GET', '/internal/domains', { headers })
      expect(refused.status, show(refused)).toBe(401)
      expect(refused.text, show(refused)).not.toContain(verified.hostname)
    }
  })

  test('is not in the public OpenAPI document; the domain and tag routes are, with examples and error responses', async () => {
    const doc = (await call(app, 'GET', '/swagger/json')).body
    expect(Object.keys(doc.paths).filter((p: string) => p.startsWith('/internal'))).toEqual([])
    const routes: [string, string, string][] = [
      ['get', '/api/v1/domains', '200'],
      ['post', '/api/v1/domains', '201'],
      ['post', '/api/v1/domains/{hostname}/verify', '200'],
      ['patch', '/api/v1/domains/{hostname}', '200'],
      ['delete', '/api/v1/domains/{hostname}', '200'],
      ['get', '/api/v1/tags', '200'],
      ['post', '/api/v1/tags', '201'],
      ['delete', '/api/v1/tags/{tagId}', '200'],
      ['get', '/api/v1/links/{alias}/tags', '200'],
      ['post', '/api/v1/links/{alias}/tags', '201'],
      ['delete', '/api/v1/links/{alias}/tags/{tagId}', '200'],
    ]
    const schemaOf = (ref: string) => doc.components.schemas[ref.split('/').pop()!]
    for (const [method, path, ok] of routes) {
      const op = doc.paths[path]?.[method]
      const where = `${method} ${path}`
      expect(op, where).toBeDefined()
      expect(op.tags?.length, where).toBeGreaterThan(0)
      expect(typeof op.summary, where).toBe('string')
      expect(op.security, where).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }, { oauth2: op['x-scopes'] }])
      for (const status of ['401', '429']) expect(op.responses[status].content['application/json'].schema.$ref, `${where} ${status}`).toBe('#/components/schemas/ErrorResponse')
      expect(schemaOf(op.responses[ok].content['application/json'].schema.$ref).examples.length, where).toBeGreaterThan(0)
      if ((method === 'post' || method === 'patch') && !path.endsWith('/verify')) {
        expect(schemaOf(op.requestBody.content['application/json'].schema.$ref).examples.length, `${where} body`).toBeGreaterThan(0)
        expect(op.responses['400'], where).toBeDefined()
      }
    }
    expect(doc.components.schemas.ErrorResponse.properties.error.enum).toEqual(expect.arrayContaining(['DOMAIN_NOT_VERIFIED', 'DOMAIN_LIMIT_REACHED', 'TAG_LIMIT_REACHED']))
  })
})
