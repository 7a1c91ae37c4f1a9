// Calls to a configured reputation service (SAFE_DNS_URL, WEB_RISK_URL) and to a webhook receiver
// (src/modules/webhooks), under the SSRF guard of every outgoing call (src/lib/guarded-fetch.ts: https,
// a host that is and resolves only to public addresses, the connection made to the address checked, no
// redirect followed, one deadline for the whole call, body included, a small body).
// REPUTATION_ALLOW_HTTP_LOOPBACK (tests only) also allows loopback addresses, and http:// to them.
//
// Not fetchPublicJson: a DoH answer is a binary DNS message, asked for with `accept:
// application/dns-message`, where that one reads JSON under `accept: application/json` only.
//
// sendToService is the same guard for a POST whose answer is any status (the webhook dispatcher): the
// status and at most `maxBytes` of the body, the rest never read.
import { guardedFetch, GuardedFetchError, type Resolve } from '../../lib/guarded-fetch'

export type { Resolve } from '../../lib/guarded-fetch'

/** A DNS message is at most 64 KB (RFC 8484 §6); a Web Risk answer is a few hundred bytes. */
const MAX_ANSWER_BYTES = 64 * 1024

export interface ServiceFetchOptions {
  accept: string
  allowHttpLoopback: boolean
  timeoutMs: number
  resolve?: Resolve
}

/** Why a service was not asked or did not answer; the message names no address and no part of the URL (its query may hold a key). */
export class ServiceFetchError extends Error {}

/** The guard's refusals and failures in this module's words: a service is used, and answers. */
function serviceError(error: unknown, url: URL, timeoutMs: number): unknown {
  if (!(error instanceof GuardedFetchError)) return error
  switch (error.reason) {
    case 'scheme':
      return new ServiceFetchError(`${url.protocol} is not used; use https`)
    case 'http':
      return new ServiceFetchError('http is not used; use https')
    case 'http-not-loopback':
      return new ServiceFetchError('http is used on loopback addresses only')
    case 'resolves-non-public':
      return new ServiceFetchError('the host is not a public address')
    case 'too-large':
      return new ServiceFetchError(`answered more than ${MAX_ANSWER_BYTES / 1024} KB`)
    case 'timeout':
      return new ServiceFetchError(`did not answer within ${timeoutMs / 1000} s`)
    case 'failed':
      return new ServiceFetchError('could not be reached (connection or TLS failure)')
    default: // not-public, unresolved, no-address, stopped: as the guard says them
      return new ServiceFetchError(error.message)
  }
}

/** The body of a 200 answer from `url`; anything else is a ServiceFetchError. */
export async function fetchService(url: URL, options: ServiceFetchOptions): Promise<Uint8Array> {
  try {
    const response = await guardedFetch(url, options)
    if (response.status !== 200) {
      response.discard()
      throw new ServiceFetchError(`answered HTTP ${response.status}${response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : ''}`)
    }
    return await response.bytes(MAX_ANSWER_BYTES)
  } catch (error) {
    throw serviceError(error, url, options.timeoutMs)
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

/**
 * A request to `url` under the guard, answered with whatever status it gets (a redirect is an answer,
 * never followed) and the first maxBytes of its body; a refusal, timeout or connection failure is a
 * ServiceFetchError.
 */
export async function sendToService(url: URL, options: ServiceSendOptions): Promise<{ status: number; body: Uint8Array }> {
  try {
    const response = await guardedFetch(url, options)
    return { status: response.status, body: await response.prefix(options.maxBytes) }
  } catch (error) {
    throw serviceError(error, url, options.timeoutMs)
  }
}
