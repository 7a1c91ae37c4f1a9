// Resources (RFC 8707, RFC 9728) as MCP hosts use them: the /mcp metadata document names <issuer>/mcp
// (RFC 9728 3.3, checked by oauth4webapi as VS Code, Gemini CLI and the C# SDK check it), the resource a
// host sends is compared after RFC 3986 normalisation (SDK 1.x up to 1.29 sends `http://host/`), and a
// token carries its resource as audience: the issuer's works on REST and /mcp, <issuer>/mcp's on /mcp only.
import { beforeAll, describe, expect, test } from 'bun:test'
import * as oauth from 'oauth4webapi'
import { testApi } from '../support/api'
import { newAccount, type TestAccount } from '../support/fixtures'
import { appFetch, approveAsHuman, authorizationUrl, discoverAndRegister, ISSUER, oauthFailure, openAuthorization, openRaw, read, shown, type Flow, type Started } from '../support/oauth'

const MCP_RESOURCE = `${ISSUER}/mcp`
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })

let api: Awaited<ReturnType<typeof testApi>>
let flow: Flow
let human: TestAccount

beforeAll(async () => {
  api = await testApi()
  human = await newAccount(api.deps.db)
  flow = await discoverAndRegister(appFetch(api.app))
})

/** Authorize with `resource` (none when null), approved by the human; the started request and its redirect. */
async function approvedFor(resource: string | null): Promise<{ started: Started; redirect: URL }> {
  const started = await authorizationUrl(flow, 'links:read')
  if (resource === null) started.url.searchParams.delete('resource')
  else started.url.searchParams.set('resource', resource)
  const requestId = await openAuthorization(flow, started)
  return { started, redirect: await approveAsHuman(flow, human.key, requestId) }
}

/** The code exchange as oauth4webapi sends it, with `resource` at the token endpoint (none when null). */
function exchangeWith(started: Started, redirect: URL, resource: string | null) {
  const params = oauth.validateAuthResponse(flow.as, flow.client, redirect, started.state)
  return oauth
    .authorizationCodeGrantRequest(flow.as, flow.client, oauth.None(), params, flow.redirectUri, started.verifier, {
      ...flow.options,
      ...(resource !== null && { additionalParameters: { resource } }),
    })
    .then((response) => oauth.processAuthorizationCodeResponse(flow.as, flow.client, response))
}

async function tokenFor(authorizeResource: string | null, tokenResource: string | null = authorizeResource): Promise<string> {
  const { started, redirect } = await approvedFor(authorizeResource)
  return (await exchangeWith(started, redirect, tokenResource)).access_token
}

const atMcp = async (token: string, body = LIST) =>
  read(await flow.fetch(`${ISSUER}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body }))
const atRest = async (token: string) => read(await flow.fetch(`${ISSUER}/api/v1/links`, { headers: { authorization: `Bearer ${token}` } }))

describe('protected resource metadata (RFC 9728)', () => {
  test("the /mcp document names <issuer>/mcp, and passes oauth4webapi's RFC 9728 3.3 check", async () => {
    const url = new URL(MCP_RESOURCE)
    const doc = await oauth.processResourceDiscoveryResponse(url, await oauth.resourceDiscoveryRequest(url, flow.options))
    expect(doc).toMatchObject({ resource: MCP_RESOURCE, authorization_servers: [ISSUER], bearer_methods_supported: ['header'] })
  })

  test('the root document keeps the issuer', async () => {
    const url = new URL(ISSUER)
    const doc = await oauth.processResourceDiscoveryResponse(url, await oauth.resourceDiscoveryRequest(url, flow.options))
    expect(doc.resource).toBe(ISSUER)
  })
})

describe('resources compared after RFC 3986 normalisation', () => {
  test.each([
    ['a trailing slash (SDK <= 1.29)', `${ISSUER}/`],
    ['upper-case scheme and host', 'HTTPS://API.SHO.RT'],
    ['the default port', 'https://api.sho.rt:443/'],
  ])('the issuer written with %s is the issuer at authorize and at token', async (_, written) => {
    const token = await tokenFor(written)
    const rest = await atRest(token)
    expect(rest.status, shown(rest)).toBe(200)
  })

  test('<issuer>/mcp/ (trailing slash) is <issuer>/mcp', async () => {
    const token = await tokenFor(`${MCP_RESOURCE}/`)
    const mcp = await atMcp(token)
    expect(mcp.status, shown(mcp)).toBe(200)
  })

  test.each([
    ['another host', 'https://other.example'],
    ['another path', `${ISSUER}/api`],
    ['another scheme', 'http://api.sho.rt'],
    ['another port', 'https://api.sho.rt:8443'],
    ['a fragment', `${ISSUER}#x`],
    ['not a URL', 'api.sho.rt'],
  ])('%s is invalid_target at authorize', async (_, resource) => {
    const started = await authorizationUrl(flow, 'links:read', { resource })
    const answer = await openRaw(flow, started.url)
    expect(answer.status, shown(answer)).toBe(302)
    expect(new URL(answer.headers.get('location')!).searchParams.get('error'), shown(answer)).toBe('invalid_target')
  })
})

describe('audience: where a token is accepted', () => {
  test('a token for the issuer works on REST and at /mcp', async () => {
    const token = await tokenFor(ISSUER)
    const rest = await atRest(token)
    expect(rest.status, shown(rest)).toBe(200)
    const mcp = await atMcp(token)
    expect(mcp.status, shown(mcp)).toBe(200)
  })

  test('security: a token for <issuer>/mcp works at /mcp, and is refused on REST (401 invalid_token)', async () => {
    const token = await tokenFor(MCP_RESOURCE)
    const mcp = await atMcp(token)
    expect(mcp.status, shown(mcp)).toBe(200)
    expect(mcp.text, shown(mcp)).toContain('create_link')
    // A tool runs as its REST route on the caller's behalf: the /mcp token's audience was checked at the door.
    const tool = await atMcp(token, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_links', arguments: {} } }))
    expect(tool.status, shown(tool)).toBe(200)
    expect(tool.text, shown(tool)).toContain('"links"')
    expect(tool.text, shown(tool)).not.toContain('"isError":true')
    const rest = await atRest(token)
    expect(rest.status, shown(rest)).toBe(401)
    expect(rest.headers.get('www-authenticate'), shown(rest)).toContain('error="invalid_token"')
  })

  test('no resource at authorize: the issuer; a token request may narrow it to <issuer>/mcp', async () => {
    const narrowed = await tokenFor(null, MCP_RESOURCE)
    expect((await atMcp(narrowed)).status).toBe(200)
    expect((await atRest(narrowed)).status).toBe(401)
  })

  test('security: a code for <issuer>/mcp cannot be widened to the issuer at the token endpoint', async () => {
    const { started, redirect } = await approvedFor(MCP_RESOURCE)
    expect(await oauthFailure(exchangeWith(started, redirect, ISSUER))).toMatchObject({ status: 400, error: 'invalid_target' })
  })

  test('security: a refresh keeps the audience; asking for the issuer with an <issuer>/mcp refresh token is invalid_target', async () => {
    const { started, redirect } = await approvedFor(MCP_RESOURCE)
    const params = oauth.validateAuthResponse(flow.as, flow.client, redirect, started.state)
    const client = { ...flow.client }
    const first = await oauth.processAuthorizationCodeResponse(
      flow.as,
      client,
      await oauth.authorizationCodeGrantRequest(flow.as, client, oauth.None(), params, flow.redirectUri, started.verifier, { ...flow.options, additionalParameters: { resource: MCP_RESOURCE } }),
    )
    expect(first.refresh_token).toMatch(/^rt_/)
    const widened = oauth.refreshTokenGrantRequest(flow.as, client, oauth.None(), first.refresh_token!, { ...flow.options, additionalParameters: { resource: ISSUER } })
    expect(await oauthFailure(widened.then((r) => oauth.processRefreshTokenResponse(flow.as, client, r)))).toMatchObject({ error: 'invalid_target' })
    const again = await oauth.processRefreshTokenResponse(
      flow.as,
      client,
      await oauth.refreshTokenGrantRequest(flow.as, client, oauth.None(), first.refresh_token!, { ...flow.options, additionalParameters: { resource: `${MCP_RESOURCE}/` } }),
    )
    expect((await atMcp(again.access_token)).status).toBe(200)
    expect((await atRest(again.access_token)).status).toBe(401)
  })
})
