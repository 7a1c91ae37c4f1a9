// MCP hosts the way real ones meet us: the official client (@modelcontextprotocol/client) over HTTP to
// the app on a real port, with its OAuth flow driven by an OAuthClientProvider that keeps everything in
// memory and plays the browser: it opens the authorization URL, and the human approves the consent
// request with their API key (as the consent page would), which hands back the redirect with the code.
import {
  Client,
  StreamableHTTPClientTransport,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
} from '@modelcontextprotocol/client'
import { CustomDomain } from '../../redirect/domains'
import { internalApi } from '../../redirect/internal-api'
import type { ClickRecorder, RecorderStats } from '../../redirect/recorder'
import { createRedirector, type Redirector } from '../../redirect/server'
import type { ClickEvent } from '../../core/clicks'
import { testApi, testConfig, TEST_IP_HEADER, uniqueIp, type TestApp } from './api'
import { newAccount, type TestAccount } from './fixtures'
import { freePort } from './processes'

/** The API and the redirector on one real loopback port, as in the embedded default (one-process/main.ts). */
export interface McpStack {
  /** The issuer, PUBLIC_API_URL and the short domain's origin at once. */
  origin: string
  mcpUrl: URL
  app: Awaited<ReturnType<typeof testApi>>['app']
  deps: Awaited<ReturnType<typeof testApi>>['deps']
  redirector: Redirector
  clicks: ClickEvent[]
  stop(): Promise<void>
}

const API_PREFIXES = ['/api/', '/oauth/', '/.well-known/', '/internal/', '/swagger', '/mcp/']

/** `env`: more settings (CIMD_ALLOW_HTTP_LOOPBACK for a host whose client metadata document is served on loopback). */
export async function startMcpStack(env: Record<string, string> = {}): Promise<McpStack> {
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const config = testConfig({ PUBLIC_API_URL: origin, SHORT_DOMAIN: `127.0.0.1:${port}`, SHORT_BASE_URL: origin, ...env })
  let server: ReturnType<typeof Bun.serve> | undefined
  const { app, deps, adapters } = await testApi({ config, requestIP: (request) => server?.requestIP(request)?.address ?? null })
  const api = internalApi((request) => app.handle(request), { apiUrl: config.apiInternalUrl, secret: config.internalSecret, timeoutMs: config.cache.resolveTimeoutMs })
  const clicks: ClickEvent[] = []
  const recorder: ClickRecorder = {
    record: (click) => void clicks.push(click),
    stats: () => ({ pushed: clicks.length }) as unknown as RecorderStats,
    stop: async () => ({ pushed: clicks.length }) as unknown as RecorderStats,
  }
  const redirector = await createRedirector(config, { source: adapters.kv, api, recorder })
  server = Bun.serve({
    port,
    hostname: '127.0.0.1',
    fetch(request, srv) {
      const path = new URL(request.url).pathname
      const isApi = (path === '/mcp' || API_PREFIXES.some((prefix) => path.startsWith(prefix))) && !(redirector.domains.match(request.url) instanceof CustomDomain)
      return isApi ? app.handle(request) : redirector.fetch(request, srv)
    },
  })
  return {
    origin,
    mcpUrl: new URL(`${origin}/mcp`),
    app,
    deps,
    redirector,
    clicks,
    async stop() {
      await server?.stop(true)
      await redirector.stop(1000)
    },
  }
}

/** One exchange the client made: what the test can say about the flow from the outside. */
export interface Exchange {
  method: string
  path: string
  status: number
  headers: Headers
}

export type RecordingFetch = typeof fetch & { log: Exchange[]; ip: string }

/**
 * A fetch that speaks as one client address (config.clientIpHeader, so per-IP limits stay per test)
 * and records each exchange (method, path, status, response headers).
 */
export function asClient(ip = uniqueIp()): RecordingFetch {
  const log: Exchange[] = []
  const recording = async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined))
    headers.set(TEST_IP_HEADER, ip)
    const response = await fetch(input, { ...init, headers })
    const url = new URL(input instanceof Request ? input.url : input)
    log.push({ method: init?.method ?? (input instanceof Request ? input.method : 'GET'), path: url.pathname, status: response.status, headers: response.headers })
    return response
  }
  return Object.assign(recording, { log, ip }) as RecordingFetch
}

/** The MCP host's OAuth state, in memory; `redirectToAuthorization` only remembers where the browser would go. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  readonly redirectUrl = `http://127.0.0.1:${40000 + Math.floor(Math.random() * 20000)}/callback`
  authorizationUrl: URL | undefined
  lastState: string | undefined
  private client: OAuthClientInformationMixed | undefined
  private saved: OAuthTokens | undefined
  private verifier: string | undefined
  private discovery: OAuthDiscoveryState | undefined

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test MCP host',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }
  state() {
    this.lastState = crypto.randomUUID()
    return this.lastState
  }
  clientInformation() {
    return this.client
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('no PKCE verifier saved')
    return this.verifier
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state
  }
  discoveryState() {
    return this.discovery
  }
  /** The client's registration, once it registered. */
  get clientId(): string | undefined {
    return this.client?.client_id
  }
}

/** The browser opens the authorization URL (302 to the consent page) and the human approves there. */
export async function humanConsents(stack: McpStack, provider: MemoryOAuthProvider, human: TestAccount, fetchAs: RecordingFetch, approve: { scopes?: string[] } = {}): Promise<URLSearchParams> {
  const url = provider.authorizationUrl
  if (!url) throw new Error('the client never sent the browser to the authorization server')
  const opened = await fetchAs(url, { redirect: 'manual' })
  const location = opened.headers.get('location') ?? ''
  const requestId = /^\/consent\?request_id=(oreq_[A-Za-z0-9_-]+)$/.exec(location)?.[1]
  if (opened.status !== 302 || !requestId) throw new Error(`authorize answered ${opened.status} ${location} ${await opened.text()}`)
  const decided = await fetchAs(`${stack.origin}/api/v1/oauth/approve`, {
    method: 'POST',
    headers: { authorization: `Bearer ${human.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ request_id: requestId, ...approve }),
  })
  const text = await decided.text()
  if (decided.status !== 200) throw new Error(`approve answered ${decided.status} ${text}`)
  const redirect = new URL(JSON.parse(text).data.redirect_to)
  if (`${redirect.origin}${redirect.pathname}` !== provider.redirectUrl) throw new Error(`approve sent the browser to ${redirect.href}`)
  if (redirect.searchParams.get('state') !== provider.lastState) throw new Error('state mismatch')
  return redirect.searchParams
}

export interface Connected {
  client: Client
  transport: StreamableHTTPClientTransport
  provider: MemoryOAuthProvider
  fetchAs: RecordingFetch
}

/**
 * A host connected with tokens of `human`'s consent: the first connect gets 401 and sends the browser
 * to the authorization server; the human consents; finishAuth exchanges the code; the second connect
 * (on a fresh transport, as the SDK requires) goes through.
 */
export async function connectWithConsent(stack: McpStack, human: TestAccount, options: { scopes?: string[]; era?: 'legacy' | 'auto' } = {}): Promise<Connected> {
  const provider = new MemoryOAuthProvider()
  const fetchAs = asClient()
  const newClient = () => new Client({ name: 'test-host', version: '1.0.0' }, options.era === 'auto' ? { versionNegotiation: { mode: 'auto' } } : {})
  const first = new StreamableHTTPClientTransport(stack.mcpUrl, { authProvider: provider, fetch: fetchAs })
  await newClient()
    .connect(first)
    .then(
      () => {
        throw new Error('connected without authorization')
      },
      (error: unknown) => {
        if (!provider.authorizationUrl) throw error
      },
    )
  const params = await humanConsents(stack, provider, human, fetchAs, { scopes: options.scopes })
  await first.finishAuth(params)
  const transport = new StreamableHTTPClientTransport(stack.mcpUrl, { authProvider: provider, fetch: fetchAs })
  const client = newClient()
  await client.connect(transport)
  return { client, transport, provider, fetchAs }
}

export async function newHuman(stack: McpStack): Promise<TestAccount> {
  return newAccount(stack.deps.db)
}

/** The official client against the app in process (no port): `token` sent as the bearer, one client address. */
export async function inProcessClient(app: TestApp, token: string, { origin = 'https://api.sho.rt', ip = uniqueIp() } = {}): Promise<Client> {
  const viaApp = (async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers)
    headers.set('authorization', `Bearer ${token}`)
    headers.set(TEST_IP_HEADER, ip)
    return app.handle(new Request(input instanceof Request ? input.url : String(input), { ...init, headers }))
  }) as typeof fetch
  const client = new Client({ name: 'test-host', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { fetch: viaApp }))
  return client
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ToolResult = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: Record<string, any> }

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult
}

/** A tool result for an assertion message. */
export const showResult = (result: ToolResult) => JSON.stringify(result).slice(0, 800)
