// Bearer authentication as a route option: `{ auth: 'gt' }`, `{ auth: 'gt/mk' }` or `{ auth: 'mk' }`
// (the auth column of spec section 4). The token is checked in the transform step, before body
// validation, so an unauthenticated caller learns nothing about the endpoint but "401". The handler
// receives `principal`.
//
// Token kinds: gt_ guest tokens now; mk_ API keys (and at_ Agent tokens) arrive with registered
// accounts, so until then every non-gt token is refused with 401.
import { Elysia } from 'elysia'
import { authenticateGuest, GUEST_LIMITS, GUEST_TOKEN_PREFIX, type GuestSession } from '../modules/guest/service'
import type { Services } from '../services'
import { rateLimitHeaders } from './client'
import { ApiError } from './errors'

export type AuthMode = 'gt' | 'mk' | 'gt/mk'

export type Principal = { kind: 'guest'; guest: GuestSession }

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
  // mk_ / at_: no registered accounts exist yet, so no such key can be valid.
  throw new ApiError('UNAUTHORIZED', `Invalid or unknown token; this endpoint accepts ${ACCEPTS[mode]}.`)
}

/** X-RateLimit-* for a guest: the request quota of the token, resetting when it expires. */
export function principalRateHeaders(principal: Principal): Record<string, string> {
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
      detail: { security: [{ bearerAuth: [] }] },
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
