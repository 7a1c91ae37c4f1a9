// OAuth clients the way real ones talk to us: oauth4webapi over a fetch that the test routes to an app
// (in-process app.handle, or a real server). Shared by the OAuth flow tests and the two-process test.
import * as oauth from 'oauth4webapi'
import { VERDICT_TTL_MS } from '../../src/modules/agents/verdicts'
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
  const { started, redirect } = await approved(flow, apiKey, scope)
  return exchange(flow, started, redirect)
}

export async function refresh(flow: Flow, refreshToken: string): Promise<oauth.TokenEndpointResponse> {
  const response = await oauth.refreshTokenGrantRequest(flow.as, flow.client, oauth.None(), refreshToken, flow.options)
  return oauth.processRefreshTokenResponse(flow.as, flow.client, response)
}

export async function revoke(flow: Flow, token: string): Promise<void> {
  const response = await oauth.revocationRequest(flow.as, flow.client, oauth.None(), token, flow.options)
  await oauth.processRevocationResponse(response)
}

/** An answer read whole, for assertions that show it when they fail. */
export interface Answer {
  status: number
  headers: Headers
  text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
}

export async function read(response: Response): Promise<Answer> {
  const text = await response.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON: the test looks at `text`
  }
  return { status: response.status, headers: response.headers, text, body }
}

/** Status, the headers that matter here, and the body: the message of a failed expectation. */
export function shown(a: Answer): string {
  const headers = ['location', 'www-authenticate', 'cache-control', 'content-type'].map((h) => (a.headers.get(h) === null ? '' : ` ${h}: ${a.headers.get(h)}`)).join('')
  return `${a.status}${headers} ${a.text.slice(0, 600)}`
}

/**
 * A call to the resource server with an at_ token, as an OAuth client makes it (oauth4webapi's
 * protectedResourceRequest); a challenge (401/403 with WWW-Authenticate) is returned, not thrown.
 */
export async function withToken(flow: Flow, token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const headers = new Headers(body === undefined ? {} : { 'content-type': 'application/json' })
  try {
    return await read(await oauth.protectedResourceRequest(token, method, new URL(path, flow.as.issuer), headers, body === undefined ? null : JSON.stringify(body), flow.options))
  } catch (error) {
    if (error instanceof oauth.WWWAuthenticateChallengeError) return read(error.response)
    throw error
  }
}

/** A call as the human (API key, or no credential at all when `key` is null). */
export async function asHuman(flow: Flow, key: string | null, method: string, path: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = {}
  if (key !== null) headers.authorization = `Bearer ${key}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  return read(await flow.fetch(new URL(path, flow.as.issuer).href, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }))
}

/** GET of an authorization URL without following the redirect. */
export async function openRaw(flow: Flow, url: URL | string): Promise<Answer> {
  return read(await flow.fetch(String(url), { redirect: 'manual' }))
}

/** A form POST to an endpoint of the authorization server, the way no library would send it (unknown client, repeated parameters). */
export async function postForm(flow: Flow, path: string, params: [string, string][]): Promise<Answer> {
  return read(await flow.fetch(new URL(path, flow.as.issuer).href, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params).toString() }))
}

/** The RFC 6749 5.2 error a token-endpoint step ended with (oauth4webapi's ResponseBodyError); fails when it succeeded. */
export async function oauthFailure(step: Promise<unknown>): Promise<{ status: number; error: string; description: string }> {
  try {
    const result = await step
    throw new Error(`expected an OAuth error, got ${JSON.stringify(result).slice(0, 300)}`)
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) return { status: error.status, error: error.error, description: error.error_description ?? '' }
    throw error
  }
}

/** The error an authorization response carries (oauth4webapi's AuthorizationResponseError); fails when it is a success. */
export function authorizationFailure(flow: Flow, redirect: URL, state: string): { error: string; params: URLSearchParams } {
  try {
    oauth.validateAuthResponse(flow.as, flow.client, redirect, state)
  } catch (error) {
    if (error instanceof oauth.AuthorizationResponseError) return { error: error.error, params: error.cause }
    throw error
  }
  throw new Error(`expected an error response, got ${redirect.href}`)
}

/** Up to the human's approval: the authorization started and the redirect the human's browser would follow. */
export async function approved(flow: Flow, apiKey: string, scope: string, body: Record<string, unknown> = {}): Promise<{ started: Started; redirect: URL; requestId: string }> {
  const started = await authorizationUrl(flow, scope)
  const requestId = await openAuthorization(flow, started)
  return { started, requestId, redirect: await approveAsHuman(flow, apiKey, requestId, body) }
}

/** A fetch to a server process: the issuer's URLs go to `base` (the process), from one client IP of the test's. */
export function serverFetch(base: string, issuer = ISSUER, ip = uniqueIp()): Fetch {
  return (url, init) => {
    const target = url.startsWith(issuer) ? base + url.slice(issuer.length) : url
    return fetch(target, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), [TEST_IP_HEADER]: ip } })
  }
}

/**
 * How long a test waits for another process to refuse a revoked token. DESIGN promises 1 s (every process
 * drops its cached verdict on a pub/sub message; the tests print what they saw); the deadline is half the
 * verdict cache's lifetime instead, generous on a loaded machine and still only reachable by the message.
 */
export const REVOCATION_DEADLINE_MS = VERDICT_TTL_MS / 2

/**
 * Calls `path` with the token every `everyMs` until it is refused (401) or `withinMs` have passed;
 * the last answer and how long it took. For another process than the one that revoked: a revocation
 * reaches the other processes' verdict caches by pub/sub (the revoking one drops its own at once).
 */
export async function untilRefused(flow: Flow, token: string, options: { path?: string; withinMs?: number; everyMs?: number } = {}): Promise<{ answer: Answer; ms: number }> {
  const started = performance.now()
  for (;;) {
    const answer = await withToken(flow, token, 'GET', options.path ?? '/api/v1/links')
    const ms = performance.now() - started
    if (answer.status === 401 || ms > (options.withinMs ?? REVOCATION_DEADLINE_MS)) return { answer, ms }
    await Bun.sleep(options.everyMs ?? 50)
  }
}

/** Where ChatGPT's connectors come back to after authorization. */
export const CHATGPT_REDIRECT_URI = 'https://chatgpt.com/connector_platform_oauth_redirect'

/**
 * ChatGPT's client ID metadata document, in the shape it publishes (private_key_jwt, RS256, a jwks_uri):
 * https://chatgpt.com/oauth/client.json as quoted in https://github.com/django-oauth/django-oauth-toolkit/issues/1845.
 * Its URLs are the test's own, since the test serves it on loopback.
 */
export function chatgptClientDocument(clientId: string, jwksUri: string, redirectUri = CHATGPT_REDIRECT_URI): Record<string, unknown> {
  return {
    client_id: clientId,
    client_name: 'ChatGPT',
    client_uri: 'https://chatgpt.com/',
    redirect_uris: [redirectUri],
    token_endpoint_auth_method: 'private_key_jwt',
    token_endpoint_auth_methods_supported: ['none', 'private_key_jwt'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_signing_alg: 'RS256',
    jwks_uri: jwksUri,
  }
}
