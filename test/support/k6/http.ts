// The stand-in of `k6/http` for the stand-in runs (bench/k6/k6.test.ts): the calls the bench scripts
// make, with k6's semantics where a script could drift from the API unnoticed: an object body is sent
// form-encoded (k6 does), a string as is with no Content-Type added, redirects followed unless
// `redirects: 0` or options.maxRedirects is 0, response headers under Go's canonical names
// (`Location`, `Content-Type`), no body under discardResponseBodies, every status outside the
// response callback's (default 200-399) a failed request.
import { state } from './state'

type Body = string | Record<string, unknown> | ArrayBuffer | null | undefined
interface Params {
  headers?: Record<string, string>
  tags?: Record<string, string>
  redirects?: number
  responseType?: 'text' | 'binary' | 'none'
  timeout?: string | number
}

/** Go's canonical header name: content-type → Content-Type. */
export function canonicalHeader(name: string): string {
  return name
    .toLowerCase()
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('-')
}

function encodeBody(body: Body, headers: Record<string, string>): Uint8Array | undefined {
  if (body === null || body === undefined) return undefined
  if (typeof body === 'string') return new TextEncoder().encode(body)
  if (body instanceof ArrayBuffer) return new Uint8Array(body)
  // k6: an object body is a form, whatever the script meant.
  const form = new URLSearchParams(Object.entries(body).map(([k, v]): [string, string] => [k, String(v)]))
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/x-www-form-urlencoded'
  return new TextEncoder().encode(form.toString())
}

function request(method: string, url: string, body: Body, params: Params = {}) {
  if (state.phase === 'init') throw new Error('k6 makes no request in the init context: move it into setup() or the default function')
  const headers: Record<string, string> = { 'User-Agent': 'k6/1.0 (stand-in; https://k6.io/)', ...params.headers }
  const bytes = encodeBody(body, headers)
  const redirects = params.redirects ?? state.options.maxRedirects ?? 10
  const wire = state.send({
    method,
    url,
    headers,
    body: bytes && Buffer.from(bytes).toString('base64'),
    redirect: redirects === 0 ? 'manual' : 'follow',
    name: params.tags?.name,
  })
  state.requests += 1
  if (wire.error !== undefined || !state.expected(wire.status)) state.failedRequests.push(`${method} ${url}: ${wire.status} ${wire.error ?? wire.body.slice(0, 300)}`)
  const responseHeaders: Record<string, string> = {}
  for (const [name, value] of wire.headers) {
    const key = canonicalHeader(name)
    responseHeaders[key] = responseHeaders[key] === undefined ? value : `${responseHeaders[key]}, ${value}`
  }
  const discard = params.responseType === 'none' || (state.options.discardResponseBodies === true && params.responseType === undefined)
  const responseBody = discard ? null : wire.body
  return {
    status: wire.status,
    status_text: String(wire.status),
    url: wire.url,
    proto: 'HTTP/1.1',
    headers: responseHeaders,
    body: responseBody,
    cookies: {},
    error: wire.error ?? '',
    error_code: wire.error === undefined ? 0 : 1000,
    timings: { duration: wire.durationMs, waiting: wire.durationMs, blocked: 0, connecting: 0, tls_handshaking: 0, sending: 0, receiving: 0 },
    request: { method, url, headers, body: bytes ? new TextDecoder().decode(bytes) : '' },
    json(selector?: string) {
      if (responseBody === null) throw new Error('the response has no body (discardResponseBodies or responseType none)')
      if (selector !== undefined) throw new Error('json(selector) is not in the stand-in')
      return JSON.parse(responseBody)
    },
  }
}

export type ResponseCallback = { statuses: number[]; ranges: { min: number; max: number }[] }

export function expectedStatuses(...wanted: (number | { min: number; max: number })[]): ResponseCallback {
  return { statuses: wanted.filter((w): w is number => typeof w === 'number'), ranges: wanted.filter((w): w is { min: number; max: number } => typeof w !== 'number') }
}

export function setResponseCallback(callback: ResponseCallback | null): void {
  state.expected = callback === null ? () => true : (status) => callback.statuses.includes(status) || callback.ranges.some((r) => status >= r.min && status <= r.max)
}

const unsupported = (name: string) => () => {
  throw new Error(`http.${name} is not in the stand-in (test/support/k6/http.ts): add it before a script uses it`)
}

const http = {
  get: (url: string, params?: Params) => request('GET', url, null, params),
  head: (url: string, params?: Params) => request('HEAD', url, null, params),
  options: (url: string, body?: Body, params?: Params) => request('OPTIONS', url, body, params),
  post: (url: string, body?: Body, params?: Params) => request('POST', url, body, params),
  put: (url: string, body?: Body, params?: Params) => request('PUT', url, body, params),
  patch: (url: string, body?: Body, params?: Params) => request('PATCH', url, body, params),
  del: (url: string, body?: Body, params?: Params) => request('DELETE', url, body, params),
  request: (method: string, url: string, body?: Body, params?: Params) => request(method.toUpperCase(), url, body, params),
  expectedStatuses,
  setResponseCallback,
  batch: unsupported('batch'),
  asyncRequest: unsupported('asyncRequest'),
  file: unsupported('file'),
}

export default http
export const { get, head, post, put, patch, del } = http
export { request }
