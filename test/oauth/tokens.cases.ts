// Negative cases of POST /oauth/token and of the resource server (at_ tokens on the REST API), as a
// function of where the API runs (see context.ts). Each case is its own test, with a newly
// registered client and a new human.
import { expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import * as oauth from 'oauth4webapi'
import { oauthCodes, oauthTokens } from '../../src/db/schema'
import { approved, asHuman, connect, exchange, ISSUER, oauthFailure, postForm, read, refresh, revoke, shown, withToken, type Flow, type Started } from '../support/oauth'
import { clientAndHuman, expectInvalidToken, OTHER_ISSUER, RESOURCE_METADATA, sha256, type OAuthCaseContext } from './context'

/** The code exchange with what oauth4webapi validated, some of it changed. */
function codeGrant(flow: Flow, started: Started, redirect: URL, change: { verifier?: string; redirectUri?: string; resource?: string; client?: oauth.Client } = {}) {
  const client = change.client ?? flow.client
  const params = oauth.validateAuthResponse(flow.as, flow.client, redirect, started.state)
  return oauth
    .authorizationCodeGrantRequest(flow.as, client, oauth.None(), params, change.redirectUri ?? flow.redirectUri, change.verifier ?? started.verifier, {
      ...flow.options,
      additionalParameters: { resource: change.resource ?? ISSUER },
    })
    .then((response) => oauth.processAuthorizationCodeResponse(flow.as, client, response))
}

export function tokenCases(context: () => OAuthCaseContext) {
  test('a wrong code_verifier: invalid_grant', async () => {
    const { flow, human } = await clientAndHuman(context())
    const { started, redirect } = await approved(flow, human.key, 'links:read')
    expect(await oauthFailure(codeGrant(flow, started, redirect, { verifier: oauth.generateRandomCodeVerifier() }))).toMatchObject({ status: 400, error: 'invalid_grant' })
  })

  test('a redirect_uri other than the authorization request’s at the token endpoint: invalid_grant', async () => {
    const { flow, human } = await clientAndHuman(context())
    const { started, redirect } = await approved(flow, human.key, 'links:read')
    expect(await oauthFailure(codeGrant(flow, started, redirect, { redirectUri: 'http://127.0.0.1:1/elsewhere' }))).toMatchObject({ status: 400, error: 'invalid_grant' })
  })

  test('a code exchanged for another resource (RFC 8707): invalid_target', async () => {
    const { flow, human } = await clientAndHuman(context())
    const { started, redirect } = await approved(flow, human.key, 'links:read')
    expect(await oauthFailure(codeGrant(flow, started, redirect, { resource: 'https://other.example' }))).toMatchObject({ status: 400, error: 'invalid_target' })
  })

  test('a code replayed: invalid_grant, and the tokens of its first exchange are refused', async () => {
    const { flow, human } = await clientAndHuman(context())
    const { started, redirect } = await approved(flow, human.key, 'links:read')
    const first = await codeGrant(flow, started, redirect)
    const before = await withToken(flow, first.access_token, 'GET', '/api/v1/links')
    expect(before.status, shown(before)).toBe(200)
    expect(await oauthFailure(codeGrant(flow, started, redirect))).toMatchObject({ status: 400, error: 'invalid_grant' })
    expectInvalidToken(await withToken(flow, first.access_token, 'GET', '/api/v1/links'))
    expect(await oauthFailure(refresh(flow, first.refresh_token!))).toMatchObject({ status: 400, error: 'invalid_grant' })
  })

  test('an unknown client at the token endpoint: 401 invalid_client', async () => {
    const { flow, human } = await clientAndHuman(context())
    const { started, redirect } = await approved(flow, human.key, 'links:read')
    const stranger: oauth.Client = { client_id: 'cli_AAAAAAAAAAAAAAAAAAAAAA', token_endpoint_auth_method: 'none' }
    expect(await oauthFailure(codeGrant(flow, started, redirect, { client: stranger }))).toMatchObject({ status: 401, error: 'invalid_client' })
    // The code is still its own client's.
    const tokens = await codeGrant(flow, started, redirect)
    expect(tokens.access_token).toStartWith('at_')
  })

  test('a code presented by another registered client: invalid_grant', async () => {
    const ctx = context()
    const { flow, human } = await clientAndHuman(ctx)
    const { flow: other } = await clientAndHuman(ctx)
    const { started, redirect } = await approved(flow, human.key, 'links:read')
    expect(await oauthFailure(codeGrant(flow, started, redirect, { client: other.client }))).toMatchObject({ status: 400, error: 'invalid_grant' })
  })

  test('a malformed token request: RFC 6749 errors (repeated parameter, unknown grant type, missing client_id)', async () => {
    const { flow } = await clientAndHuman(context())
    const cases: [[string, string][], string][] = [
      [
        [
          ['grant_type', 'refresh_token'],
          ['client_id', flow.client.client_id],
          ['refresh_token', 'rt_a'],
          ['refresh_token', 'rt_b'],
        ],
        'invalid_request',
      ],
      [
        [
          ['grant_type', 'password'],
          ['client_id', flow.client.client_id],
        ],
        'unsupported_grant_type',
      ],
      [
        [
          ['grant_type', 'authorization_code'],
          ['code', 'x'],
          ['code_verifier', 'y'],
        ],
        'invalid_request',
      ],
    ]
    for (const [form, error] of cases) {
      const res = await postForm(flow, '/oauth/token', form)
      expect(res.status, shown(res)).toBe(400)
      expect(res.body?.error, shown(res)).toBe(error)
      expect(res.headers.get('cache-control'), shown(res)).toBe('no-store')
    }
  })

  test('a refresh token reused: invalid_grant, and the whole family is revoked (the newest at_ and rt_)', async () => {
    const { flow, human } = await clientAndHuman(context())
    const first = await connect(flow, human.key, 'links:read')
    const second = await refresh(flow, first.refresh_token!)
    const third = await refresh(flow, second.refresh_token!)
    const ok = await withToken(flow, third.access_token, 'GET', '/api/v1/links')
    expect(ok.status, shown(ok)).toBe(200)
    expect(await oauthFailure(refresh(flow, first.refresh_token!))).toMatchObject({ status: 400, error: 'invalid_grant' })
    for (const at of [first.access_token, second.access_token, third.access_token]) expectInvalidToken(await withToken(flow, at, 'GET', '/api/v1/links'))
    expect(await oauthFailure(refresh(flow, third.refresh_token!))).toMatchObject({ status: 400, error: 'invalid_grant' })
  })

  test('a refresh asking for a scope it was not granted: invalid_scope', async () => {
    const { flow, human } = await clientAndHuman(context())
    const tokens = await connect(flow, human.key, 'links:read')
    const response = await oauth.refreshTokenGrantRequest(flow.as, flow.client, oauth.None(), tokens.refresh_token!, { ...flow.options, additionalParameters: { scope: 'links:read links:delete' } })
    expect(await oauthFailure(oauth.processRefreshTokenResponse(flow.as, flow.client, response))).toMatchObject({ status: 400, error: 'invalid_scope' })
  })

  test('a refresh asking for fewer scopes narrows the access token only: the new refresh token keeps the grant (RFC 6749 6)', async () => {
    const { flow, human } = await clientAndHuman(context())
    const tokens = await connect(flow, human.key, 'links:read links:write')
    const response = await oauth.refreshTokenGrantRequest(flow.as, flow.client, oauth.None(), tokens.refresh_token!, { ...flow.options, additionalParameters: { scope: 'links:read' } })
    const narrowed = await oauth.processRefreshTokenResponse(flow.as, flow.client, response)
    expect(narrowed.scope).toBe('links:read')
    const write = await withToken(flow, narrowed.access_token, 'POST', '/api/v1/shorten', { url: 'https://example.com/narrowed' })
    expect(write.status, shown(write)).toBe(403)
    // "If a new refresh token is issued, the refresh token scope MUST be identical to that of the
    // refresh token included by the client in the request."
    const full = await refresh(flow, narrowed.refresh_token!)
    expect(full.scope).toBe('links:read links:write')
  })

  test('a token is refused by a server of another issuer (its audience is this one)', async () => {
    const ctx = context()
    const { flow, human } = await clientAndHuman(ctx)
    const tokens = await connect(flow, human.key, 'links:read')
    const here = await withToken(flow, tokens.access_token, 'GET', '/api/v1/links')
    expect(here.status, shown(here)).toBe(200)
    const there = await read(await ctx.otherResource()(`${OTHER_ISSUER}/api/v1/links`, { headers: { authorization: `Bearer ${tokens.access_token}` } }))
    expectInvalidToken(there, `Bearer resource_metadata="${OTHER_ISSUER}/.well-known/oauth-protected-resource", error="invalid_token"`)
  })

  test('a missing scope: 403 INSUFFICIENT_SCOPE with the insufficient_scope challenge', async () => {
    const { flow, human } = await clientAndHuman(context())
    const tokens = await connect(flow, human.key, 'links:read')
    const res = await withToken(flow, tokens.access_token, 'GET', '/api/v1/tags')
    expect(res.status, shown(res)).toBe(403)
    expect(res.body?.error, shown(res)).toBe('INSUFFICIENT_SCOPE')
    expect(res.headers.get('www-authenticate'), shown(res)).toBe(`Bearer error="insufficient_scope", scope="tags:read", resource_metadata="${RESOURCE_METADATA}"`)
    const write = await withToken(flow, tokens.access_token, 'POST', '/api/v1/shorten', { url: 'https://example.com/not-created' })
    expect(write.status, shown(write)).toBe(403)
    expect(write.body?.error, shown(write)).toBe('INSUFFICIENT_SCOPE')
  })

  test('an at_ token on Agent management (human-only): 403 HUMAN_ONLY, it cannot mint itself tokens nor see its Agent', async () => {
    const { flow, human } = await clientAndHuman(context())
    const tokens = await connect(flow, human.key, 'links:read')
    const list = await asHuman(flow, human.key, 'GET', '/api/v1/agents')
    const agent = list.body?.data?.agents?.find((a: { client_id: string | null }) => a.client_id === flow.client.client_id)
    expect(agent?.id, shown(list)).toStartWith('agt_')
    for (const [method, path, body] of [
      ['GET', '/api/v1/agents', undefined],
      ['POST', `/api/v1/agents/${agent.id}/tokens`, { scopes: ['links:read'] }],
      ['PATCH', `/api/v1/agents/${agent.id}`, { scopes: ['links:read', 'links:delete'] }],
    ] as const) {
      const res = await withToken(flow, tokens.access_token, method, path, body)
      expect(res.status, `${method} ${path}: ${shown(res)}`).toBe(403)
      expect(res.body?.error, `${method} ${path}: ${shown(res)}`).toBe('HUMAN_ONLY')
    }
  })

  test('a revoked access token: 401 invalid_token', async () => {
    const { flow, human } = await clientAndHuman(context())
    const tokens = await connect(flow, human.key, 'links:read')
    const ok = await withToken(flow, tokens.access_token, 'GET', '/api/v1/links')
    expect(ok.status, shown(ok)).toBe(200)
    await revoke(flow, tokens.access_token)
    expectInvalidToken(await withToken(flow, tokens.access_token, 'GET', '/api/v1/links'))
  })

  test('revoking a token of another client: 401 invalid_client, and the token still works', async () => {
    const ctx = context()
    const { flow, human } = await clientAndHuman(ctx)
    const { flow: other } = await clientAndHuman(ctx)
    const tokens = await connect(flow, human.key, 'links:read')
    const res = await postForm(other, '/oauth/revoke', [
      ['token', tokens.access_token],
      ['client_id', other.client.client_id],
    ])
    expect(res.status, shown(res)).toBe(401)
    expect(res.body?.error, shown(res)).toBe('invalid_client')
    const ok = await withToken(flow, tokens.access_token, 'GET', '/api/v1/links')
    expect(ok.status, shown(ok)).toBe(200)
  })

  test('an access token past its expiry (aged in the database): 401 invalid_token', async () => {
    const ctx = context()
    const { flow, human } = await clientAndHuman(ctx)
    const tokens = await connect(flow, human.key, 'links:read')
    // Not used before it is aged: a server may hold its verdict (with the old expiry) for seconds.
    await ctx.db
      .update(oauthTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(oauthTokens.tokenHash, sha256(tokens.access_token)))
    expectInvalidToken(await withToken(flow, tokens.access_token, 'GET', '/api/v1/links'))
  })

  test('a code past its 60 s (aged in the database): invalid_grant', async () => {
    const ctx = context()
    const { flow, human } = await clientAndHuman(ctx)
    const { started, redirect } = await approved(flow, human.key, 'links:read')
    await ctx.db
      .update(oauthCodes)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(oauthCodes.codeHash, sha256(redirect.searchParams.get('code')!)))
    expect(await oauthFailure(exchange(flow, started, redirect))).toMatchObject({ status: 400, error: 'invalid_grant' })
  })
}
