// POST /oauth/register (RFC 7591) as a real client registers: oauth4webapi's dynamic registration.
// Happy: public client registered as "none" whatever it asked. Errors: RFC 7591 bodies for bad redirect
// URIs and metadata. Security: no secret issued, the per-IP limit, no browser-run schemes.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import * as oauth from 'oauth4webapi'
import { oauthClients } from '../../src/db/schema'
import { call, show, testApi, TEST_IP_HEADER, uniqueIp, type TestApp } from '../support/api'
import { REGISTER_RATE } from '../../src/modules/oauth'

test('the registration limit fits hosted hosts registering their users from a few addresses: at least 600 an hour', () => {
  expect(REGISTER_RATE.limit).toBeGreaterThanOrEqual(600)
  expect(REGISTER_RATE.windowMs).toBe(3_600_000)
})

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
/** testConfig's PUBLIC_API_URL is the issuer. */
const as: oauth.AuthorizationServer = { issuer: 'https://api.sho.rt', registration_endpoint: 'https://api.sho.rt/oauth/register' }

beforeAll(async () => {
  api = await testApi()
  app = api.app
})

/** oauth4webapi's request, answered by the app in-process, from its own client IP. */
function register(metadata: Record<string, unknown>, ip = uniqueIp()) {
  return oauth.dynamicClientRegistrationRequest(as, metadata as Partial<oauth.Client>, {
    [oauth.customFetch]: (url: string, init?: RequestInit) => app.handle(new Request(url, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), [TEST_IP_HEADER]: ip } })),
  })
}

async function refusal(metadata: Record<string, unknown>): Promise<{ status: number; error: string }> {
  try {
    await oauth.processDynamicClientRegistrationResponse(await register(metadata))
    return { status: 201, error: 'registered' }
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) return { status: error.status, error: error.error }
    throw error
  }
}

describe('POST /oauth/register', () => {
  test('a public client is registered as "none" even when it asks for client_secret_post, and no secret exists', async () => {
    const response = await register({
      client_name: 'Example MCP host',
      redirect_uris: ['http://127.0.0.1:33418/callback', 'https://app.example.com/cb', 'com.example.app:/oauth2redirect'],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'client_secret_post',
      scope: 'links:read links:write offline_access',
    })
    expect(response.status).toBe(201)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const client = await oauth.processDynamicClientRegistrationResponse(response)
    expect(client.client_id).toMatch(/^cli_[A-Za-z0-9_-]{22}$/)
    expect(client).toMatchObject({ token_endpoint_auth_method: 'none', response_types: ['code'], grant_types: ['authorization_code', 'refresh_token'], scope: 'links:read links:write offline_access' })
    expect(client.client_secret).toBeUndefined()
    expect(Math.abs(Number(client.client_id_issued_at) - Date.now() / 1000)).toBeLessThan(60)
    const [row] = await api.deps.db.select().from(oauthClients).where(eq(oauthClients.id, client.client_id))
    expect(row?.redirectUris).toEqual(['http://127.0.0.1:33418/callback', 'https://app.example.com/cb', 'com.example.app:/oauth2redirect'])
  })

  test('defaults: authorization_code only, no scope', async () => {
    const client = await oauth.processDynamicClientRegistrationResponse(await register({ redirect_uris: ['http://[::1]:8080/cb'] }))
    expect(client.grant_types).toEqual(['authorization_code'])
    expect(client.scope).toBeUndefined()
  })

  test.each([
    ['http on a public host', ['http://app.example.com/cb']],
    ['http on a private address', ['http://192.168.1.10/cb']],
    ['a fragment', ['https://app.example.com/cb#frag']],
    ['javascript:', ['javascript:alert(1)']],
    ['data:', ['data:text/html,hi']],
    ['an about: URI', ['about:blank']],
    ['a file: URI', ['file:///etc/passwd']],
    ['a vbscript: URI', ['vbscript:msgbox(1)']],
    ['a blob: URI', ['blob:https://app.example.com/0b6e']],
    ['a loopback fragment', ['http://127.0.0.1:8976/callback#https://evil.example']],
    ['a private-use fragment', ['cursor://anysphere.cursor-mcp/oauth/callback#x']],
    ['http on a name that merely starts like loopback', ['http://127.0.0.1.evil.example/cb']],
    ['a relative URI', ['/cb']],
    ['none at all', []],
    ['eleven of them', Array.from({ length: 11 }, (_, i) => `https://app.example.com/${i}`)],
  ])('refuses a redirect URI with %s: 400 invalid_redirect_uri', async (_, uris) => {
    expect(await refusal({ redirect_uris: uris })).toEqual({ status: 400, error: 'invalid_redirect_uri' })
  })

  test.each([
    ['an unknown scope', { scope: 'links:read admin' }],
    ['only the implicit grant (nothing left once it is dropped)', { grant_types: ['implicit'] }],
    ['only grants this server lacks', { grant_types: ['urn:ietf:params:oauth:grant-type:jwt-bearer', 'client_credentials'] }],
    ['grant_types that is not a list', { grant_types: 'authorization_code' }],
    ['no authorization_code grant', { grant_types: ['refresh_token'] }],
    ['a token response type', { response_types: ['token'] }],
    ['an http logo', { logo_uri: 'http://app.example.com/logo.png' }],
    ['an over-long name', { client_name: 'x'.repeat(201) }],
  ])('refuses %s: 400 invalid_client_metadata', async (_, extra) => {
    expect(await refusal({ redirect_uris: ['https://app.example.com/cb'], ...extra })).toEqual({ status: 400, error: 'invalid_client_metadata' })
  })

  test('the redirect URIs real hosts register pass: Cursor, VS Code, private-use schemes with or without a dot, loopback on any port', async () => {
    const uris = [
      'cursor://anysphere.cursor-mcp/oauth/callback', // Cursor
      'vscode://vscode.github-authentication/did-authenticate', // VS Code's URI handler
      'http://127.0.0.1:33418', // VS Code's loopback server (no path)
      'https://vscode.dev/redirect',
      'http://localhost:6274/oauth/callback', // MCP Inspector
      'myapp:/cb',
    ]
    const client = await oauth.processDynamicClientRegistrationResponse(await register({ redirect_uris: uris }))
    expect(client.redirect_uris).toEqual(uris)
  })

  test('one refused URI refuses the whole registration, and nothing is stored', async () => {
    const before = (await api.deps.db.select({ id: oauthClients.id }).from(oauthClients)).length
    expect(await refusal({ redirect_uris: ['cursor://anysphere.cursor-mcp/oauth/callback', 'javascript:alert(1)'] })).toEqual({ status: 400, error: 'invalid_redirect_uri' })
    expect((await api.deps.db.select({ id: oauthClients.id }).from(oauthClients)).length).toBe(before)
  })

  test("grant types the server lacks are dropped, not refused: Claude's jwt-bearer, VS Code 1.10x's device_code (RFC 7591 3.2.1)", async () => {
    const client = await oauth.processDynamicClientRegistrationResponse(
      await register({
        redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
        grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:jwt-bearer', 'urn:ietf:params:oauth:grant-type:device_code', 'client_credentials'],
      }),
    )
    expect(client.grant_types).toEqual(['authorization_code', 'refresh_token'])
    const [row] = await api.deps.db.select().from(oauthClients).where(eq(oauthClients.id, client.client_id))
    expect(row?.grantTypes).toEqual(['authorization_code', 'refresh_token'])
  })

  test("bodies that are not metadata get RFC error bodies too, never the API's ErrorResponse", async () => {
    for (const body of ['{nope', '[]', JSON.stringify({ redirect_uris: ['https://a.example/\u0000'] })]) {
      const res = await call(app, 'POST', '/oauth/register', { body, headers: { 'content-type': 'application/json' } })
      expect(res.status, show(res)).toBe(400)
      expect(typeof res.body.error, show(res)).toBe('string')
      expect(res.body.error, show(res)).toMatch(/^[a-z_]+$/)
      expect(res.body.success, show(res)).toBeUndefined()
    }
  })

  test(`security: ${REGISTER_RATE.limit} registrations an hour per client IP, then 429 with Retry-After`, async () => {
    const ip = uniqueIp()
    for (let i = 0; i < REGISTER_RATE.limit; i++) expect((await register({ redirect_uris: ['https://app.example.com/cb'] }, ip)).status).toBe(201)
    const limited = await register({ redirect_uris: ['https://app.example.com/cb'] }, ip)
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(((await limited.json()) as { error: string }).error).toBe('temporarily_unavailable')
  })
})
