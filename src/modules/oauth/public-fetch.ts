// A GET of a JSON document at a URL chosen by whoever sends a request (a client metadata document, a
// client's key set), under the SSRF guard of every outgoing call (src/lib/guarded-fetch.ts: https, a
// host that is and resolves only to public addresses, the connection made to the address checked, no
// redirect followed), within 5 s for the whole of it and 64 KB at most read. Refusals are invalid_client.
import { guardedFetch, GuardedFetchError, type GuardedFetchReason, type Resolve } from '../../lib/guarded-fetch'
import { OAuthError } from '../../plugins/oauth-errors'

export type { Resolve } from '../../lib/guarded-fetch'

/** 5 s and 64 KB for a metadata document or key set (docs/agents-and-mcp.md). The CIMD draft suggests reading 5 KB; 64 KB leaves room for long lists. */
const FETCH_TIMEOUT_MS = 5_000
const MAX_DOCUMENT_BYTES = 64 * 1024
/** Cache-Control max-age is honoured within these bounds (the CIMD draft lets the server set them). */
const MIN_TTL_MS = 60_000
const MAX_TTL_MS = 3_600_000
const DEFAULT_TTL_MS = 300_000

export interface FetchOptions {
  resolve?: Resolve
  /** Budget of the whole fetch, resolution and body included. Default 5 s. */
  timeoutMs?: number
}

/** How refusals name what was fetched: `client_id: the metadata document`, `jwks_uri: the key set`. */
export type Subject = string

const refusal = (description: string) => new OAuthError('invalid_client', description)

/** What follows the subject in a refusal. The URL was checked before (https, or http to loopback under the test setting). */
function refusalWords(reason: GuardedFetchReason, budgetMs: number): string {
  switch (reason) {
    case 'unresolved':
      return 'host could not be resolved.'
    case 'no-address':
      return 'host has no address.'
    case 'resolves-non-public':
      return 'host resolves to a non-public address.'
    case 'too-large':
      return `is larger than ${MAX_DOCUMENT_BYTES / 1024} KB.`
    case 'timeout':
    case 'stopped':
      return `was not fetched within ${budgetMs / 1000} s.`
    case 'failed':
      return 'could not be fetched (connection or TLS failure).'
    default: // scheme, http, http-not-loopback, not-public
      return 'host is not a public address.'
  }
}

/** RFC 9111 freshness from Cache-Control max-age (less Age), within [MIN_TTL_MS, MAX_TTL_MS]. */
function lifetimeMs(headers: Headers): number {
  const directives = (headers.get('cache-control') ?? '')
    .toLowerCase()
    .split(',')
    .map((d) => d.trim())
  if (directives.includes('no-store') || directives.includes('no-cache')) return MIN_TTL_MS
  const maxAge = directives.map((d) => /^max-age="?(\d+)"?$/.exec(d)).find((m) => m !== null)
  if (!maxAge) return DEFAULT_TTL_MS
  const age = Number(headers.get('age')) || 0
  return Math.min(MAX_TTL_MS, Math.max(MIN_TTL_MS, (Number(maxAge[1]) - age) * 1000))
}

/** The JSON of `url` (already checked as a URL) and how long it may be cached; refusals are invalid_client. */
export async function fetchPublicJson(url: URL, allowLoopback: boolean, subject: Subject, options: FetchOptions = {}): Promise<{ json: unknown; ttlMs: number }> {
  const timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS
  let body: Uint8Array
  let ttlMs: number
  try {
    const response = await guardedFetch(url, { accept: 'application/json', allowHttpLoopback: allowLoopback, timeoutMs, resolve: options.resolve })
    if (response.status !== 200) {
      response.discard()
      if (response.status >= 300 && response.status < 400) throw refusal(`${subject} URL redirects; redirects are not followed.`)
      throw refusal(`${subject} URL answered HTTP ${response.status}, not 200.`)
    }
    ttlMs = lifetimeMs(response.headers)
    body = await response.bytes(MAX_DOCUMENT_BYTES)
  } catch (error) {
    throw error instanceof GuardedFetchError ? refusal(`${subject} ${refusalWords(error.reason, timeoutMs)}`) : error
  }
  try {
    return { json: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)), ttlMs }
  } catch {
    throw refusal(`${subject} is not JSON.`)
  }
}
