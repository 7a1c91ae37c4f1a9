// CORS for browser-based hosts (the MCP Inspector runs OAuth in the page): the discovery documents,
// registration, token and revocation answer any origin without credentials, errors and limits included,
// and a preflight is 204 naming the methods and headers a page sends. Other paths stay without CORS.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, testApi, TEST_IP_HEADER, uniqueIp, type TestApp } from '../support/api'
import { ISSUER } from '../support/oauth'

const ORIGIN = 'http://localhost:6274' // the MCP Inspector's own page
let app: TestApp

beforeAll(async () => {
  app = (await testApi()).app
})

function preflight(path: string, method: string, headers: string) {
  return app.handle(
    new Request(`${ISSUER}${path}`, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': method, 'access-control-request-headers': headers, [TEST_IP_HEADER]: uniqueIp() },
    }),
  )
}

function expectOpen(headers: Headers, what: string): void {
  expect(headers.get('access-control-allow-origin'), what).toBe('*')
  expect(headers.get('access-control-allow-credentials'), what).toBeNull()
}

const listed = (value: string | null) => (value ?? '').split(',').map((v) => v.trim().toLowerCase())

describe('CORS on the OAuth endpoints', () => {
  test.each([
    ['/.well-known/oauth-authorization-server', 'GET', 'mcp-protocol-version'],
    ['/.well-known/oauth-protected-resource', 'GET', 'mcp-protocol-version'],
    ['/.well-known/oauth-protected-resource/mcp', 'GET', 'mcp-protocol-version'],
    ['/oauth/register', 'POST', 'content-type'],
    ['/oauth/token', 'POST', 'content-type,authorization'],
    ['/oauth/revoke', 'POST', 'content-type,authorization'],
  ])('preflight of %s: 204 allowing %s and the headers a page sends', async (path, method, headers) => {
    const res = await preflight(path, method, headers)
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(204)
    expectOpen(res.headers, path)
    expect(listed(res.headers.get('access-control-allow-methods')), path).toContain(method.toLowerCase())
    const allowed = listed(res.headers.get('access-control-allow-headers'))
    for (const header of headers.split(',')) expect(allowed, path).toContain(header)
    expect(Number(res.headers.get('access-control-max-age')), path).toBeGreaterThan(0)
  })

  test('the answers themselves carry Access-Control-Allow-Origin: documents, a registration, a token error, a revocation', async () => {
    const headers = { origin: ORIGIN }
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await call(app, 'GET', path, { headers })
      expect(res.status, show(res)).toBe(200)
      expectOpen(res.headers, path)
    }
    const registered = await call(app, 'POST', '/oauth/register', { headers, body: { redirect_uris: ['http://localhost:6274/oauth/callback'] } })
    expect(registered.status, show(registered)).toBe(201)
    expectOpen(registered.headers, 'register')
    const refused = await call(app, 'POST', '/oauth/register', { headers, body: { redirect_uris: ['javascript:alert(1)'] } })
    expect(refused.status, show(refused)).toBe(400)
    expectOpen(refused.headers, 'a refused registration')
    const form = { ...headers, 'content-type': 'application/x-www-form-urlencoded' }
    const token = await call(app, 'POST', '/oauth/token', { headers: form, body: `grant_type=authorization_code&client_id=${registered.body.client_id}&code=nope&code_verifier=${'v'.repeat(43)}` })
    expect(token.status, show(token)).toBe(400)
    expect(token.body.error, show(token)).toBe('invalid_grant')
    expectOpen(token.headers, 'token')
    const revoked = await app.handle(
      new Request(`${ISSUER}/oauth/revoke`, { method: 'POST', headers: { ...form, [TEST_IP_HEADER]: uniqueIp() }, body: `token=at_${'x'.repeat(43)}&client_id=${registered.body.client_id}` }),
    )
    expect(revoked.status).toBe(200)
    expectOpen(revoked.headers, 'revoke')
  })

  test('a rate-limited answer is readable by the page too (429 with Access-Control-Allow-Origin)', async () => {
    const ip = uniqueIp()
    let last: Response | undefined
    for (let i = 0; i < 301 && last?.status !== 429; i++) {
      last = await app.handle(
        new Request(`${ISSUER}/oauth/token`, {
          method: 'POST',
          headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded', [TEST_IP_HEADER]: ip },
          body: 'grant_type=refresh_token',
        }),
      )
    }
    expect(last?.status).toBe(429)
    expectOpen(last!.headers, 'a 429')
  })

  test('security: a cookie changes nothing, and paths outside the list get no CORS (authorize, consent, the REST API)', async () => {
    const res = await call(app, 'POST', '/oauth/register', { headers: { origin: ORIGIN, cookie: 'session=whatever' }, body: { redirect_uris: ['http://localhost:6274/oauth/callback'] } })
    expect(res.status, show(res)).toBe(201)
    expect(res.headers.get('access-control-allow-credentials')).toBeNull()
    for (const path of ['/oauth/authorize', '/api/v1/links', '/api/v1/oauth/approve']) {
      const pre = await preflight(path, 'POST', 'content-type')
      expect(pre.headers.get('access-control-allow-origin'), path).toBeNull()
    }
    const links = await call(app, 'GET', '/api/v1/links', { headers: { origin: ORIGIN } })
    expect(links.headers.get('access-control-allow-origin'), show(links)).toBeNull()
  })
})
