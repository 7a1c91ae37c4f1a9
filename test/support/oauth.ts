// OAuth clients the way real ones talk to us: oauth4webapi over a fetch that the test routes to an app
// (in-process app.handle, or a real server). Shared by the OAuth flow tests and the two-process test.
import * as oauth from 'oauth4webapi'
import { TEST_IP_HEADER, uniqueIp, type TestApp } from './api'

export const ISSUER = 'https://api.sho.rt'

export type Fetch = (url: string, init?: RequestInit) => Promise<Response>

/** A fetch that answers from the app in-process, as one client IP. */
export function appFetch(app: TestApp, ip = uniqueIp()): Fetch {
  return (url, init) => app.handle(new Request(url, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), [TEST_IP_HEADER]: ip } }))
}

export interface Flow {
  as: oauth.AuthorizationServer
  client: oauth.Client
  redirectUri: string
  fetch: Fetch
  options: { [oauth.customFetch]: Fetch; [oauth.allowInsecureRequests]?: boolean }
}

/** Discovery (RFC 8414 through oauth4webapi) and dynamic registration of a public loopback client. */
export async function discoverAndRegister(fetch: Fetch, issuer = ISSUER, metadata: Partial<oauth.Client> = {}): Promise<Flow> {
  const options = { [oauth.customFetch]: fetch, ...(issuer.startsWith('http:') && { [oauth.allowInsecureRequests]: true }) }
  const issuerUrl = new URL(issuer)
  const as = await oauth.processDiscoveryResponse(issuerUrl, await oauth.discoveryRequest(issuerUrl, { ...options, algorithm: 'oauth2' }))
  const redirectUri = `http://127.0.0.1:${40000 + Math.floor(Math.random() * 20000)}/callback`
  const registered = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      { client_name: 'Test MCP host', redirect_uris: [redirectUri], grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none', ...metadata },
      options,
    ),
  )
  return { as, client: registered as oauth.Client, redirectUri, fetch, options }
}

export interface Started {
  verifier: string
  state: string
  /** The authorization URL the human's browser would open. */
  url: URL
}

export async function authorizationUrl(flow: Flow, scope: string, extra: Record<string, string> = {}): Promise<Started> {
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const url = new URL(flow.as.authorization_endpoint!)
  url.searchParams.set('response_type', 'code')
  url.searchParams.set('client_id', flow.client.client_id)
  url.searchParams.set('redirect_uri', flow.redirectUri)
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier))
  url.searchParams.set('code_challenge_method', 'S256')
  url.searchParams.set('scope', scope)
  url.searchParams.set('state', state)
  url.searchParams.set('resource', flow.as.issuer)
  for (const [k, v] of Object.entries(extra)) url.searchParams.set(k, v)
  return { verifier, state, url }
}

/** GET the authorization URL; the request id of the consent page it redirects to. */
export async function openAuthorization(flow: Flow, started: Started): Promise<string> {
  const response = await flow.fetch(started.url.href, { redirect: 'manual' })
  const location = response.headers.get('location') ?? ''
  const id = /^\/consent\?request_id=(oreq_[A-Za-z0-9_-]{22})$/.exec(location)?.[1]
  if (response.status !== 302 || !id) throw new Error(`authorize answered ${response.status} ${location} ${await response.text()}`)
  return id
}

/** The human approves through the API with their API key; returns the redirect the browser would follow. */
export async function approveAsHuman(flow: Flow, apiKey: string, requestId: string, body: Record<string, unknown> = {}): Promise<URL> {
  const response = await flow.fetch(`${flow.as.issuer}/api/v1/oauth/approve`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ request_id: requestId, ...body }),
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`approve answered ${response.status} ${text}`)
  return new URL(JSON.parse(text).data.redirect_to)
}

/** validateAuthResponse (with iss) and the code exchange. */
export async function exchange(flow: Flow, started: Started, redirect: URL): Promise<oauth.TokenEndpointResponse> {
  const params = oauth.validateAuthResponse(flow.as, flow.client, redirect, started.state)
  const response = await oauth.authorizationCodeGrantRequest(flow.as, flow.client, oauth.None(), params, flow.redirectUri, started.verifier, {
    ...flow.options,
    additionalParameters: { resource: flow.as.issuer },
  })
  return oauth.processAuthorizationCodeResponse(flow.as, flow.client, response)
}

/** The whole flow for a scope: tokens for the account of `apiKey`. */
export async function connect(flow: Flow, apiKey: string, scope: string): Promise<oauth.TokenEndpointResponse> {
  const started = await authorizationUrl(flow, scope)
  const requestId = await openAuthorization(flow, started)
  return exchange(flow, started, await approveAsHuman(flow, apiKey, requestId))
}

export async function refresh(flow: Flow, refreshToken: string): Promise<oauth.TokenEndpointResponse> {
  const response = await oauth.refreshTokenGrantRequest(flow.as, flow.client, oauth.None(), refreshToken, flow.options)
  return oauth.processRefreshTokenResponse(flow.as, flow.client, response)
}

export async function revoke(flow: Flow, token: string): Promise<void> {
  const response = await oauth.revocationRequest(flow.as, flow.client, oauth.None(), token, flow.options)
  await oauth.processRevocationResponse(response)
}
