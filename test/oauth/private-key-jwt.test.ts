// A client whose metadata document declares private_key_jwt (ChatGPT's does: RS256, jwks_uri) signs a
// client assertion (RFC 7523) at the token endpoint, here with oauth4webapi's PrivateKeyJwt and keys from
// jose. The document and its key set are served on loopback (CIMD_ALLOW_HTTP_LOOPBACK, tests only).
// Refused as invalid_client (401): no assertion, another key, another audience, an expired one, a replay.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { exportJWK, generateKeyPair, type JWK } from 'jose'
import * as oauth from 'oauth4webapi'
import { testApi, testConfig } from '../support/api'
import { newAccount, type TestAccount } from '../support/fixtures'
import { appFetch, approveAsHuman, chatgptClientDocument, authorizationUrl, ISSUER, oauthFailure, openAuthorization, postForm, read, shown, type Flow, type Started } from '../support/oauth'

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
const redirectUri = 'http://127.0.0.1:47002/connector_platform_oauth_redirect'

let server: ReturnType<typeof Bun.serve>
let api: Awaited<ReturnType<typeof testApi>>
let human: TestAccount
let signing: { key: CryptoKey; kid: string }
let stranger: { key: CryptoKey; kid: string }
let inlineKey: { key: CryptoKey; kid: string }
let byUri: string
let inline: string
let keySetFetches = 0

async function keyPair(alg: string, kid: string): Promise<{ key: CryptoKey; kid: string; publicJwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return { key: privateKey as CryptoKey, kid, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } }
}

beforeAll(async () => {
  const rsa = await keyPair('RS256', 'chatgpt-1')
  const ec = await keyPair('ES256', 'inline-1')
  signing = rsa
  inlineKey = ec
  stranger = await keyPair('RS256', 'chatgpt-1') // same kid, another key: a forger's
  const documents = new Map<string, Record<string, unknown>>()
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname
      if (path === '/oauth/jwks.json') {
        keySetFetches++
        return Response.json({ keys: [rsa.publicJwk] })
      }
      const doc = documents.get(path)
      return doc ? Response.json(doc) : new Response('not found', { status: 404 })
    },
  })
  const base = `http://127.0.0.1:${server.port}`
  byUri = `${base}/oauth/chatgpt/client.json`
  inline = `${base}/oauth/inline/client.json`
  // ChatGPT's document, as published (client_id and URLs moved to this test's server).
  documents.set('/oauth/chatgpt/client.json', chatgptClientDocument(byUri, `${base}/oauth/jwks.json`, redirectUri))
  documents.set('/oauth/inline/client.json', {
    client_id: inline,
    client_name: 'Inline keys',
    redirect_uris: [redirectUri],
    token_endpoint_auth_method: 'private_key_jwt',
    jwks: { keys: [ec.publicJwk] },
  })
  api = await testApi({ config: testConfig({ CIMD_ALLOW_HTTP_LOOPBACK: 'true' }) })
  human = await newAccount(api.deps.db)
})
afterAll(() => server.stop(true))

async function flowFor(clientId: string): Promise<Flow> {
  const fetch = appFetch(api.app)
  const options = { [oauth.customFetch]: fetch }
  const as = await oauth.processDiscoveryResponse(new URL(ISSUER), await oauth.discoveryRequest(new URL(ISSUER), { ...options, algorithm: 'oauth2' }))
  return { as, client: { client_id: clientId, token_endpoint_auth_method: 'private_key_jwt' }, redirectUri, fetch, options }
}

async function approvedCode(flow: Flow): Promise<{ started: Started; params: URLSearchParams }> {
  const started = await authorizationUrl(flow, 'links:read')
  const redirect = await approveAsHuman(flow, human.key, await openAuthorization(flow, started))
  return { started, params: oauth.validateAuthResponse(flow.as, flow.client, redirect, started.state) }
}

type Modify = (header: Record<string, unknown>, payload: Record<string, unknown>) => void

function exchange(flow: Flow, code: { started: Started; params: URLSearchParams }, auth: oauth.ClientAuth) {
  return oauth
    .authorizationCodeGrantRequest(flow.as, flow.client, auth, code.params, flow.redirectUri, code.started.verifier, flow.options)
    .then((response) => oauth.processAuthorizationCodeResponse(flow.as, flow.client, response))
}

const signedWith = (key: { key: CryptoKey; kid: string }, modify?: Modify) => oauth.PrivateKeyJwt(key, modify ? { [oauth.modifyAssertion]: modify as oauth.ModifyAssertionFunction } : {})

describe('CIMD clients with private_key_jwt', () => {
  test('the metadata says private_key_jwt is supported, with asymmetric algorithms only', async () => {
    const flow = await flowFor(byUri)
    expect(flow.as.token_endpoint_auth_methods_supported).toEqual(['none', 'private_key_jwt'])
    expect(flow.as.token_endpoint_auth_signing_alg_values_supported).toContain('RS256')
    expect(flow.as.token_endpoint_auth_signing_alg_values_supported).not.toContain('HS256')
    expect(flow.as.token_endpoint_auth_signing_alg_values_supported).not.toContain('none')
  })

  test("ChatGPT's document (jwks_uri): the whole code flow, then a refresh and a revocation, each signed", async () => {
    const flow = await flowFor(byUri)
    const tokens = await exchange(flow, await approvedCode(flow), signedWith(signing))
    expect(tokens.access_token).toMatch(/^at_/)
    expect(tokens.refresh_token).toMatch(/^rt_/)
    const links = await read(await flow.fetch(`${ISSUER}/api/v1/links`, { headers: { authorization: `Bearer ${tokens.access_token}` } }))
    expect(links.status, shown(links)).toBe(200)
    const refreshed = await oauth.processRefreshTokenResponse(
      flow.as,
      flow.client,
      await oauth.refreshTokenGrantRequest(flow.as, flow.client, signedWith(signing), tokens.refresh_token!, flow.options),
    )
    expect(refreshed.access_token).toMatch(/^at_/)
    // A refresh without the assertion is refused: the refresh token alone does not authenticate this client.
    expect(
      await oauthFailure(
        oauth.refreshTokenGrantRequest(flow.as, flow.client, oauth.None(), refreshed.refresh_token!, flow.options).then((r) => oauth.processRefreshTokenResponse(flow.as, flow.client, r)),
      ),
    ).toMatchObject({ status: 401, error: 'invalid_client' })
    await oauth.processRevocationResponse(await oauth.revocationRequest(flow.as, flow.client, signedWith(signing), refreshed.access_token, flow.options))
    const revoked = await read(await flow.fetch(`${ISSUER}/api/v1/links`, { headers: { authorization: `Bearer ${refreshed.access_token}` } }))
    expect(revoked.status, shown(revoked)).toBe(401)
  })

  test('an inline jwks (ES256) works the same way', async () => {
    const flow = await flowFor(inline)
    const tokens = await exchange(flow, await approvedCode(flow), signedWith(inlineKey))
    expect(tokens.access_token).toMatch(/^at_/)
  })

  test('the key set is fetched once and cached, like the document', async () => {
    const flow = await flowFor(byUri)
    await exchange(flow, await approvedCode(flow), signedWith(signing))
    const before = keySetFetches
    await exchange(flow, await approvedCode(flow), signedWith(signing))
    expect(keySetFetches).toBe(before)
  })

  test('security: no assertion, another key, another audience, an expired or far-off one, a wrong issuer: 401 invalid_client, and the code survives them', async () => {
    const flow = await flowFor(byUri)
    const code = await approvedCode(flow)
    const now = () => Math.floor(Date.now() / 1000)
    const refusals: [string, oauth.ClientAuth][] = [
      ['no assertion (public-client style)', oauth.None()],
      ['another key under the same kid', signedWith(stranger)],
      ['another audience', signedWith(signing, (_, p) => void (p.aud = 'https://other.example'))],
      ['expired', signedWith(signing, (_, p) => void Object.assign(p, { iat: now() - 600, nbf: now() - 600, exp: now() - 300 }))],
      ['no exp', signedWith(signing, (_, p) => void delete p.exp)],
      ['exp a day away', signedWith(signing, (_, p) => void (p.exp = now() + 86_400))],
      ['no jti', signedWith(signing, (_, p) => void delete p.jti)],
      ['another issuer and subject', signedWith(signing, (_, p) => void Object.assign(p, { iss: inline, sub: inline }))],
    ]
    for (const [name, auth] of refusals) {
      expect(await oauthFailure(exchange(flow, code, auth)), name).toMatchObject({ status: 401, error: 'invalid_client' })
    }
    // The token endpoint's URL is an audience as good as the issuer (RFC 7523 3).
    const tokens = await exchange(
      flow,
      code,
      signedWith(signing, (_, p) => void (p.aud = `${ISSUER}/oauth/token`)),
    )
    expect(tokens.access_token).toMatch(/^at_/)
  })

  test('security: an assertion is used once; the same one with another code is invalid_client (replay)', async () => {
    const flow = await flowFor(byUri)
    let assertion = ''
    const recording: Flow = {
      ...flow,
      options: {
        [oauth.customFetch]: async (url: string, init?: RequestInit) => {
          assertion ||= new URLSearchParams(String(init?.body)).get('client_assertion') ?? ''
          return flow.fetch(url, init)
        },
      },
    }
    await exchange(recording, await approvedCode(flow), signedWith(signing))
    expect(assertion).not.toBe('')
    const second = await approvedCode(flow)
    const replayed = await postForm(flow, '/oauth/token', [
      ['grant_type', 'authorization_code'],
      ['client_id', byUri],
      ['code', second.params.get('code')!],
      ['code_verifier', second.started.verifier],
      ['redirect_uri', redirectUri],
      ['client_assertion_type', ASSERTION_TYPE],
      ['client_assertion', assertion],
    ])
    expect(replayed.status, shown(replayed)).toBe(401)
    expect(replayed.body.error, shown(replayed)).toBe('invalid_client')
    expect(replayed.body.error_description, shown(replayed)).toContain('already used')
  })

  test('security: an assertion of another client_assertion_type, or a malformed one, is invalid_client', async () => {
    const flow = await flowFor(byUri)
    const code = await approvedCode(flow)
    for (const [type, assertion] of [
      ['urn:ietf:params:oauth:client-assertion-type:saml2-bearer', 'x'],
      [ASSERTION_TYPE, 'not.a.jwt'],
      [ASSERTION_TYPE, `${btoa(JSON.stringify({ alg: 'none' }))}.${btoa(JSON.stringify({ iss: byUri, sub: byUri, aud: ISSUER, exp: 9e9, jti: 'x' }))}.`],
    ] as const) {
      const res = await postForm(flow, '/oauth/token', [
        ['grant_type', 'authorization_code'],
        ['client_id', byUri],
        ['code', code.params.get('code')!],
        ['code_verifier', code.started.verifier],
        ['client_assertion_type', type],
        ['client_assertion', assertion],
      ])
      expect(res.status, `${type} ${assertion}: ${shown(res)}`).toBe(401)
      expect(res.body.error, shown(res)).toBe('invalid_client')
    }
  })
})
