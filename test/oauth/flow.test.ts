// The OAuth 2.1 flow of DESIGN "Machine access", end to end, as a real client runs it (oauth4webapi):
// discovery, dynamic registration, authorize → consent page, the human reads and approves the request
// with their API key, the code exchange (iss checked), the at_ token on the REST API within its scope,
// refresh rotation, and revocation (RFC 7009) with the resource server's 401 challenge.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import * as oauth from 'oauth4webapi'
import { links } from '../../src/db/schema'
import { SCOPES } from '../../src/lib/agent-access'
import { testApi } from '../support/api'
import { newAccount, type TestAccount } from '../support/fixtures'
import { appFetch, approveAsHuman, asHuman, authorizationUrl, discoverAndRegister, ISSUER, openAuthorization, read, refresh, revoke, shown, withToken, type Flow } from '../support/oauth'

const RESOURCE_METADATA = `${ISSUER}/.well-known/oauth-protected-resource`
const ALL_SCOPES = Object.keys(SCOPES)

let api: Awaited<ReturnType<typeof testApi>>
let flow: Flow
let human: TestAccount

beforeAll(async () => {
  api = await testApi()
  human = await newAccount(api.deps.db, 'pro')
  flow = await discoverAndRegister(appFetch(api.app))
})

describe('discovery', () => {
  test('RFC 8414 metadata, read by oauth4webapi, has every field DESIGN lists', () => {
    expect(flow.as).toMatchObject({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/oauth/authorize`,
      token_endpoint: `${ISSUER}/oauth/token`,
      registration_endpoint: `${ISSUER}/oauth/register`,
      revocation_endpoint: `${ISSUER}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none', 'private_key_jwt'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    })
    expect([...(flow.as.scopes_supported ?? [])].sort()).toEqual([...ALL_SCOPES].sort())
  })

  test('RFC 9728 protected resource metadata, at the root (the issuer) and at /mcp (<issuer>/mcp)', async () => {
    const prm = await oauth.processResourceDiscoveryResponse(new URL(ISSUER), await oauth.resourceDiscoveryRequest(new URL(ISSUER), flow.options))
    // The /mcp document names <issuer>/mcp (RFC 9728 3.3), which oauth4webapi checks (resources.test.ts).
    const mcpUrl = new URL(`${ISSUER}/mcp`)
    const mcp = await oauth.processResourceDiscoveryResponse(mcpUrl, await oauth.resourceDiscoveryRequest(mcpUrl, flow.options))
    for (const [doc, resource] of [
      [prm, ISSUER],
      [mcp, mcpUrl.href],
    ] as const) {
      expect(doc, JSON.stringify(doc)).toMatchObject({ resource, authorization_servers: [ISSUER], bearer_methods_supported: ['header'] })
      expect([...(doc.scopes_supported ?? [])].sort(), JSON.stringify(doc)).toEqual([...ALL_SCOPES].sort())
    }
  })

  test('a 401 without a token names the resource metadata and no error (RFC 6750 3.1)', async () => {
    const res = await asHuman(flow, null, 'GET', '/api/v1/links')
    expect(res.status, shown(res)).toBe(401)
    expect(res.headers.get('www-authenticate'), shown(res)).toBe(`Bearer resource_metadata="${RESOURCE_METADATA}"`)
  })
})

describe('the flow', () => {
  test('register → authorize → consent → code → at_ on REST → refresh → revoke', async () => {
    // Registration (in beforeAll): a public client.
    expect(flow.client.client_id).toMatch(/^cli_[A-Za-z0-9_-]{22}$/)
    expect(flow.client.token_endpoint_auth_method).toBe('none')

    // Authorize: a consent request, and the browser goes to the consent page.
    const started = await authorizationUrl(flow, 'links:read links:write offline_access')
    const requestId = await openAuthorization(flow, started)

    // The human reads it with their API key.
    const view = await asHuman(flow, human.key, 'GET', `/api/v1/oauth/request/${requestId}`)
    expect(view.status, shown(view)).toBe(200)
    expect(view.body.data, shown(view)).toMatchObject({
      request_id: requestId,
      client: { client_id: flow.client.client_id, client_name: 'Test MCP host', redirect_uri: flow.redirectUri },
      scopes: ['links:read', 'links:write', 'offline_access'],
      resource: ISSUER,
      status: 'pending',
    })
    const ttl = Date.parse(view.body.data.expires_at) - Date.now()
    expect(ttl, shown(view)).toBeGreaterThan(9 * 60_000)
    expect(ttl, shown(view)).toBeLessThanOrEqual(10 * 60_000)

    // ...and approves: the browser goes back to the client with code, state and iss.
    const redirect = await approveAsHuman(flow, human.key, requestId)
    expect(`${redirect.origin}${redirect.pathname}`).toBe(flow.redirectUri)
    expect(redirect.searchParams.get('iss'), redirect.href).toBe(ISSUER)
    expect(redirect.searchParams.get('state'), redirect.href).toBe(started.state)
    const decided = await asHuman(flow, human.key, 'GET', `/api/v1/oauth/request/${requestId}`)
    expect(decided.body.data?.status, shown(decided)).toBe('approved')

    // The client checks the response (iss included: the metadata says it is always sent) and exchanges the code.
    const params = oauth.validateAuthResponse(flow.as, flow.client, redirect, started.state)
    const tokenResponse = await oauth.authorizationCodeGrantRequest(flow.as, flow.client, oauth.None(), params, flow.redirectUri, started.verifier, {
      ...flow.options,
      additionalParameters: { resource: ISSUER },
    })
    const raw = await read(tokenResponse.clone() as Response)
    expect(raw.status, shown(raw)).toBe(200)
    expect(raw.headers.get('cache-control'), shown(raw)).toBe('no-store')
    expect(raw.body, shown(raw)).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: 'links:read links:write offline_access' })
    const tokens = await oauth.processAuthorizationCodeResponse(flow.as, flow.client, tokenResponse)
    expect(tokens.access_token).toMatch(/^at_[A-Za-z0-9_-]{20,}$/)
    expect(tokens.refresh_token).toMatch(/^rt_[A-Za-z0-9_-]{20,}$/)
    const at1 = tokens.access_token
    const rt1 = tokens.refresh_token!

    // The token on the REST API within its scope: the link is the human's.
    const created = await withToken(flow, at1, 'POST', '/api/v1/shorten', { url: 'https://example.com/oauth-flow' })
    expect(created.status, shown(created)).toBe(200)
    const alias = created.body.data.alias as string
    const listed = await withToken(flow, at1, 'GET', '/api/v1/links')
    expect(listed.status, shown(listed)).toBe(200)
    expect(
      listed.body.data.links.map((l: { alias: string }) => l.alias),
      shown(listed),
    ).toContain(alias)
    const [row] = await api.deps.db.select({ accountId: links.accountId }).from(links).where(eq(links.alias, alias))
    expect(row?.accountId).toBe(human.id)
    const byKey = await asHuman(flow, human.key, 'GET', '/api/v1/links')
    expect(
      byKey.body.data.links.map((l: { alias: string }) => l.alias),
      shown(byKey),
    ).toContain(alias)

    // Refresh rotates: a new pair; the old access token lives on until it expires or is revoked.
    const rotated = await refresh(flow, rt1)
    expect(rotated.access_token).toMatch(/^at_/)
    expect(rotated.refresh_token).toMatch(/^rt_/)
    expect(rotated.refresh_token).not.toBe(rt1)
    expect(rotated.access_token).not.toBe(at1)
    expect(rotated.scope).toBe('links:read links:write offline_access')
    for (const at of [at1, rotated.access_token]) {
      const res = await withToken(flow, at, 'GET', '/api/v1/links')
      expect(res.status, shown(res)).toBe(200)
    }

    // Revocation (RFC 7009): 200, then the token is refused with the RFC 6750 challenge.
    const revocation = await oauth.revocationRequest(flow.as, flow.client, oauth.None(), at1, flow.options)
    expect(revocation.status).toBe(200)
    await oauth.processRevocationResponse(revocation)
    // At once in this process, which had the verdict cached (other processes: test/oauth/two-process.test.ts).
    const refused = await withToken(flow, at1, 'GET', '/api/v1/links')
    expect(refused.status, shown(refused)).toBe(401)
    expect(refused.headers.get('www-authenticate'), shown(refused)).toBe(`Bearer resource_metadata="${RESOURCE_METADATA}", error="invalid_token"`)
    // An access token is revoked alone; its sibling of the rotation still works.
    const sibling = await withToken(flow, rotated.access_token, 'GET', '/api/v1/links')
    expect(sibling.status, shown(sibling)).toBe(200)

    // Revoking the refresh token takes its whole grant: the newest access token too.
    await revoke(flow, rotated.refresh_token!)
    const family = await withToken(flow, rotated.access_token, 'GET', '/api/v1/links')
    expect(family.status, shown(family)).toBe(401)
    // And an unknown token is 200 too (RFC 7009 2.2).
    await revoke(flow, 'at_thisTokenWasNeverIssuedByThisServer0000')
  })
})
