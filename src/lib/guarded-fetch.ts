// An outgoing HTTP call to a URL the service does not control: a client's metadata document or key set
// (oauth/public-fetch.ts), a block list (abuse/list-fetch.ts), a reputation service or a webhook
// receiver (reputation/service-fetch.ts). One guard against SSRF for all of them:
//
// - https only; `allowHttpLoopback` (a test setting) allows loopback addresses too, and http to them only;
// - a host that is, and resolves only to, public addresses (RFC 6890's special-purpose ranges refused,
//   see hosts.ts): every address must pass, not only the one used, and no error names one;
// - DNS rebinding: checking a name's addresses and then letting fetch resolve it again would leave a
//   window in which a name with a zero TTL answers a public address to the check and 127.0.0.1 to the
//   connection. The connection goes to the address checked: the URL given to fetch carries that IP, Host
//   the name, and tls.serverName makes Bun send the name as SNI and verify the certificate against it
//   (checked with Bun 1.4: a certificate for another name is refused; test/oauth/cimd.test.ts runs it).
//   If HTTPS_PROXY is set, the proxy is asked for the checked IP too;
// - no redirect followed: a 3xx is an answer like any other, for the caller to refuse or report;
// - one deadline for the whole call, the lookup, the answer and the body included; the caller's own
//   signal (a service stopping) ends it too;
// - a bounded body: read whole up to a bound, cut at a bound, or streamed as text up to a bound.
//
// Every refusal and failure is a GuardedFetchError; its `reason` lets each caller word it as its own
// users know it. Its message names no address and no part of the URL (a query may hold a key).
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { hostKind, type HostKind } from './hosts'

/** A host name's addresses. */
export type Resolve = (hostname: string) => Promise<string[]>

/** The system resolver (node:dns lookup), every address. */
export const systemResolve: Resolve = async (hostname) => (await lookup(hostname, { all: true })).map((entry) => entry.address)

export type GuardedFetchReason =
  | 'scheme' // neither https nor http
  | 'http' // http without allowHttpLoopback
  | 'http-not-loopback' // http to a host that is not, or does not resolve only to, loopback
  | 'not-public' // the host is an address (or localhost) that is not public
  | 'unresolved' // the resolver failed
  | 'no-address' // the name resolves to nothing
  | 'resolves-non-public' // one of the name's addresses is not public
  | 'too-large' // the body passed the bound
  | 'stopped' // the caller's signal aborted
  | 'timeout' // the deadline passed
  | 'failed' // the connection, TLS or the body's transfer failed

export class GuardedFetchError extends Error {
  constructor(
    readonly reason: GuardedFetchReason,
    message: string,
  ) {
    super(message)
  }
}

export interface GuardedRequest {
  /** Default GET. */
  method?: 'GET' | 'POST'
  accept: string
  headers?: Record<string, string>
  body?: string
  /** Tests only: loopback addresses are allowed too, and http to them (and to nothing else). */
  allowHttpLoopback: boolean
  /** Budget of the whole call: the lookup, the connection, the answer and the body. */
  timeoutMs: number
  /** Default systemResolve. */
  resolve?: Resolve
  /** Aborts the call and its body (the service stopping): reason `stopped`. */
  signal?: AbortSignal
}

/** An answer of any status. Its body is read at most once, by one of the readers, within the deadline. */
export interface GuardedResponse {
  status: number
  headers: Headers
  /** False when the answer came without a body stream. */
  hasBody: boolean
  /** The whole body; past maxBytes `too-large`, the rest never read. */
  bytes(maxBytes: number): Promise<Uint8Array>
  /** The first maxBytes of the body; the rest is never read. */
  prefix(maxBytes: number): Promise<Uint8Array>
  /** The body as UTF-8 text while it arrives; past maxBytes `too-large`, the rest never read. */
  text(maxBytes: number): AsyncIterable<string>
  /** Leaves the body unread. */
  discard(): void
}

/** Rejects once the signal aborts, whatever `work` waits on (a DNS lookup takes no signal). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason)
    if (signal.aborted) return abort()
    signal.addEventListener('abort', abort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort))
  })
}

/** Where to connect: the checked address of a named host, or null when the URL holds an address itself. */
async function checkedAddress(url: URL, allowLoopback: boolean, resolve: Resolve): Promise<string | null> {
  const http = url.protocol === 'http:'
  if (!http && url.protocol !== 'https:') throw new GuardedFetchError('scheme', `${url.protocol} is not fetched; use https`)
  if (http && !allowLoopback) throw new GuardedFetchError('http', 'http is not fetched; use https')
  // Over http only loopback (the test setting); over https public addresses, and loopback with the setting.
  const allowed = (kind: HostKind) => (http ? kind === 'loopback' : kind === 'public' || (allowLoopback && kind === 'loopback'))
  const refused = (resolved: boolean) => {
    if (http) return new GuardedFetchError('http-not-loopback', 'http is fetched from loopback addresses only')
    return resolved ? new GuardedFetchError('resolves-non-public', 'the host resolves to a non-public address') : new GuardedFetchError('not-public', 'the host is not a public address')
  }
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1')
  if (isIP(literal) !== 0) {
    if (!allowed(hostKind(literal))) throw refused(false)
    return null
  }
  const kind = hostKind(url.hostname) // a name, or localhost and its subdomains
  if (kind !== 'name' && !allowed(kind)) throw refused(false)
  let addresses: string[]
  try {
    addresses = await resolve(url.hostname)
  } catch {
    throw new GuardedFetchError('unresolved', 'the host could not be resolved')
  }
  if (addresses.length === 0) throw new GuardedFetchError('no-address', 'the host has no address')
  if (!addresses.every((address) => allowed(hostKind(address)))) throw refused(true)
  // IPv4 first: one address is tried, so a server without IPv6 routes still reaches a dual-stack host.
  return addresses.find((address) => isIP(address) === 4) ?? addresses[0]!
}

/** The request, without following redirects; to `address` when given, as the name says otherwise (see the top). */
function send(url: URL, address: string | null, request: GuardedRequest, signal: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { ...request.headers, accept: request.accept }
  const init: BunFetchRequestInit = { method: request.method ?? 'GET', body: request.body, redirect: 'manual', signal, headers }
  if (address === null) return fetch(url.href, init)
  const pinned = new URL(url.href)
  pinned.hostname = isIP(address) === 6 ? `[${address}]` : address
  headers.host = url.host
  if (url.protocol === 'https:') init.tls = { serverName: url.hostname.replace(/\.$/, '') }
  return fetch(pinned.href, init)
}

const tooLarge = (maxBytes: number) => new GuardedFetchError('too-large', `the body is larger than ${maxBytes} bytes`)

// In the readers, leaving a loop over the stream (a break or a throw) cancels it: the rest is never read.
// The fetch's signal ends a body still arriving at the deadline.

async function whole(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  let total = 0
  for await (const chunk of body ?? []) {
    total += chunk.byteLength
    if (total > maxBytes) throw tooLarge(maxBytes)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

async function firstBytes(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  let total = 0
  for await (const chunk of body ?? []) {
    chunks.push(chunk.subarray(0, maxBytes - total))
    total += Math.min(chunk.byteLength, maxBytes - total)
    if (total >= maxBytes) break
  }
  return Buffer.concat(chunks)
}

async function* textOf(body: ReadableStream<Uint8Array> | null, maxBytes: number, failure: (error: unknown) => GuardedFetchError): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8')
  let total = 0
  try {
    for await (const chunk of body ?? []) {
      total += chunk.byteLength
      if (total > maxBytes) throw tooLarge(maxBytes)
      yield decoder.decode(chunk, { stream: true })
    }
  } catch (error) {
    throw failure(error)
  }
  const rest = decoder.decode()
  if (rest !== '') yield rest
}

/** `request` sent to `url` under the guard above; a refusal or failure, now or while reading the body, is a GuardedFetchError. */
export async function guardedFetch(url: URL, request: GuardedRequest): Promise<GuardedResponse> {
  const deadline = AbortSignal.timeout(request.timeoutMs)
  const signal = request.signal ? AbortSignal.any([deadline, request.signal]) : deadline
  const failure = (error: unknown): GuardedFetchError => {
    if (error instanceof GuardedFetchError) return error
    if (request.signal?.aborted) return new GuardedFetchError('stopped', 'stopped')
    if (deadline.aborted) return new GuardedFetchError('timeout', `not fetched within ${request.timeoutMs / 1000} s`)
    return new GuardedFetchError('failed', 'could not be fetched (connection or TLS failure)')
  }
  const failed = (error: unknown): never => {
    throw failure(error)
  }
  let response: Response
  try {
    const address = await untilAborted(checkedAddress(url, request.allowHttpLoopback, request.resolve ?? systemResolve), signal)
    response = await send(url, address, request, signal)
  } catch (error) {
    return failed(error)
  }
  const body = response.body
  return {
    status: response.status,
    headers: response.headers,
    hasBody: body !== null,
    bytes: (maxBytes) => whole(body, maxBytes).catch(failed),
    prefix: (maxBytes) => firstBytes(body, maxBytes).catch(failed),
    text: (maxBytes) => textOf(body, maxBytes, failure),
    discard: () => void body?.cancel().catch(() => {}),
  }
}
