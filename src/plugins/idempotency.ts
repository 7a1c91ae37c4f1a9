// Idempotency-Key as a route option (docs/api.md#idempotency): a client that may
// retry a mutation sends `Idempotency-Key: <1-255 printable ASCII>`, and a retry never runs it twice.
//
// Usage, on a route that also has `auth` (the key is scoped to the credential the auth macro resolved):
//
//   new Elysia({ name: 'modules.links' })
//     .use(errors)
//     .use(auth.plugin)
//     .use(idempotencyPlugin(services))
//     .post('/api/v1/shorten', handler, {
//       guestOrAccount: { scopes: ['links:write'], operation: 'links.create', dryRun: true },
//       idempotent: true,
//       response: { 200: 'LinkResponse', ...errorResponses('ALIAS_TAKEN') },
//     })
//
// `idempotent: false` is the same as leaving the option out.
//
// What a request with the header gets:
// - first use of the key (per credential: guest session or API key id): the route runs; a 2xx or 4xx
//   answer is stored for 24 h. 5xx, and 429 (nothing was done; "retry later" must not be replayed for a
//   day) give the key up again so a retry runs.
// - same key, same method, path, query and body: the stored status and body again, with
//   `Idempotent-Replayed: true` (the X-RateLimit-* headers are the replaying request's own).
// - same key, anything else different: 400 IDEMPOTENCY_KEY_REUSED.
// - same key while the first request still runs: 409 IDEMPOTENCY_IN_PROGRESS with Retry-After: 1.
//   A request that dies without answering holds the key only for its lease (60 s).
// - a malformed key: 400 VALIDATION_FAILED. No header: the route runs as if it had no option.
// - a dry run its route honours (plugins/query.ts, a preview that writes nothing): the key is neither
//   claimed nor stored.
//
// Order of hooks: the auth macro resolves `principal` in its resolve step, and Elysia runs a route's
// resolve functions before its beforeHandle ones whatever the order of the options, so the claim
// below always sees the principal. The response is captured in mapResponse, which runs for handler
// results and for the error responses of plugins/errors.ts alike, after response validation.
import { Elysia, ElysiaCustomStatusResponse, StatusMap } from 'elysia'
import type { IdempotencyStore, StoredResponse } from '../adapters/ports'
import type { Services } from '../services'
import type { Principal } from './auth'
import { ApiError } from './errors'
import { isDryRun } from './query'

/** Keys are kept 24 h (docs/decisions/0004-idempotency-key.md). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
/**
 * How long an unfinished request holds its key. Far above any request's real duration (Bun.serve
 * closes a connection idle for 10 s by default), so a slow request is not run twice; short enough that
 * a key whose process crashed frees itself within a minute.
 */
export const IDEMPOTENCY_LEASE_MS = 60_000

export const IDEMPOTENCY_HEADER = 'idempotency-key'
export const REPLAYED_HEADER = 'idempotent-replayed'
/** 1 to 255 printable ASCII characters (space to tilde). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/
/** Headers of the first response that describe its body; everything else belongs to each request. */
const STORED_HEADERS = ['content-type', 'cache-control', 'location']

export interface IdempotencyOptions {
  /** How long a finished request's response is replayed. */
  ttlMs?: number
  /** How long an unfinished request holds its key. */
  leaseMs?: number
}

type Claim = { storeKey: string; token: string; settled: boolean }

export function idempotencyPlugin(services: Pick<Services, 'idempotency'>, options: IdempotencyOptions = {}) {
  const store = services.idempotency
  const ttlMs = options.ttlMs ?? IDEMPOTENCY_TTL_MS
  const leaseMs = options.leaseMs ?? IDEMPOTENCY_LEASE_MS
  // The claim of a request that is running; hooks of one request share it through the Request.
  const claims = new WeakMap<Request, Claim>()

  return new Elysia({ name: 'plugins.idempotency' }).macro({
    idempotent: (enabled: boolean) => {
      // Not undefined (Elysia 1.4 would then skip the route's remaining macros) and not {} (the option
      // would stay on the route, and Elysia then drops the auth macro's hooks when the module is mounted):
      // a hook with a detail is applied and removes the option. idempotency.test.ts checks it.
      if (!enabled) return { detail: {} }
      return {
        // Read by docs: the operation accepts the Idempotency-Key header.
        detail: { 'x-idempotent': true } as Record<string, unknown>,
        async beforeHandle(context) {
          const { request, body } = context
          const key = request.headers.get(IDEMPOTENCY_HEADER)
          if (key === null) return
          if (!KEY_PATTERN.test(key)) {
            throw new ApiError('VALIDATION_FAILED', 'headers.idempotency-key: must be 1 to 255 printable ASCII characters')
          }
          // A dry run writes nothing, the idempotency store included: the key stays free for the real call.
          if (isDryRun(request)) return
          const principal = (context as { principal?: Principal }).principal
          if (!principal) throw new Error('idempotent: true needs the auth macro on the same route (the key is scoped to the credential)')
          const storeKey = `${credentialScope(principal)}:${sha256(key)}`
          const fingerprint = requestFingerprint(request, body)
          const claim = await claimOr503(store, storeKey, fingerprint, leaseMs)
          if (claim.state === 'claimed') {
            claims.set(request, { storeKey, token: claim.token, settled: false })
            return
          }
          if (claim.fingerprint !== fingerprint) throw new ApiError('IDEMPOTENCY_KEY_REUSED')
          if (claim.state === 'in_flight') throw new ApiError('IDEMPOTENCY_IN_PROGRESS', undefined, { retryAfter: 1 })
          return replay(claim.response)
        },
        async mapResponse({ request, responseValue, set }) {
          const claim = claims.get(request)
          if (!claim || claim.settled) return
          claim.settled = true
          const captured = await capture(responseValue, set)
          if (!captured || !isStorable(captured.stored.status)) {
            await store.release(claim.storeKey, claim.token).catch(() => {}) // the lease ends it otherwise
            return
          }
          try {
            await store.complete(claim.storeKey, claim.token, captured.stored, ttlMs)
          } catch {
            // The work is done and the client gets its answer; a retry meets 409 until the lease ends.
          }
          return captured.response
        },
        // Whatever path the request took (an exception after mapResponse, a dropped connection), a claim
        // that was neither stored nor released is given up once the response is over.
        async afterResponse({ request }) {
          const claim = claims.get(request)
          if (!claim || claim.settled) return
          claim.settled = true
          await store.release(claim.storeKey, claim.token).catch(() => {})
        },
      }
    },
  })
}

/** Whose key it is: the credential the auth plugin resolved (a guest session, an API key). */
function credentialScope(principal: Principal): string {
  return principal.credentialId
}

/** Method, path, query (order-insensitive) and the hash of the parsed body: "the same payload". */
function requestFingerprint(request: Request, body: unknown): string {
  const url = new URL(request.url)
  const query = [...url.searchParams].sort(([a, x], [b, y]) => (a === b ? compare(x, y) : compare(a, b)))
  return sha256(JSON.stringify([request.method, url.pathname, query, sha256(JSON.stringify(body ?? null))]))
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const sha256 = (text: string) => new Bun.CryptoHasher('sha256').update(text).digest('hex')

/** 2xx and 4xx are answers a retry must get again; a 429 did nothing and asks for a later retry. */
const isStorable = (status: number) => (status >= 200 && status < 300) || (status >= 400 && status < 500 && status !== 429)

async function claimOr503(store: IdempotencyStore, key: string, fingerprint: string, leaseMs: number) {
  try {
    return await store.claim(key, fingerprint, leaseMs)
  } catch {
    // Running without the claim could run a retried mutation twice: fail closed, like the limiter.
    throw new ApiError('SERVICE_UNAVAILABLE', 'The idempotency store is unavailable; retry shortly.', { retryAfter: 1 })
  }
}

function replay(stored: StoredResponse): Response {
  return new Response(stored.body === '' ? null : stored.body, {
    status: stored.status,
    headers: { ...stored.headers, [REPLAYED_HEADER]: 'true' },
  })
}

/**
 * The response as it will be sent, and stored. A handler's value is serialised here, as Elysia would
 * (JSON for objects, text for strings), and sent as this Response, so the stored bytes are exactly the
 * ones the first caller received. A Response (the error mapping's) is read from a clone and sent as is.
 * Null when the value is not something we can store (a stream, a file): the key is then given up.
 */
async function capture(value: unknown, set: { status?: number | string; headers: Record<string, unknown> }): Promise<{ stored: StoredResponse; response?: Response } | null> {
  if (value instanceof Response) {
    const headers: Record<string, string> = {}
    for (const name of STORED_HEADERS) {
      const header = value.headers.get(name)
      if (header !== null) headers[name] = header
    }
    return { stored: { status: value.status, headers, body: await value.clone().text() } }
  }
  let status = statusCode(set.status)
  if (value instanceof ElysiaCustomStatusResponse) {
    status = statusCode(value.code)
    value = value.response
  }
  let stored: StoredResponse
  if (value === undefined || value === null) stored = { status, headers: {}, body: '' }
  else if (typeof value === 'string') stored = { status, headers: { 'content-type': 'text/plain;charset=utf-8' }, body: value }
  else if (typeof value === 'number' || typeof value === 'boolean' || isPlainJson(value)) {
    stored = { status, headers: { 'content-type': 'application/json;charset=utf-8' }, body: JSON.stringify(value) }
  } else return null
  // Representation headers the handler set itself (a Location, its own content type) are part of it.
  for (const name of STORED_HEADERS) if (typeof set.headers[name] === 'string') stored.headers[name] = set.headers[name]
  return { stored, response: new Response(stored.body === '' ? null : stored.body, { status, headers: stored.headers }) }
}

function isPlainJson(value: unknown): boolean {
  if (Array.isArray(value)) return true
  if (typeof value !== 'object' || value === null) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

function statusCode(status: number | string | undefined): number {
  if (typeof status === 'number') return status
  if (status === undefined) return 200
  return (StatusMap as Record<string, number>)[status] ?? 200
}
