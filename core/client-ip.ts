// Who is calling: the one rule the API (per-IP limits) and the redirector (click rows, password attempts)
// both use, so a client cannot be one address to one side and another to the other. Only what a trusted
// proxy wrote counts: a client can put anything in a header, but it cannot remove what a proxy appends.

/** Where the client address comes from (config TRUSTED_PROXY_HOPS / TRUSTED_IP_HEADER; neither: the socket). */
export type ClientIpRule =
  | { from: 'socket' }
  /** A header a trusted proxy or CDN sets to one address (CF-Connecting-IP, X-Real-IP). */
  | { from: 'header'; header: string }
  /** X-Forwarded-For behind `hops` trusted proxies that each append the address they saw. */
  | { from: 'forwarded-for'; hops: number }

export const SOCKET_ADDRESS: ClientIpRule = { from: 'socket' }

/** The peer address as Bun's server gives it; it throws for a request the server did not receive. */
export interface Peer {
  requestIP(request: Request): { address: string } | null
}

/** Longest IPv6 text form is 45 characters; anything longer in a header is not an address. */
const MAX_IP_CHARS = 64

/** The client's address by `rule`, at most 64 characters; '' when there is none (no peer, no header). */
export function clientAddress(rule: ClientIpRule, request: Request, peer: Peer | undefined): string {
  let address = ''
  if (rule.from === 'header') address = lastEntry(request.headers.get(rule.header))
  else if (rule.from === 'forwarded-for') address = entryFromRight(request.headers.get('x-forwarded-for'), rule.hops)
  if (address === '') address = peer?.requestIP(request)?.address ?? ''
  return address.length > MAX_IP_CHARS ? address.slice(0, MAX_IP_CHARS) : address
}

/**
 * A single-value header taken whole. Should it hold a list after all (a proxy in front of the one that
 * sets it appended to it), the right-most entry is the one written last, by the nearest proxy.
 */
function lastEntry(value: string | null): string {
  if (value === null) return ''
  return value.slice(value.lastIndexOf(',') + 1).trim()
}

/**
 * The n-th entry from the right of a comma-separated list (1: the last), scanned from the right without
 * splitting the whole list: a client may send a long one. A list of fewer than n entries did not come
 * through all the trusted proxies, so every entry in it may be the client's own: '' (the caller then
 * uses the socket address, the one address nobody can forge). The left-most entry is never used for
 * that reason, although it would often be the right one.
 */
export function entryFromRight(value: string | null, n: number): string {
  if (value === null) return ''
  let end = value.length
  for (let i = 1; i < n; i++) {
    end = value.lastIndexOf(',', end - 1)
    if (end < 0) return ''
  }
  return value.slice(value.lastIndexOf(',', end - 1) + 1, end).trim()
}
