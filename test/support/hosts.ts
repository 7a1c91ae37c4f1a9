// Real MCP hosts replayed over HTTP (test/hosts): each host's discovery, registration (or client ID
// metadata document), authorization and token requests as its published source sends them, then the
// MCP calls every host makes (initialize, tools/list, a tool call). A host is a HostSpec; replay()
// drives it against the McpStack and fails at the first step the server answers otherwise than that
// host needs. The human's consent goes through the API with their key, as in test/support/mcp.ts.
import { expect } from 'bun:test'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose'
import { TEST_IP_HEADER, uniqueIp } from './api'
import type { TestAccount } from './fixtures'
import type { McpStack } from './mcp'

/** What a host sends at the token endpoint to say who it is. */
export type TokenAuth = 'none' | 'private_key_jwt'

export interface HostSpec {
  /**
   * Where it reads the protected resource metadata: the URL the 401's WWW-Authenticate names (SDK
   * clients, VS Code), or the root document first (RFC 9728's default location, hosts that ignore the header).
   */
  discovery: 'challenge' | 'root'
  /** RFC 9728 3.3 as VS Code checks it: the document's `resource` must be the URL the host connects to. */
  strictResource?: boolean
  /** The RFC 7591 registration body (`origin`: the server's). Absent: the host identifies by a metadata document. */
  registration?: (origin: string) => Record<string, unknown>
  /** Its client ID metadata document (served on loopback: its client_id is the URL it is served at). */
  metadataDocument?: (clientId: string, jwksUri: string) => Record<string, unknown>
  /** The redirect URI it names at authorize and token. */
  redirectUri: string
  /** The RFC 8707 resource it sends (`fromMetadata`: the document's `resource`); undefined: none. */
  resource: (fromMetadata: string, origin: string) => string | undefined
  /** The scope it asks for (`challenged`: the 401's scope). */
  scope: (challenged: string) => string
  tokenAuth?: TokenAuth
  /** A browser page's Origin (the MCP Inspector): every answer must carry CORS, preflights included. */
  browserOrigin?: string
  /** The protocol version of its initialize. */
  protocolVersion: string
}

/** Serves client ID metadata documents and their JWKS on loopback, as a host's own web server would. */
export interface DocumentHost {
  base: string
  serve(path: string, body: unknown): string
  stop(): Promise<void>
}

export function startDocumentHost(): DocumentHost {
  const documents = new Map<string, unknown>()
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (request) => (documents.has(new URL(request.url).pathname) ? Response.json(documents.get(new URL(request.url).pathname)) : new Response('not found', { status: 404 })),
  })
  const base = `http://127.0.0.1:${server.port}`
  return {
    base,
    serve(path, body) {
      documents.set(path, body)
      return `${base}${path}`
    },
    stop: () => server.stop(true),
  }
}

interface Step {
  method: string
  path: string
  status: number
}

export interface Replayed {
  steps: Step[]
  clientId: string
  registered: Record<string, unknown> | undefined
  accessToken: string
  /** The JSON-RPC results of tools/list and of the tool call. */
  tools: string[]
  toolResult: Record<string, any>
  alias: string
}

/** One host, from the unauthenticated call to a tool call that worked. */
export async function replay(stack: McpStack, human: TestAccount, host: HostSpec, documents?: DocumentHost): Promise<Replayed> {
  const ip = uniqueIp()
  const steps: Step[] = []
  const send = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers)
    headers.set(TEST_IP_HEADER, ip)
    if (host.browserOrigin) {
      headers.set('origin', host.browserOrigin)
      await preflight(url, init, headers)
    }
    const response = await fetch(url, { ...init, headers, redirect: 'manual' })
    steps.push({ method: init.method ?? 'GET', path: new URL(url).pathname, status: response.status })
    if (host.browserOrigin) expect(response.headers.get('access-control-allow-origin'), `CORS on ${init.method ?? 'GET'} ${url} (${response.status})`).toMatch(/^(\*|http)/)
    return response
  }
  /** What a browser does before a request that is not "simple": the preflight must let it through. */
  const preflight = async (url: string, init: RequestInit, headers: Headers) => {
    const custom = [...headers.keys()].filter(
      (name) => !['accept', 'origin', TEST_IP_HEADER, 'content-type'].includes(name) || (name === 'content-type' && !/^application\/x-www-form-urlencoded/.test(headers.get(name) ?? '')),
    )
    if ((init.method ?? 'GET') === 'GET' && custom.length === 0) return
    const answer = await fetch(url, {
      method: 'OPTIONS',
      headers: { origin: host.browserOrigin!, 'access-control-request-method': init.method ?? 'GET', 'access-control-request-headers': custom.join(','), [TEST_IP_HEADER]: ip },
    })
    expect(answer.status, `preflight of ${init.method} ${url}: ${await answer.text()}`).toBeOneOf([200, 204])
    const allowed = (answer.headers.get('access-control-allow-headers') ?? '').toLowerCase()
    for (const name of custom) expect(allowed === '*' || allowed.split(/,\s*/).includes(name), `preflight of ${url} allows ${name}: ${allowed}`).toBe(true)
  }

  // 1. The unauthenticated call and its challenge.
  const first = await send(stack.mcpUrl.href, { method: 'POST', headers: mcpHeaders(), body: JSON.stringify(initialize(host)) })
  expect(first.status).toBe(401)
  const challenge = first.headers.get('www-authenticate') ?? ''
  const named = /resource_metadata="([^"]+)"/.exec(challenge)?.[1]
  expect(named, challenge).toBeDefined()
  const challengedScope = /scope="([^"]+)"/.exec(challenge)?.[1] ?? ''

  // 2. Discovery: the protected resource, then the authorization server (RFC 8414).
  const metadataUrl = host.discovery === 'challenge' ? named! : `${stack.origin}/.well-known/oauth-protected-resource`
  const prm = await send(metadataUrl, { headers: { accept: 'application/json', 'mcp-protocol-version': host.protocolVersion } })
  expect(prm.status).toBe(200)
  const resourceMetadata = (await prm.json()) as { resource: string; authorization_servers: string[] }
  if (host.strictResource) expect(resourceMetadata.resource, `RFC 9728 3.3: ${metadataUrl} must name the resource it describes`).toBe(stack.mcpUrl.href)
  const asUrl = `${resourceMetadata.authorization_servers[0]}/.well-known/oauth-authorization-server`
  const asAnswer = await send(asUrl, { headers: { accept: 'application/json' } })
  expect(asAnswer.status).toBe(200)
  const as = (await asAnswer.json()) as Record<string, any>

  // 3. Who the client is: dynamic registration, or its metadata document's URL.
  let clientId: string
  let registered: Record<string, unknown> | undefined
  let signingKey: CryptoKey | undefined
  if (host.registration) {
    const answer = await send(as.registration_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(host.registration(stack.origin)),
    })
    const text = await answer.text()
    expect(answer.status, `registration: ${text}`).toBe(201)
    registered = JSON.parse(text)
    clientId = String(registered!.client_id)
  } else {
    expect(as.client_id_metadata_document_supported).toBe(true)
    const keys = await generateKeyPair('RS256')
    signingKey = keys.privateKey
    const jwks = documents!.serve(`/oauth/${crypto.randomUUID()}/jwks.json`, { keys: [{ ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] })
    const path = `/oauth/${crypto.randomUUID()}/client.json`
    clientId = documents!.serve(path, host.metadataDocument!(`${documents!.base}${path}`, jwks))
  }

  // 4. Authorize (PKCE S256), the human's consent, the redirect back with the code.
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)))
  const challengeS256 = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))))
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)))
  const resource = host.resource(resourceMetadata.resource, stack.origin)
  const authorize = new URL(as.authorization_endpoint)
  const params: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: host.redirectUri,
    code_challenge: challengeS256,
    code_challenge_method: 'S256',
    state,
    scope: host.scope(challengedScope),
    resource,
  }
  for (const [name, value] of Object.entries(params)) if (value !== undefined) authorize.searchParams.set(name, value)
  // The browser opens it: a top-level navigation, no CORS.
  const opened = await fetch(authorize, { redirect: 'manual', headers: { [TEST_IP_HEADER]: ip } })
  steps.push({ method: 'GET', path: authorize.pathname, status: opened.status })
  const location = opened.headers.get('location') ?? ''
  const requestId = /request_id=(oreq_[A-Za-z0-9_-]+)/.exec(location)?.[1]
  expect([opened.status, requestId !== undefined], `authorize: ${location} ${await opened.text()}`).toEqual([302, true])
  const decided = await fetch(`${stack.origin}/api/v1/oauth/approve`, {
    method: 'POST',
    headers: { authorization: `Bearer ${human.key}`, 'content-type': 'application/json', [TEST_IP_HEADER]: ip },
    body: JSON.stringify({ request_id: requestId }),
  })
  const decidedText = await decided.text()
  expect(decided.status, `approve: ${decidedText}`).toBe(200)
  const back = new URL(JSON.parse(decidedText).data.redirect_to)
  expect(back.href.startsWith(host.redirectUri), `the browser goes back to ${back.href}`).toBe(true)
  expect([back.searchParams.get('state'), back.searchParams.get('iss')]).toEqual([state, as.issuer])
  const code = back.searchParams.get('code')
  expect(code, back.href).toBeTruthy()

  // 5. The token request (form-encoded), with the client's own authentication.
  const form = new URLSearchParams({ grant_type: 'authorization_code', code: code!, redirect_uri: host.redirectUri, code_verifier: verifier, client_id: clientId })
  if (resource !== undefined) form.set('resource', resource)
  if (host.tokenAuth === 'private_key_jwt') {
    form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
    form.set('client_assertion', await clientAssertion(signingKey!, clientId, as.token_endpoint))
  }
  const token = await send(as.token_endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: form.toString() })
  const tokenText = await token.text()
  expect(token.status, `token: ${tokenText}`).toBe(200)
  const tokens = JSON.parse(tokenText) as { access_token: string; token_type: string }
  expect(tokens.access_token).toMatch(/^at_/)

  // 6. MCP: initialize, tools/list, a tool call, with the Bearer token.
  const auth = { authorization: `Bearer ${tokens.access_token}` }
  const initialized = await rpc(send, stack, host, initialize(host), auth)
  expect(initialized.result?.serverInfo?.name, JSON.stringify(initialized)).toBe('linkservice')
  const negotiated = String(initialized.result.protocolVersion)
  await send(stack.mcpUrl.href, { method: 'POST', headers: { ...mcpHeaders(negotiated), ...auth }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
  const listed = await rpc(send, stack, host, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, auth, negotiated)
  const alias = `host-${crypto.randomUUID().slice(0, 8)}`
  const called = await rpc(
    send,
    stack,
    host,
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'create_link', arguments: { url: 'https://example.com/from-a-host', alias } } },
    auth,
    negotiated,
  )
  return { steps, clientId, registered, accessToken: tokens.access_token, tools: (listed.result?.tools ?? []).map((tool: { name: string }) => tool.name), toolResult: called.result ?? called, alias }
}

const initialize = (host: HostSpec) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: host.protocolVersion, capabilities: {}, clientInfo: { name: 'replayed-host', version: '1' } },
})

function mcpHeaders(negotiated?: string): Record<string, string> {
  return { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(negotiated && { 'mcp-protocol-version': negotiated }) }
}

/** One JSON-RPC request; the answer from a JSON body or an event stream. */
async function rpc(
  send: (url: string, init?: RequestInit) => Promise<Response>,
  stack: McpStack,
  _host: HostSpec,
  message: unknown,
  auth: Record<string, string>,
  negotiated?: string,
): Promise<Record<string, any>> {
  const answer = await send(stack.mcpUrl.href, { method: 'POST', headers: { ...mcpHeaders(negotiated), ...auth }, body: JSON.stringify(message) })
  const text = await answer.text()
  expect(answer.status, text).toBe(200)
  const data = (answer.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .filter(Boolean)
        .at(-1)!
    : text
  return JSON.parse(data)
}

/** RFC 7523 2.2: iss and sub the client, aud the token endpoint, short-lived, unique. */
function clientAssertion(key: CryptoKey, clientId: string, tokenEndpoint: string): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'JWT' })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(tokenEndpoint)
    .setJti(crypto.randomUUID())
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key)
}

const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')
