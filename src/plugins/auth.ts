// Bearer authentication as a route option: `{ auth: 'gt' }`, `{ auth: 'gt/mk' }` or `{ auth: 'mk' }`
// (the auth column of spec section 4). The token is checked in the transform step, before body
// validation, so an unauthenticated caller learns nothing about the endpoint but "401". The handler
// receives `principal`.
//
// Token kinds: gt_ guest tokens (quota counted in Postgres) and mk_ API keys (rate limited per key:
// 30 a minute on Free, 120 on Pro, across processes through the limiter). at_ Agent tokens arrive
// with OAuth and are refused with 401 until then.
import { Elysia } from 'elysia'
import { API_KEY_PREFIX, authenticateApiKey, type AccountPrincipal } from '../modules/account/keys'
import { PLAN_LIMITS } from '../modules/account/plans'
import { authenticateGuest, GUEST_LIMITS, GUEST_TOKEN_PREFIX, type GuestSession } from '../modules/guest/service'
import type { Services } from '../services'
import { enforceRateLimit, rateLimitHeaders } from './client'
import { ApiError } from './errors'

export type AuthMode = 'gt' | 'mk' | 'gt/mk'

export type Principal =
  | { kind: 'guest'; guest: GuestSession }
  | { kind: 'account'; account: AccountPrincipal; rateHeaders: Record<string, string> }

/** Window of the per-key request limit. */
const KEY_RATE_WINDOW_MS = 60_000

/** `Bearer <token>`: one token, case-insensitive scheme (RFC 6750 / RFC 9110 auth-scheme). */
const BEARER = /^Bearer +(\S+) *$/i
/** What our tokens look like: a known prefix and base64url. Anything else is refused without a lookup. */
const TOKEN = /^(gt|mk|at)_[A-Za-z0-9_-]{16,256}$/

export function readBearer(header: string | null): string {
  if (header === null || header.trim() === '') {
    throw new ApiError('UNAUTHORIZED', 'Missing Authorization header; send Authorization: Bearer <token>.')
  }
  const token = BEARER.exec(header)?.[1]
  if (!token) throw new ApiError('UNAUTHORIZED', 'Malformed Authorization header; expected "Bearer <token>".')
  if (!TOKEN.test(token)) throw new ApiError('UNAUTHORIZED', 'Invalid token.')
  return token
}

const ACCEPTS: Record<AuthMode, string> = {
  gt: 'a guest token (gt_)',
  mk: 'an API key (mk_)',
  'gt/mk': 'a guest token (gt_) or an API key (mk_)',
}

export async function authenticate(services: Services, mode: AuthMode, header: string | null): Promise<Principal> {
  const token = readBearer(header)
  if (token.startsWith(GUEST_TOKEN_PREFIX)) {
    if (mode === 'mk') throw new ApiError('UNAUTHORIZED', `This endpoint needs ${ACCEPTS[mode]}; guest tokens are not accepted.`)
    return { kind: 'guest', guest: await authenticateGuest(services, token) }
  }
  if (token.startsWith(API_KEY_PREFIX)) {
    if (mode === 'gt') throw new ApiError('UNAUTHORIZED', `This endpoint needs ${ACCEPTS[mode]}; API keys are not accepted.`)
    const account = await authenticateApiKey(services, token)
    const limit = PLAN_LIMITS[account.plan].requestsPerMinute
    const rateHeaders = await enforceRateLimit(services.limiter, `key:${account.keyId}`, limit, KEY_RATE_WINDOW_MS, services.now())
    return { kind: 'account', account, rateHeaders }
  }
  // at_: Agent tokens arrive with OAuth; until then no such token can be valid.
  throw new ApiError('UNAUTHORIZED', `Invalid or unknown token; this endpoint accepts ${ACCEPTS[mode]}.`)
}

/** X-RateLimit-*: the per-key window of an API key, or the request quota of a guest token. */
export function principalRateHeaders(principal: Principal): Record<string, string> {
  if (principal.kind === 'account') return principal.rateHeaders
  const { guest } = principal
  return rateLimitHeaders({
    limit: GUEST_LIMITS.max_requests,
    remaining: GUEST_LIMITS.max_requests - guest.requestCount,
    resetAt: Math.ceil(guest.expiresAt.getTime() / 1000),
  })
}

export function authPlugin(services: Services) {
  // transform cannot add typed context, so it leaves the principal here for resolve to hand over.
  const principals = new WeakMap<Request, Principal>()
  return new Elysia({ name: 'plugins.auth' }).macro({
    auth: (mode: AuthMode) => ({
      detail: { security: [{ bearerAuth: [] }], 'x-auth': mode } as Record<string, unknown>,
      async transform({ request, set }) {
        const principal = await authenticate(services, mode, request.headers.get('authorization'))
        Object.assign(set.headers, principalRateHeaders(principal))
        principals.set(request, principal)
      },
      resolve({ request }) {
        const principal = principals.get(request)
        if (!principal) throw new ApiError('UNAUTHORIZED')
        return { principal }
      },
    }),
  })
}
