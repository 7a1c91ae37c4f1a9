// A GET of a JSON document at a URL chosen by whoever sends a request (a client metadata document, a
// client's key set): guarded against SSRF. https only, a host that is, and resolves only to, public
// addresses (RFC 6890's special-purpose ranges refused, see src/lib/hosts.ts), 5 s for the whole of it,
// 64 KB at most read, no redirect followed.
//
// DNS rebinding: checking the name's addresses and then letting fetch resolve it again would leave a
// window in which a name with a zero TTL answers a public address to us and 127.0.0.1 to fetch. We close
// it by connecting to the address we checked: the URL given to fetch carries that IP, Host carries the
// name, and tls.serverName makes Bun send the name as SNI and verify the certificate against it (checked
// with Bun 1.4: a certificate for another name is refused; cimd.test.ts runs it). If HTTPS_PROXY is
// set, the proxy is asked for the checked IP too.
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { hostKind, type HostKind } from '../../lib/hosts'
import { OAuthError } from '../../plugins/oauth-errors'

/** 5 s and 64 KB for a metadata document or key set (docs/agents-and-mcp.md). The CIMD draft suggests reading 5 KB; 64 KB leaves room for long lists. */
const FETCH_TIMEOUT_MS = 5_000
const MAX_DOCUMENT_BYTES = 64 * 1024
/** Cache-Control max-age is honoured within these bounds (the CIMD draft lets the server set them). */
const MIN_TTL_MS = 60_000
const MAX_TTL_MS = 3_600_000
const DEFAULT_TTL_MS = 300_000

/** A host name's addresses. Default: the system resolver (node:dns lookup, all addresses). */
export type Resolve = (hostname: string) => Promise<string[]>

export interface FetchOptions {
  resolve?: Resolve
  /** Budget of the whole fetch, resolution and body included. Default 5 s. */
  timeoutMs?: number
}

/** How refusals name what was fetched: `client_id: the metadata document`, `jwks_uri: the key set`. */
export type Subject = string

const systemResolve: Resolve = async (hostname) => (await lookup(hostname, { all: true })).map((entry) => entry.address)

const refusal = (description: string) => new OAuthError('invalid_client', description)

/** Where to connect: the checked address of a named host, or null when the URL holds an address itself. */
async function checkedAddress(url: URL, allowLoopback: boolean, resolve: Resolve, subject: Subject): Promise<string | null> {
  const allowed = (kind: HostKind) => kind === 'public' || (allowLoopback && kind === 'loopback')
  const nonPublic = refusal(`${subject} host is not a public address.`)
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
    throw refusal(`${subject} host could not be resolved.`)
  }
  if (addresses.length === 0) throw refusal(`${subject} host has no address.`)
  // Every address must be public, not only the one we use: the address is not shown (it may be internal).
  if (!addresses.every((address) => allowed(hostKind(address)))) throw refusal(`${subject} host resolves to a non-public address.`)
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
async function readDocument(response: Response, subject: Subject): Promise<Uint8Array> {
  const reader = response.body?.getReader()
  if (!reader) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let total = 0
  try {
    for (;;) {
      const { done, value } = await reader.read() // the fetch's signal ends a body past the deadline
      if (done) return Buffer.concat(chunks)
      total += value.byteLength
      if (total > MAX_DOCUMENT_BYTES) throw refusal(`${subject} is larger than ${MAX_DOCUMENT_BYTES / 1024} KB.`)
      chunks.push(value)
    }
  } catch (error) {
    reader.cancel().catch(() => {})
    throw error
  }
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

/** The JSON of `url` (already checked as a URL) and how long it may be cached; refusals are invalid_client. */
export async function fetchPublicJson(url: URL, allowLoopback: boolean, subject: Subject, options: FetchOptions = {}): Promise<{ json: unknown; ttlMs: number }> {
  const budgetMs = options.timeoutMs ?? FETCH_TIMEOUT_MS
  const deadline = AbortSignal.timeout(budgetMs)
  try {
    const address = await beforeDeadline(checkedAddress(url, allowLoopback, options.resolve ?? systemResolve, subject), deadline)
    const response = await request(url, address, deadline)
    if (response.status !== 200) {
      response.body?.cancel().catch(() => {})
      if (response.status >= 300 && response.status < 400) throw refusal(`${subject} URL redirects; redirects are not followed.`)
      throw refusal(`${subject} URL answered HTTP ${response.status}, not 200.`)
    }
    const body = await readDocument(response, subject)
    try {
      return { json: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)), ttlMs: lifetimeMs(response.headers) }
    } catch {
      throw refusal(`${subject} is not JSON.`)
    }
  } catch (error) {
    if (error instanceof OAuthError) throw error
    if (deadline.aborted) throw refusal(`${subject} was not fetched within ${budgetMs / 1000} s.`)
    throw refusal(`${subject} could not be fetched (connection or TLS failure).`)
  }
}
