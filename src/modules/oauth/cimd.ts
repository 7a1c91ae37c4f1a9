// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, which the MCP
// authorization spec prefers to registration): a client_id that is an https URL names a JSON document of
// RFC 7591 metadata that the client publishes itself. We fetch it, keep what the consent page and the
// authorize endpoint need, and cache it.
//
// The URL is chosen by whoever sends the client_id, so the fetch is guarded against SSRF: https only, a
// host that is, and resolves only to, public addresses (RFC 6890's special-purpose ranges refused, see
// src/lib/hosts.ts), 5 s for the whole of it, 64 KB at most read, no redirect followed.
//
// DNS rebinding: checking the name's addresses and then letting fetch resolve it again would leave a
// window in which a name with a zero TTL answers a public address to us and 127.0.0.1 to fetch. We close
// it by connecting to the address we checked: the URL given to fetch carries that IP, Host carries the
// name, and tls.serverName makes Bun send the name as SNI and verify the certificate against it (checked
// with Bun 1.4: a certificate for another name is refused; cimd.test.ts runs it). If HTTPS_PROXY is
// set, the proxy is asked for the checked IP too.
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import type { Config } from '../../core/config'
import { TtlCache } from '../../core/ttl-cache'
import { hostKind, type HostKind } from '../../lib/hosts'
import { OAuthError } from '../../plugins/oauth-errors'
import type { Services } from '../../services'
import { checkRedirectUri } from './register'

/** DESIGN: "5 s, 64 KB". The draft suggests reading 5 KB; 64 KB leaves room for long redirect lists. */
const FETCH_TIMEOUT_MS = 5_000
const MAX_DOCUMENT_BYTES = 64 * 1024
/** As registration (register.ts): a URL a browser handles, and a name that fits the consent page. */
const MAX_URL_LENGTH = 2048
const MAX_REDIRECT_URIS = 10
const MAX_TEXT = 200
const MAX_SCOPE_LENGTH = 1000
/** RFC 6749 3.3 scope-token: printable ASCII but space, '"' and '\'. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/
/** Cache-Control max-age is honoured within these bounds (the draft lets the server set them). */
const MIN_TTL_MS = 60_000
const MAX_TTL_MS = 3_600_000
const DEFAULT_TTL_MS = 300_000
/**
 * A refusal is remembered this long, so a hostile client_id cannot make us fetch in a loop. (The draft
 * says not to cache error responses: none is ever used as metadata; a fixed document waits 30 s.)
 */
const FAILURE_TTL_MS = 30_000
const CACHE_ENTRIES = 1000

export interface ClientView {
  client_id: string
  client_name: string | null
  redirect_uris: string[]
  /** The scope the document declares, normalized; it may name scopes this server does not have. */
  scope: string | null
  client_uri: string | null
  /** Whether the document lists the refresh_token grant (grant_types; default authorization_code only). */
  refreshable: boolean
}

/** A host name's addresses. Default: the system resolver (node:dns lookup, all addresses). */
export type Resolve = (hostname: string) => Promise<string[]>

export interface CimdOptions {
  resolve?: Resolve
  /** Budget of the whole fetch, resolution and body included. Default 5 s. */
  timeoutMs?: number
  /** Default: the one cache of this process. */
  cache?: CimdCache
}

const refusal = (description: string) => new OAuthError('invalid_client', description)

const systemResolve: Resolve = async (hostname) => (await lookup(hostname, { all: true })).map((entry) => entry.address)

/** True for a client_id meant as a metadata document URL (rather than one this server issued). */
export function isMetadataDocumentUrl(clientId: string, config: Pick<Config, 'cimdAllowHttpLoopback'>): boolean {
  if (/^https:\/\//i.test(clientId)) return true
  if (!config.cimdAllowHttpLoopback || !/^http:\/\//i.test(clientId)) return false
  return URL.canParse(clientId) && hostKind(new URL(clientId).hostname) === 'loopback'
}

/** The draft's Client Identifier URL rules (section 3), plus: written exactly as the URL parser writes it. */
function clientIdUrl(clientId: string, allowLoopback: boolean): URL {
  if (clientId.length > MAX_URL_LENGTH) throw refusal(`client_id: a metadata document URL is at most ${MAX_URL_LENGTH} characters.`)
  if (!URL.canParse(clientId)) throw refusal('client_id is not a valid URL.')
  const url = new URL(clientId)
  const testLoopback = allowLoopback && url.protocol === 'http:' && hostKind(url.hostname) === 'loopback'
  if (url.protocol !== 'https:' && !testLoopback) throw refusal('client_id: a metadata document URL must use https.')
  if (url.username !== '' || url.password !== '') throw refusal('client_id: a metadata document URL must not contain credentials.')
  if (clientId.includes('#')) throw refusal('client_id: a metadata document URL must not have a fragment.')
  if (/\/(\.|%2e){1,2}(\/|$)/i.test(clientId.split('?')[0]!)) throw refusal('client_id: a metadata document URL must not contain . or .. path segments.')
  if (url.pathname === '/') throw refusal('client_id: a metadata document URL needs a path, e.g. https://example.com/client.json.')
  // The document must name the URL it was fetched from, compared as strings: fetching the parser's
  // spelling of a URL written otherwise (HTTPS://, :443, %7e) would compare two different strings.
  if (url.href !== clientId) throw refusal('client_id: write the metadata document URL in normalized form (lower-case scheme and host, no default port).')
  return url
}

/** Where to connect: the checked address of a named host, or null when the URL holds an address itself. */
async function checkedAddress(url: URL, allowLoopback: boolean, resolve: Resolve): Promise<string | null> {
  const allowed = (kind: HostKind) => kind === 'public' || (allowLoopback && kind === 'loopback')
  const nonPublic = refusal('client_id: the metadata document host is not a public address.')
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1')
  if (isIP(literal) !== 0) {
    if (!allowed(hostKind(literal))) throw nonPublic
    return null
  }
  const kind = hostKind(url.hostname) // a name, or localhost and its subdomains
  if (kind !== 'name' && !allowed(kind)) throw nonPublic
  let addresses: string[]
  try {
    addresses = await resolve(url.hostname)
  } catch {
    throw refusal('client_id: the metadata document host could not be resolved.')
  }
  if (addresses.length === 0) throw refusal('client_id: the metadata document host has no address.')
  // Every address must be public, not only the one we use: the address is not shown (it may be internal).
  if (!addresses.every((address) => allowed(hostKind(address)))) throw refusal('client_id: the metadata document host resolves to a non-public address.')
  // IPv4 first: one address is tried, so a server without IPv6 routes still reaches a dual-stack host.
  return addresses.find((address) => isIP(address) === 4) ?? addresses[0]!
}

/** Rejects once the deadline passes, whatever `work` is waiting on (a DNS lookup takes no signal). */
function beforeDeadline<T>(work: Promise<T>, deadline: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const expire = () => reject(deadline.reason)
    if (deadline.aborted) return expire()
    deadline.addEventListener('abort', expire, { once: true })
    work.then(resolve, reject).finally(() => deadline.removeEventListener('abort', expire))
  })
}

/** GET without following redirects; to `address` when given, as the name says otherwise (see the top). */
function request(url: URL, address: string | null, deadline: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' }
  const init: BunFetchRequestInit = { redirect: 'manual', signal: deadline, headers }
  if (address === null) return fetch(url.href, init)
  const pinned = new URL(url.href)
  pinned.hostname = isIP(address) === 6 ? `[${address}]` : address
  headers.host = url.host
  if (url.protocol === 'https:') init.tls = { serverName: url.hostname.replace(/\.$/, '') }
  return fetch(pinned.href, init)
}

/** The body, read until it ends or passes MAX_DOCUMENT_BYTES (then the rest is never read). */
async function readDocument(response: Response): Promise<Uint8Array> {
  const reader = response.body?.getReader()
  if (!reader) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let total = 0
  try {
    for (;;) {
      const { done, value } = await reader.read() // the fetch's signal ends a body past the deadline
      if (done) return Buffer.concat(chunks)
      total += value.byteLength
      if (total > MAX_DOCUMENT_BYTES) throw refusal(`client_id: the metadata document is larger than ${MAX_DOCUMENT_BYTES / 1024} KB.`)
      chunks.push(value)
    }
  } catch (error) {
    reader.cancel().catch(() => {})
    throw error
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function optionalText(doc: Record<string, unknown>, field: string, check: (value: string) => boolean, rule: string): string | null {
  const value = doc[field]
  if (value === undefined || value === null) return null
  if (typeof value !== 'string' || !check(value)) throw refusal(`client metadata document: ${field} ${rule}`)
  return value
}

/** What a public client's document may say, kept as the authorize endpoint and consent page use it. */
function clientView(clientId: string, doc: unknown): ClientView {
  if (!isObject(doc)) throw refusal('client metadata document: the document must be a JSON object.')
  if (doc.client_id !== clientId) throw refusal('client metadata document: its client_id must be exactly the URL it is served from.')
  // There is no way to agree on a secret with a document (draft section 4.1): public clients only, PKCE.
  if (doc.client_secret !== undefined || doc.client_secret_expires_at !== undefined) throw refusal('client metadata document: must not contain a client_secret.')
  if (doc.token_endpoint_auth_method !== undefined && doc.token_endpoint_auth_method !== 'none') {
    throw refusal('client metadata document: token_endpoint_auth_method must be none (public clients with PKCE only).')
  }
  const uris = doc.redirect_uris
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS) {
    throw refusal(`client metadata document: redirect_uris must list 1-${MAX_REDIRECT_URIS} URIs.`)
  }
  const redirectUris = uris.map((uri) => {
    try {
      return checkRedirectUri(uri)
    } catch (error) {
      throw error instanceof OAuthError ? refusal(`client metadata document: redirect_uris: ${error.description}`) : error
    }
  })
  const name = optionalText(doc, 'client_name', (v) => v.trim() !== '' && v.length <= MAX_TEXT, `must be a string of 1-${MAX_TEXT} characters.`)
  const clientUri = optionalText(doc, 'client_uri', (v) => v.length <= MAX_URL_LENGTH && URL.canParse(v) && new URL(v).protocol === 'https:', 'must be an https URL.')
  const scope = optionalText(doc, 'scope', (v) => v.length <= MAX_SCOPE_LENGTH && v.split(' ').every((s) => s === '' || SCOPE_TOKEN.test(s)), 'must be space-separated scope tokens.')
  const scopes = [...new Set(scope?.split(' ').filter((s) => s !== '') ?? [])]
  return Object.freeze({
    client_id: clientId,
    client_name: name?.trim() ?? null,
    redirect_uris: Object.freeze([...new Set(redirectUris)]) as string[], // frozen: cached views are shared
    scope: scopes.length > 0 ? scopes.join(' ') : null,
    client_uri: clientUri,
    refreshable: Array.isArray(doc.grant_types) && doc.grant_types.includes('refresh_token'),
  })
}

/** RFC 9111 freshness from Cache-Control max-age (less Age), within [MIN_TTL_MS, MAX_TTL_MS]. */
function lifetimeMs(headers: Headers): number {
  const directives = (headers.get('cache-control') ?? '').toLowerCase().split(',').map((d) => d.trim())
  if (directives.includes('no-store') || directives.includes('no-cache')) return MIN_TTL_MS
  const maxAge = directives.map((d) => /^max-age="?(\d+)"?$/.exec(d)).find((m) => m !== null)
  if (!maxAge) return DEFAULT_TTL_MS
  const age = Number(headers.get('age')) || 0
  return Math.min(MAX_TTL_MS, Math.max(MIN_TTL_MS, (Number(maxAge[1]) - age) * 1000))
}

async function load(url: URL, allowLoopback: boolean, options: CimdOptions): Promise<{ view: ClientView; ttlMs: number }> {
  const budgetMs = options.timeoutMs ?? FETCH_TIMEOUT_MS
  const deadline = AbortSignal.timeout(budgetMs)
  try {
    const address = await beforeDeadline(checkedAddress(url, allowLoopback, options.resolve ?? systemResolve), deadline)
    const response = await request(url, address, deadline)
    if (response.status !== 200) {
      response.body?.cancel().catch(() => {})
      if (response.status >= 300 && response.status < 400) throw refusal('client_id: the metadata document URL redirects; redirects are not followed.')
      throw refusal(`client_id: the metadata document URL answered HTTP ${response.status}, not 200.`)
    }
    const body = await readDocument(response)
    let doc: unknown
    try {
      doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body))
    } catch {
      throw refusal('client metadata document: the body is not JSON.')
    }
    return { view: clientView(url.href, doc), ttlMs: lifetimeMs(response.headers) }
  } catch (error) {
    if (error instanceof OAuthError) throw error
    if (deadline.aborted) throw refusal(`client_id: the metadata document was not fetched within ${budgetMs / 1000} s.`)
    throw refusal('client_id: the metadata document could not be fetched (connection or TLS failure).')
  }
}

type Outcome = { view: ClientView } | { error: OAuthError }

/**
 * Documents and refusals by client_id, bounded in entries (the oldest goes first) and in age; and the
 * fetches under way, so concurrent lookups of one URL share one fetch.
 */
export class CimdCache {
  private readonly settled: TtlCache<Outcome>
  private readonly inFlight = new Map<string, Promise<ClientView>>()

  constructor(maxEntries = CACHE_ENTRIES) {
    this.settled = new TtlCache(maxEntries)
  }

  get(clientId: string, now: () => number, fetchDocument: () => Promise<{ view: ClientView; ttlMs: number }>): Promise<ClientView> {
    const hit = this.settled.get(clientId, now())
    if (hit) return 'view' in hit ? Promise.resolve(hit.view) : Promise.reject(hit.error)
    const running = this.inFlight.get(clientId)
    if (running) return running
    const started = fetchDocument()
      .then(
        ({ view, ttlMs }) => {
          this.settled.set(clientId, { view }, ttlMs, now())
          return view
        },
        (error: OAuthError) => {
          this.settled.set(clientId, { error }, FAILURE_TTL_MS, now())
          throw error
        },
      )
      .finally(() => this.inFlight.delete(clientId))
    this.inFlight.set(clientId, started)
    return started
  }
}

const processCache = new CimdCache()

/** The client a metadata document URL names, fetched and checked (or cached). Refusals: invalid_client. */
export async function fetchClientMetadataDocument(services: Pick<Services, 'config' | 'now'>, clientId: string, options: CimdOptions = {}): Promise<ClientView> {
  const allowLoopback = services.config.cimdAllowHttpLoopback
  const url = clientIdUrl(clientId, allowLoopback)
  return (options.cache ?? processCache).get(clientId, services.now, () => load(url, allowLoopback, options))
}
