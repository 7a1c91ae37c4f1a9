// A GET of a configured reputation service (SAFE_DNS_URL, WEB_RISK_URL) under the SSRF guard of the
// service's other outgoing calls (src/modules/oauth/public-fetch.ts, src/modules/abuse/list-fetch.ts):
// https only; a host that is, and resolves only to, public addresses (src/lib/hosts.ts); the connection
// made to the address that was checked (the URL given to fetch carries that IP, Host the name,
// tls.serverName the name for SNI and the certificate), so a name that answers a public address to the
// check and 127.0.0.1 to the connection (DNS rebinding) gets nowhere; no redirect followed; one deadline
// for the whole call, body included; a small body. REPUTATION_ALLOW_HTTP_LOOPBACK (tests only) also
// allows loopback addresses, and http:// to them.
//
// Not fetchPublicJson itself: a DoH answer is a binary DNS message, asked for with `accept:
// application/dns-message`, where that one reads JSON under `accept: application/json` only.
//
// sendToService is the same guard for a POST whose answer is any status (the webhook dispatcher,
// src/modules/webhooks): the status and at most `maxBytes` of the body, the rest never read.
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { hostKind, type HostKind } from '../../lib/hosts'

/** A DNS message is at most 64 KB (RFC 8484 §6); a Web Risk answer is a few hundred bytes. */
const MAX_ANSWER_BYTES = 64 * 1024

/** A host name's addresses. Default: the system resolver, every address. */
export type Resolve = (hostname: string) => Promise<string[]>

export const systemResolve: Resolve = async (hostname) => (await lookup(hostname, { all: true })).map((entry) => entry.address)

export interface ServiceFetchOptions {
  accept: string
  allowHttpLoopback: boolean
  timeoutMs: number
  resolve?: Resolve
}

/** Why a service was not asked or did not answer; the message names no address and no part of the URL (its query may hold a key). */
export class ServiceFetchError extends Error {}

/** Where to connect: the checked address of a named host, or null when the URL holds an address itself. */
async function checkedAddress(url: URL, allowLoopback: boolean, resolve: Resolve): Promise<string | null> {
  const http = url.protocol === 'http:'
  if (!http && url.protocol !== 'https:') throw new ServiceFetchError(`${url.protocol} is not used; use https`)
  if (http && !allowLoopback) throw new ServiceFetchError('http is not used; use https')
  // Over http only loopback (the test setting); over https public addresses, and loopback with the setting.
  const allowed = (kind: HostKind) => (http ? kind === 'loopback' : kind === 'public' || (allowLoopback && kind === 'loopback'))
  const refused = new ServiceFetchError(http ? 'http is used on loopback addresses only' : 'the host is not a public address')
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
    throw new ServiceFetchError('the host could not be resolved')
  }
  if (addresses.length === 0) throw new ServiceFetchError('the host has no address')
  if (!addresses.every((address) => allowed(hostKind(address)))) throw refused
  // IPv4 first: one address is tried, so a server without IPv6 routes still reaches a dual-stack host.
  return addresses.find((address) => isIP(address) === 4) ?? addresses[0]!
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

function request(url: URL, address: string | null, accept: string, signal: AbortSignal, send: { method: string; headers?: Record<string, string>; body?: string } = { method: 'GET' }): Promise<Response> {
  const headers: Record<string, string> = { ...send.headers, accept }
  const init: BunFetchRequestInit = { method: send.method, body: send.body, redirect: 'manual', signal, headers }
  if (address === null) return fetch(url.href, init)
  const pinned = new URL(url.href)
  pinned.hostname = isIP(address) === 6 ? `[${address}]` : address
  headers.host = url.host
  if (url.protocol === 'https:') init.tls = { serverName: url.hostname.replace(/\.$/, '') }
  return fetch(pinned.href, init)
}

/** The body, read until it ends or passes MAX_ANSWER_BYTES (then the rest is never read). */
async function readCapped(response: Response): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  let total = 0
  for await (const chunk of response.body ?? []) {
    total += chunk.byteLength
    // Leaving the loop cancels the stream: the rest is never read.
    if (total > MAX_ANSWER_BYTES) throw new ServiceFetchError(`answered more than ${MAX_ANSWER_BYTES / 1024} KB`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** The body of a 200 answer from `url`; anything else is a ServiceFetchError. */
export async function fetchService(url: URL, options: ServiceFetchOptions): Promise<Uint8Array> {
  const deadline = AbortSignal.timeout(options.timeoutMs)
  try {
    const address = await untilAborted(checkedAddress(url, options.allowHttpLoopback, options.resolve ?? systemResolve), deadline)
    const response = await request(url, address, options.accept, deadline)
    if (response.status !== 200) {
      response.body?.cancel().catch(() => {})
      throw new ServiceFetchError(`answered HTTP ${response.status}${response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : ''}`)
    }
    return await readCapped(response)
  } catch (error) {
    if (error instanceof ServiceFetchError) throw error
    if (deadline.aborted) throw new ServiceFetchError(`did not answer within ${options.timeoutMs / 1000} s`)
    throw new ServiceFetchError('could not be reached (connection or TLS failure)')
  }
}

export interface ServiceSendOptions extends ServiceFetchOptions {
  method: 'POST'
  headers: Record<string, string>
  body: string
  /** Bytes of the answer read at most; the rest is never read. */
  maxBytes: number
  /** Aborts the call (the service stopping). */
  signal?: AbortSignal
}

/** The first bytes of the body, up to maxBytes; the stream is cancelled there. */
async function readPrefix(response: Response, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  let total = 0
  for await (const chunk of response.body ?? []) {
    chunks.push(chunk.subarray(0, maxBytes - total))
    total += Math.min(chunk.byteLength, maxBytes - total)
    // Leaving the loop cancels the stream: the rest is never read.
    if (total >= maxBytes) break
  }
  return Buffer.concat(chunks)
}

/**
 * A request to `url` under the guard above, answered with whatever status it gets (a redirect is an
 * answer, never followed) and the first maxBytes of its body; a refusal, timeout or connection failure
 * is a ServiceFetchError.
 */
export async function sendToService(url: URL, options: ServiceSendOptions): Promise<{ status: number; body: Uint8Array }> {
  const deadline = AbortSignal.timeout(options.timeoutMs)
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline
  try {
    const address = await untilAborted(checkedAddress(url, options.allowHttpLoopback, options.resolve ?? systemResolve), signal)
    const response = await request(url, address, options.accept, signal, options)
    return { status: response.status, body: await readPrefix(response, options.maxBytes) }
  } catch (error) {
    if (error instanceof ServiceFetchError) throw error
    if (options.signal?.aborted) throw new ServiceFetchError('stopped')
    if (deadline.aborted) throw new ServiceFetchError(`did not answer within ${options.timeoutMs / 1000} s`)
    throw new ServiceFetchError('could not be reached (connection or TLS failure)')
  }
}
