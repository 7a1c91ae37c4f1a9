import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, testApi, TEST_INTERNAL_SECRET, type TestApp } from '../../test/support/api'
import SwaggerParser from '@apidevtools/swagger-parser'
import { API_DOCUMENT_VERSION, normalizeDocument } from './docs'
import { ERROR_STATUS } from './errors'

/** Every public route, with whether it takes a bearer token. */
const PUBLIC_ROUTES: [method: string, path: string, auth: boolean][] = [
  ['post', '/api/v1/guest/token', false],
  ['get', '/api/v1/account/status', true],
  ['post', '/api/v1/guest/register', true],
  ['post', '/api/v1/guest/verify', true],
  ['post', '/api/v1/account/upgrade', true],
  ['get', '/api/v1/account/upgrade/{checkout_id}', true],
  ['get', '/api/v1/account/keys', true],
  ['post', '/api/v1/account/keys', true],
  ['delete', '/api/v1/account/keys/{keyId}', true],
  ['get', '/api/v1/account/notifications', true],
  ['patch', '/api/v1/account/notifications', true],
  ['post', '/api/v1/billing/stripe/webhook', false],
  ['post', '/api/v1/alias/check', false],
  ['post', '/api/v1/shorten', true],
  ['get', '/api/v1/links', true],
  ['post', '/api/v1/links/bulk', true],
  ['get', '/api/v1/links/{alias}', true],
  ['patch', '/api/v1/links/{alias}', true],
  ['delete', '/api/v1/links/{alias}', true],
  ['get', '/api/v1/links/{alias}/qr', true],
  ['get', '/tls/ask', false],
  ['post', '/api/v1/reports', false],
  ['get', '/api/v1/links/{alias}/routing', true],
  ['put', '/api/v1/links/{alias}/routing', true],
  ['delete', '/api/v1/links/{alias}/routing', true],
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
  ['patch', '/api/v1/domains/{hostname}', true],
  ['delete', '/api/v1/domains/{hostname}', true],
  ['get', '/health', false],
  ['get', '/ready', false],
  ['post', '/api/analytics/link-conversion', true],
  ['get', '/api/analytics/link-conversion/pixel', false],
  ['get', '/billing/{id}', false],
  ['post', '/billing/{id}', false],
  ['post', '/oauth/register', false],
  ['get', '/.well-known/oauth-authorization-server', false],
  ['get', '/.well-known/oauth-protected-resource', false],
  ['get', '/.well-known/oauth-protected-resource/mcp', false],
  ['get', '/oauth/authorize', false],
  ['post', '/oauth/token', false],
  ['post', '/oauth/revoke', false],
  ['get', '/api/v1/oauth/request/{requestId}', true],
  ['post', '/api/v1/oauth/approve', true],
  ['get', '/api/v1/agents', true],
  ['post', '/api/v1/agents', true],
  ['patch', '/api/v1/agents/{agentId}', true],
  ['post', '/api/v1/agents/{agentId}/tokens', true],
  ['post', '/api/v1/agents/{agentId}/kill', true],
  ['get', '/api/v1/agents/{agentId}/audit', true],
  ['get', '/api/v1/agent/approvals', true],
  ['get', '/api/v1/agent/approvals/{approvalId}', true],
  ['post', '/api/v1/agent/approvals/{approvalId}/{decision}', true],
  ['get', '/signin', false],
  ['post', '/signin', false],
  ['post', '/signin/code', false],
  ['get', '/signin/done', false],
  ['post', '/signout', false],
  ['get', '/signin/github', false],
  ['get', '/signin/github/callback', false],
  ['get', '/signin/google', false],
  ['get', '/signin/google/callback', false],
  ['get', '/consent', false],
  ['post', '/consent', false],
  ['get', '/approvals/{approvalId}', false],
  ['post', '/approvals/{approvalId}', false],
  ['post', '/mcp', true],
]

/** Routes for the human alone (API key or signed-in session): never an at_ token. */
const HUMAN = new Set([
  '/api/v1/account/keys',
  '/api/v1/account/keys/{keyId}',
  '/api/v1/account/notifications',
  '/api/v1/oauth/request/{requestId}',
  '/api/v1/oauth/approve',
  '/api/v1/agents',
  '/api/v1/agents/{agentId}',
  '/api/v1/agents/{agentId}/tokens',
  '/api/v1/agents/{agentId}/kill',
  '/api/v1/agents/{agentId}/audit',
  '/api/v1/agent/approvals',
  '/api/v1/agent/approvals/{approvalId}/{decision}',
])

/** Routes for guest tokens alone (a guest becoming an account): no session. */
const GUEST_ONLY = new Set(['/api/v1/guest/register', '/api/v1/guest/verify'])

/** A merchant's server reports conversions with its key (or the click's signature): no session. */
const BEARER_ONLY = new Set(['/api/analytics/link-conversion'])

/** Routes for OAuth access tokens alone (the MCP endpoint): never an API key or a guest token. */
const OAUTH_ONLY = new Set(['/mcp'])

/** RFC 6749 / 7009 requests: form-encoded bodies. */
const FORM = new Set(['/oauth/token', '/oauth/revoke'])

/** OAuth endpoints answer RFC 6749 error bodies (OAuthErrorResponse), not ErrorResponse with code examples. */
const OAUTH = new Set(['/oauth/register', '/oauth/token', '/oauth/revoke'])

/** The HTML pages of sign-in and consent: forms and redirects, checked in src/modules/signin and test/oauth/consent-page tests. */
const SIGN_IN_PAGES = [
  '/signin',
  '/signin/code',
  '/signin/done',
  '/signout',
  '/signin/github',
  '/signin/github/callback',
  '/signin/google',
  '/signin/google/callback',
  '/consent',
  '/approvals/{approvalId}',
]

/** Routes whose success answer is not JSON alone (the pixel's GIF, the checkout pages, MCP's event stream); checked on their own below. */
const NOT_JSON = new Set(['/api/analytics/link-conversion/pixel', '/api/v1/links/{alias}/qr', '/billing/{id}', '/oauth/authorize', '/oauth/revoke', '/mcp', ...SIGN_IN_PAGES])

/** POST routes that take no JSON body: the token request, the DNS check, and Stripe's raw signed payload. */
const BODYLESS = new Set([
  '/api/v1/guest/token',
  '/api/v1/domains/{hostname}/verify',
  '/api/v1/billing/stripe/webhook',
  '/api/v1/agents/{agentId}/kill',
  '/api/v1/agent/approvals/{approvalId}/{decision}',
])

let app: TestApp
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
      expect(op.tags?.length, where).toBeGreaterThan(0)
      expect(typeof op.summary, where).toBe('string')
      const scopes = op['x-scopes'] as string[] | undefined
      const security = !auth
        ? []
        : HUMAN.has(path)
          ? [{ bearerAuth: [] }, { sessionCookie: [] }]
          : OAUTH_ONLY.has(path)
            ? [{ oauth2: [] }]
            : GUEST_ONLY.has(path)
              ? [{ bearerAuth: [] }]
              : [{ bearerAuth: [] }, ...(BEARER_ONLY.has(path) ? [] : [{ sessionCookie: [] }]), ...(scopes ? [{ oauth2: scopes }] : [])]
      expect(op.security, where).toEqual(security)
      if (NOT_JSON.has(path)) continue
      for (const [status, response] of Object.entries(op.responses as Record<string, { description?: string; content?: object }>)) {
        expect(typeof response.description, `${where} ${status}`).toBe('string')
        expect(Object.keys(response.content ?? {}), `${where} ${status}`).toEqual(['application/json'])
      }
      const okStatus = ['200', '201'].find((status) => op.responses[status])!
      const okRef: string = op.responses[okStatus].content['application/json'].schema.$ref
      const okModel = doc.components.schemas[okRef.split('/').pop()!]
      expect(okModel?.examples?.length, `${where}: example of ${okRef}`).toBeGreaterThan(0)
      if (auth) {
        expect(op.responses['401'].content['application/json'].schema.$ref, where).toBe('#/components/schemas/ErrorResponse')
        expect(Object.keys(op.responses['401'].content['application/json'].examples), where).toContain('UNAUTHORIZED')
        expect(Object.keys(op.responses[okStatus].headers ?? {}), where).toEqual(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
      }
      if (method === 'post' && !BODYLESS.has(path)) {
        const type = FORM.has(path) ? 'application/x-www-form-urlencoded' : 'application/json'
        const ref: string = op.requestBody.content[type].schema.$ref
        expect(Object.keys(op.requestBody.content), where).toEqual([type])
        expect(doc.components.schemas[ref.split('/').pop()!]?.examples?.length, `${where}: example of ${ref}`).toBeGreaterThan(0)
        if (OAUTH.has(path)) expect(op.responses['400'].content['application/json'].schema.$ref, where).toBe('#/components/schemas/OAuthErrorResponse')
        else expect(Object.keys(op.responses['400'].content['application/json'].examples), where).toContain('MALFORMED_JSON')
      }
    }
    expect(doc.paths['/api/v1/shorten'].post.responses['429'].headers['Retry-After'], 'Retry-After documented').toBeDefined()
    expect(Object.keys(doc.paths['/api/v1/shorten'].post.responses).sort()).toEqual(['200', '202', '400', '401', '403', '409', '413', '429', '503'])
  })

  test('error examples carry the codes the route answers with, each under its own status', () => {
    const shorten = doc.paths['/api/v1/shorten'].post.responses
    const codes = (status: string) => Object.keys(shorten[status].content['application/json'].examples)
    expect(codes('409')).toEqual(expect.arrayContaining(['ALIAS_TAKEN', 'IDEMPOTENCY_IN_PROGRESS']))
    expect(codes('403')).toEqual(['DOMAIN_NOT_ALLOWED', 'INSUFFICIENT_SCOPE'])
    expect(codes('429')).toEqual(expect.arrayContaining(['GUEST_LINK_LIMIT', 'LINK_QUOTA_EXCEEDED', 'RATE_LIMITED', 'GUEST_REQUEST_LIMIT']))
    const stats = doc.paths['/api/v1/links/{alias}/stats'].get.responses
    expect(Object.keys(stats['403'].content['application/json'].examples)).toEqual(['STATS_REQUIRES_PRO', 'INSUFFICIENT_SCOPE'])
    expect(Object.keys(stats['404'].content['application/json'].examples)).toEqual(['LINK_NOT_FOUND'])
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, any> }>>)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses)) {
          for (const [name, example] of Object.entries((response.content?.['application/json']?.examples ?? {}) as Record<string, any>)) {
            const where = `${method.toUpperCase()} ${path} ${status} ${name}`
            expect(example.value.error, where).toBe(name)
            expect(String(ERROR_STATUS[name as keyof typeof ERROR_STATUS]), where).toBe(status)
            expect(example.value.hint.length, where).toBeGreaterThan(0)
          }
        }
      }
    }
  })

  test('Idempotency-Key is a documented header exactly where the API honours it', () => {
    const withKey = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => (op.parameters ?? []).some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'Idempotency-Key'))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    )
    expect(withKey.sort()).toEqual(
      [
        'POST /api/v1/shorten',
        'POST /api/v1/links/bulk',
        'PATCH /api/v1/links/{alias}',
        'DELETE /api/v1/links/{alias}',
        'PUT /api/v1/links/{alias}/routing',
        'DELETE /api/v1/links/{alias}/routing',
        'POST /api/v1/account/upgrade',
        'POST /api/v1/tags',
        'DELETE /api/v1/tags/{tagId}',
        'POST /api/v1/links/{alias}/tags',
        'DELETE /api/v1/links/{alias}/tags/{tagId}',
        'POST /api/v1/domains',
        'PATCH /api/v1/domains/{hostname}',
        'DELETE /api/v1/domains/{hostname}',
      ].sort(),
    )
    const reused = doc.paths['/api/v1/shorten'].post.responses['400'].content['application/json'].examples
    expect(Object.keys(reused)).toContain('IDEMPOTENCY_KEY_REUSED')
  })

  test('no parameter carries a default Swagger UI would fill in but the parameter does not have (tag=0)', () => {
    const stray: string[] = []
    for (const [path, operations] of Object.entries(
      doc.paths as Record<string, Record<string, { parameters?: Array<{ name: string; schema?: { default?: unknown; anyOf?: Array<{ default?: unknown }> } }> }>>,
    )) {
      for (const [method, op] of Object.entries(operations)) {
        for (const p of op.parameters ?? []) {
          for (const branch of p.schema?.anyOf ?? []) if ('default' in branch && branch.default !== p.schema?.default) stray.push(`${method} ${path} ${p.name}`)
        }
      }
    }
    expect(stray).toEqual([])
  })

  test('operationIds are readable and unique; every used tag is declared and every declared tag used', () => {
    const ops = Object.values(doc.paths as Record<string, Record<string, { operationId: string; tags: string[] }>>).flatMap((item) => Object.values(item))
    const ids = ops.map((op) => op.operationId)
    for (const id of ids) expect(id, id).toMatch(/^[a-z][A-Za-z]+$/)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toEqual(expect.arrayContaining(['createLink', 'getLinkStats', 'createGuestToken', 'reportConversion']))
    const used = new Set(ops.flatMap((op) => op.tags))
    expect(new Set(doc.tags.map((t: { name: string }) => t.name))).toEqual(used)
  })

  test('the pixel answers a GIF; the checkout button posts a form; servers are given', () => {
    const pixel = doc.paths['/api/analytics/link-conversion/pixel'].get
    expect(Object.keys(pixel.responses['200'].content)).toEqual(['image/gif'])
    const confirm = doc.paths['/billing/{id}'].post
    expect(Object.keys(confirm.requestBody.content)).toEqual(['application/x-www-form-urlencoded'])
    expect(Object.keys(confirm.responses['200'].content).sort()).toEqual(['application/json', 'text/html'])
    expect(doc.servers?.length).toBeGreaterThan(0)
  })

  test('a page that answers an error status with HTML keeps its page there beside the ErrorResponse', () => {
    const cases: [method: string, path: string, status: string, code: string][] = [
      ['post', '/approvals/{approvalId}', '400', 'VALIDATION_FAILED'],
      ['post', '/billing/{id}', '404', 'CHECKOUT_NOT_FOUND'],
    ]
    for (const [method, path, status, code] of cases) {
      const response = doc.paths[path][method].responses[status]
      const where = `${method.toUpperCase()} ${path} ${status}: ${JSON.stringify(response)}`
      expect(Object.keys(response.content).sort(), where).toEqual(['application/json', 'text/html'])
      expect(response.content['application/json'].schema.$ref, where).toBe('#/components/schemas/ErrorResponse')
      expect(Object.keys(response.content['application/json'].examples), where).toContain(code)
    }
  })

  test('the MCP endpoint: a JSON-RPC body, a JSON answer or an event stream, its 401 and Origin refusal', () => {
    const mcp = doc.paths['/mcp'].post
    const where = JSON.stringify(mcp).slice(0, 600)
    expect(Object.keys(mcp.requestBody.content), where).toEqual(['application/json'])
    expect(doc.components.schemas.McpMessage.examples.length, where).toBeGreaterThan(0)
    expect(Object.keys(mcp.responses['200'].content).sort(), where).toEqual(['application/json', 'text/event-stream'])
    expect(Object.keys(mcp.responses['401'].content['application/json'].examples), where).toEqual(['UNAUTHORIZED'])
    expect(Object.keys(mcp.responses['403'].content['application/json'].examples), where).toEqual(['ORIGIN_NOT_ALLOWED'])
    expect(Object.keys(mcp.responses['200'].headers), where).toEqual(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
  })

  test('every route an API key may call names the one OAuth scope an at_ token will need (the route → scope table)', () => {
    const table: Record<string, string> = {
      'GET /api/v1/links': 'links:read',
      'GET /api/v1/links/{alias}': 'links:read',
      'GET /api/v1/links/{alias}/qr': 'links:read',
      'POST /api/v1/shorten': 'links:write',
      'POST /api/v1/links/bulk': 'links:write',
      'PATCH /api/v1/links/{alias}': 'links:write',
      'DELETE /api/v1/links/{alias}': 'links:delete',
      'GET /api/v1/links/{alias}/routing': 'links:read',
      'PUT /api/v1/links/{alias}/routing': 'links:write',
      'DELETE /api/v1/links/{alias}/routing': 'links:write',
      'GET /api/v1/tags': 'tags:read',
      'GET /api/v1/links/{alias}/tags': 'tags:read',
      'POST /api/v1/tags': 'tags:write',
      'DELETE /api/v1/tags/{tagId}': 'tags:write',
      'POST /api/v1/links/{alias}/tags': 'tags:write',
      'DELETE /api/v1/links/{alias}/tags/{tagId}': 'tags:write',
      'GET /api/v1/domains': 'domains:read',
      'POST /api/v1/domains': 'domains:write',
      'POST /api/v1/domains/{hostname}/verify': 'domains:write',
      'PATCH /api/v1/domains/{hostname}': 'domains:write',
      'DELETE /api/v1/domains/{hostname}': 'domains:write',
      'GET /api/v1/links/{alias}/stats': 'stats:read',
      'POST /api/analytics/link-conversion': 'conversions:write',
      'GET /api/v1/account/status': 'account:read',
      'GET /api/v1/account/upgrade/{checkout_id}': 'account:read',
      'POST /api/v1/account/upgrade': 'billing:write',
      'GET /api/v1/webhooks': 'webhooks:read',
      'GET /api/v1/webhooks/{id}': 'webhooks:read',
      'GET /api/v1/webhooks/{id}/deliveries': 'webhooks:read',
      'POST /api/v1/webhooks': 'webhooks:write',
      'PATCH /api/v1/webhooks/{id}': 'webhooks:write',
      'DELETE /api/v1/webhooks/{id}': 'webhooks:write',
      'POST /api/v1/webhooks/{id}/rotate-secret': 'webhooks:write',
      'POST /api/v1/webhooks/{id}/test': 'webhooks:write',
      'POST /api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver': 'webhooks:write',
    }
    const found: Record<string, string> = {}
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { 'x-scopes'?: string[]; description?: string }>>)) {
      for (const [method, op] of Object.entries(item)) {
        if (!op['x-scopes']) continue
        expect(op['x-scopes'].length, `${method} ${path}`).toBe(1)
        found[`${method.toUpperCase()} ${path}`] = op['x-scopes'][0]!
        expect(op.description, `${method} ${path}`).toContain(`\`${op['x-scopes'][0]}\``)
      }
    }
    expect(found).toEqual(table)
  })

  test('a real validator (swagger-parser) accepts the document', async () => {
    // validate() dereferences in place: give it a copy.
    await expect(SwaggerParser.validate(JSON.parse(raw))).resolves.toBeDefined()
  })

  test('every route of the app is in the document, but the internal ones and the UI', () => {
    const routes = (app as unknown as { routes: { method: string; path: string }[] }).routes
    const missing = routes
      // CORS preflights (OPTIONS) are answered for browsers, not operations a client calls; /metrics is the
      // operator's Prometheus scrape (text, its own token), not part of the API; /favicon.ico is the
      // dashboard's icon for browsers, like /app.
      .filter(
        (r) =>
          !r.path.startsWith('/internal/') &&
          !r.path.startsWith('/swagger') &&
          !r.path.startsWith('/app') &&
          !['/metrics', '/favicon.ico'].includes(r.path) &&
          !['HEAD', 'ALL', 'OPTIONS'].includes(r.method),
      )
      .map((r) => ({ method: r.method.toLowerCase(), path: r.path.replace(/:(\w+)/g, '{$1}') }))
      .filter((r) => !doc.paths[r.path]?.[r.method])
    expect(missing).toEqual([])
    expect(routes.length).toBeGreaterThan(PUBLIC_ROUTES.length)
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
    // The operators' routes are checked by src/modules/admin/admin.docs.test.ts, the webhooks' by
    // src/modules/webhooks/webhooks.docs.test.ts.
    const listed = Object.keys(doc.paths).filter((p) => !p.startsWith('/api/v1/admin/') && !p.startsWith('/api/v1/webhooks'))
    expect(listed.sort()).toEqual([...new Set(PUBLIC_ROUTES.map(([, path]) => path))].sort())
  })

  test('the UI is served at /swagger', async () => {
    const res = await call(app, 'GET', '/swagger')
    expect(res.status, show(res)).toBe(200)
    expect(res.headers.get('content-type'), show(res)).toContain('text/html')
    expect(res.text, show(res)).toContain('swagger-ui')
  })

  test('/swagger/json/ (trailing slash) answers the same valid document', async () => {
    const res = await call(app, 'GET', '/swagger/json/')
    expect(res.status, show(res)).toBe(200)
    expect(res.text).toBe(raw)
  })

  test('normalizeDocument leaves its input alone', () => {
    const input = { paths: { '/x': { get: { responses: { 200: { $id: 'a', content: { 'text/plain': {} } } } } } } }
    const before = JSON.stringify(input)
    normalizeDocument(input)
    expect(JSON.stringify(input)).toBe(before)
  })
})
