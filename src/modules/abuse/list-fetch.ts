// A GET of a block list at a URL of BLOCKLIST_URLS, under the SSRF guard of every outgoing call
// (src/lib/guarded-fetch.ts: https, a host that is and resolves only to public addresses, the
// connection made to the address checked, no redirect followed, one deadline, body included).
// BLOCKLIST_ALLOW_HTTP_LOOPBACK (tests only) also allows loopback addresses, and http:// to them. Unlike
// a metadata document a list is large, so the body is handed on as text while it streams, up to maxBytes
// (tens of MB), within one deadline.
//
// Conditional: with the validators of the last list accepted, a 304 says the list is unchanged.
import { guardedFetch, GuardedFetchError, type GuardedResponse, type Resolve } from '../../lib/guarded-fetch'

export type { Resolve } from '../../lib/guarded-fetch'

/** A list on a slow link: its whole download, body included, gets this long. */
export const LIST_FETCH_TIMEOUT_MS = 120_000
/** Large domain lists are tens of MB (a million hosts is about 25 MB); past this the list is refused. */
export const MAX_LIST_BYTES = 64 * 1024 * 1024

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

/** The guard's words are the list's, but for the bound, which is the list's own. */
function listError(error: unknown, maxBytes: number): unknown {
  if (!(error instanceof GuardedFetchError)) return error
  return new ListFetchError(error.reason === 'too-large' ? `the list is larger than ${Math.round(maxBytes / 1024 / 1024)} MB` : error.message)
}

async function* listText(text: AsyncIterable<string>, maxBytes: number): AsyncGenerator<string> {
  try {
    yield* text
  } catch (error) {
    throw listError(error, maxBytes)
  }
}

/** The list at `url`, or { modified: false } on a 304; a refusal or failure is a ListFetchError. */
export async function fetchList(url: URL, options: ListFetchOptions): Promise<ListResponse> {
  const maxBytes = options.maxBytes ?? MAX_LIST_BYTES
  const headers: Record<string, string> = {}
  if (options.validators?.etag) headers['if-none-match'] = options.validators.etag
  if (options.validators?.lastModified) headers['if-modified-since'] = options.validators.lastModified
  const request = {
    accept: 'text/plain, text/csv;q=0.9, */*;q=0.5',
    headers,
    allowHttpLoopback: options.allowHttpLoopback,
    timeoutMs: options.timeoutMs ?? LIST_FETCH_TIMEOUT_MS,
    resolve: options.resolve,
    signal: options.signal,
  }
  let response: GuardedResponse
  try {
    response = await guardedFetch(url, request)
  } catch (error) {
    throw listError(error, maxBytes)
  }
  if (response.status === 304 && (options.validators?.etag || options.validators?.lastModified)) return { modified: false }
  if (response.status !== 200 || !response.hasBody) {
    response.discard()
    if (response.status >= 300 && response.status < 400) throw new ListFetchError(`answered HTTP ${response.status}; redirects are not followed, give the final URL`)
    throw new ListFetchError(`answered HTTP ${response.status}, not 200`)
  }
  const validators: Validators = {}
  const etag = response.headers.get('etag')
  const lastModified = response.headers.get('last-modified')
  if (etag) validators.etag = etag
  if (lastModified) validators.lastModified = lastModified
  return { modified: true, validators, text: listText(response.text(maxBytes), maxBytes) }
}
