// A request the script's worker hands to the test thread, and the answer, as JSON in a shared buffer:
// k6's http calls are synchronous, fetch is not, and the service under test answers on the test's own
// thread; so the worker blocks on Atomics.wait while the test thread fetches (run.ts).
export interface WireRequest {
  method: string
  url: string
  headers: Record<string, string>
  /** base64 of the bytes sent; absent: no body. */
  body?: string
  redirect: 'manual' | 'follow'
  /** The request's `name` tag, when the script gave one. */
  name?: string
}

export interface WireResponse {
  status: number
  url: string
  headers: [string, string][]
  body: string
  durationMs: number
  error?: string
}

/** Bytes of one answer; a longer one is an error of the stand-in, said so. */
export const WIRE_BYTES = 8 * 1024 * 1024
/** Int32 0: 0 waiting, 1 answered; Int32 1: the answer's length; then the answer's UTF-8 JSON. */
export const WIRE_HEADER = 8
