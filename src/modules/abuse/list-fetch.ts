// A GET of a block list at a URL of BLOCKLIST_URLS, under the same SSRF guard as the OAuth module's
// metadata fetches (src/modules/oauth/public-fetch.ts): https only; a host that is, and resolves only
// to, public addresses (src/lib/hosts.ts); the connection made to the address that was checked (the
// URL given to fetch carries that IP, Host the name, tls.serverName the name for SNI and the
// certificate), so a name that answers a public address to the check and 127.0.0.1 to the connection
// (DNS rebinding) gets nowhere; no redirect followed. Unlike a metadata document a list is large, so the
// body is handed on as text while it streams, up to maxBytes (tens of MB), within one deadline.
//
// Conditional: with the validators of the last list accepted, a 304 says the list is unchanged.
// BLOCKLIST_ALLOW_HTTP_LOOPBACK (tests only) also allows loopback addresses, and http:// to them.
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { hostKind, type HostKind } from '../../lib/hosts'

/** A list on a slow link: its whole download, body included, gets this long. */
export const LIST_FETCH_TIMEOUT_MS = 120_000
/** Large domain lists are tens of MB (a million hosts is about 25 MB); past this the list is refused. */
export const MAX_LIST_BYTES = 64 * 1024 * 1024

/** A host name's addresses. Default: the system resolver, every address. */
export type Resolve = (hostname: string) => Promise<string[]>

/** What the server said identifies the list it sent, to ask next time whether it changed. */
export interface Validators {
  etag?: string
  lastModified?: string
}

export interface ListFetchOptions {
  allowHttpLoopback: boolean
  validators?: Validators
  resolve?: Resolve
  timeoutMs?: number
  maxBytes?: number
  /** Aborts the fetch and its body (the service stopping). */
  signal?: AbortSignal
}

export type ListResponse = { modified: false } | { modified: true; validators: Validators; text: AsyncIterable<string> }

/** Why a list was not fetched; its message names no address and no part of the URL. */
export class ListFetchError extends Error {}

const systemResolve: Resolve = async (hostname) => (await lookup(hostname, { all: true })).map((entry) => entry.address)

/** Where to connect: the checked address of a named host, or null when the URL holds an address itself. */
async function checkedAddress(url: URL, allowLoopback: boolean, resolve: Resolve): Promise<string | null> {
  const http = url.protocol === 'http:'
  if (!http && url.protocol !== 'https:') throw new ListFetchError(`${url.protocol} is not fetched; use https`)
  if (http && !allowLoopback) throw new ListFetchError('http is not fetched; use https')
  // Over http only loopback (the test setting); over https public addresses, and loopback with the setting.
  const allowed = (kind: HostKind) => (http ? kind === 'loopback' : kind === 'public' || (allowLoopback && kind === 'loopback'))
  const refused = new ListFetchError(http ? 'http is fetched from loopback addresses only' : 'the host is not a public address')
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1')
  if (isIP(literal) !== 0) {
    if (!allowed(hostKind(literal))) throw refused
    return null
  }
  const kind = hostKind(url.hostname)
  if (kind !== 'name' && !allowed(kind)) throw refused
  let addresses: string[]
  try {
    addresses = await resolve(url.hostname)
  } catch {
    throw new ListFetchError('the host could not be resolved')
  }
  if (addresses.length === 0) throw new ListFetchError('the host has no address')
  if (!addresses.every((address) => allowed(hostKind(address)))) throw new ListFetchError(http ? 'http is fetched from loopback addresses only' : 'the host resolves to a non-public address')
  // IPv4 first: one address is tried, so a server without IPv6 routes still reaches a dual-stack host.
  return addresses.find((address) => isIP(address) === 4) ?? addresses[0]!
}

/** Rejects once the signal aborts, whatever `work` waits on (a DNS lookup takes no signal). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason)
    if (signal.aborted) return abort()
    signal.addEventListener('abort', abort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort))
  })
}

function request(url: URL, address: string | null, validators: Validators | undefined, signal: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { accept: 'text/plain, text/csv;q=0.9, */*;q=0.5' }
  if (validators?.etag) headers['if-none-match'] = validators.etag
  if (validators?.lastModified) headers['if-modified-since'] = validators.lastModified
  const init: BunFetchRequestInit = { redirect: 'manual', signal, headers }
  if (address === null) return fetch(url.href, init)
  const pinned = new URL(url.href)
  pinned.hostname = isIP(address) === 6 ? `[${address}]` : address
  headers.host = url.host
  if (url.protocol === 'https:') init.tls = { serverName: url.hostname.replace(/\.$/, '') }
  return fetch(pinned.href, init)
}

/** The body as UTF-8 text while it arrives, refused past maxBytes (the rest is never read). */
async function* bodyText(body: ReadableStream<Uint8Array>, maxBytes: number, failed: (error: unknown) => ListFetchError): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8')
  let total = 0
  try {
    for await (const chunk of body) {
      total += chunk.byteLength
      if (total > maxBytes) throw new ListFetchError(`the list is larger than ${Math.round(maxBytes / 1024 / 1024)} MB`)
      yield decoder.decode(chunk, { stream: true })
    }
  } catch (error) {
    throw failed(error)
  }
  const rest = decoder.decode()
  if (rest !== '') yield rest
}

/** The list at `url`, or { modified: false } on a 304; a refusal or failure is a ListFetchError. */
export async function fetchList(url: URL, options: ListFetchOptions): Promise<ListResponse> {
  const timeoutMs = options.timeoutMs ?? LIST_FETCH_TIMEOUT_MS
  const deadline = AbortSignal.timeout(timeoutMs)
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline
  const failed = (error: unknown): ListFetchError => {
    if (error instanceof ListFetchError) return error
    if (options.signal?.aborted) return new ListFetchError('stopped')
    if (deadline.aborted) return new ListFetchError(`not fetched within ${timeoutMs / 1000} s`)
    return new ListFetchError('could not be fetched (connection or TLS failure)')
  }
  let response: Response
  try {
    const address = await untilAborted(checkedAddress(url, options.allowHttpLoopback, options.resolve ?? systemResolve), signal)
    response = await request(url, address, options.validators, signal)
  } catch (error) {
    throw failed(error)
  }
  if (response.status === 304 && (options.validators?.etag || options.validators?.lastModified)) return { modified: false }
  if (response.status !== 200 || !response.body) {
    response.body?.cancel().catch(() => {})
    if (response.status >= 300 && response.status < 400) throw new ListFetchError(`answered HTTP ${response.status}; redirects are not followed, give the final URL`)
    throw new ListFetchError(`answered HTTP ${response.status}, not 200`)
  }
  const validators: Validators = {}
  const etag = response.headers.get('etag')
  const lastModified = response.headers.get('last-modified')
  if (etag) validators.etag = etag
  if (lastModified) validators.lastModified = lastModified
  return { modified: true, validators, text: bodyText(response.body, options.maxBytes ?? MAX_LIST_BYTES, failed) }
}
