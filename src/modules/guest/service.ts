// Guest sessions: what a gt_ token unlocks. The token is shown once and stored only as its SHA-256;
// the limits are counted atomically in Postgres so concurrent requests cannot overshoot them.
import { and, eq, gt, lt, sql } from 'drizzle-orm'
import { guestSessions } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { GuestPrincipal, Principal } from '../../plugins/auth'
import { rateLimitHeaders } from '../../plugins/client'
import type { Services } from '../../services'
import { newId } from '../../lib/ids'
import { hashSecret, newToken, TOKEN_PREFIXES } from '../../lib/secrets'
import { GUEST_LIMITS } from './model'

/** POST /guest/token: 10 an hour per client IP (docs/decisions/0002-guest-limits.md). */
export const GUEST_TOKEN_RATE = { limit: 10, windowMs: 3_600_000 } as const

export const GUEST_TOKEN_PREFIX = TOKEN_PREFIXES.guest

export type GuestSession = GuestPrincipal

/** Where a guest goes to keep its links and lift the limits: registration. */
export function registerUrl(services: Pick<Services, 'config'>): string {
  return `${services.config.publicApiUrl}/api/v1/guest/register`
}

export async function createGuestSession(services: Services): Promise<{ token: string; session: GuestSession }> {
  const token = newToken('guest')
  const now = services.now()
  const [session] = await services.db
    .insert(guestSessions)
    .values({
      id: newId('guest'),
      tokenHash: hashSecret(token),
      expiresAt: new Date(now + GUEST_LIMITS.expires_in_seconds * 1000),
      createdAt: new Date(now),
    })
    .returning()
  return { token, session: session! }
}

const sessionColumns = {
  id: guestSessions.id,
  expiresAt: guestSessions.expiresAt,
  requestCount: guestSessions.requestCount,
  linkCount: guestSessions.linkCount,
}

/**
 * Authenticates a gt_ token and counts the request in the same statement: the row is only updated
 * while the token is live and under max_requests, so a hundred parallel requests cannot make 101.
 */
export async function authenticateGuest(services: Services, token: string): Promise<GuestSession> {
  const now = new Date(services.now())
  const tokenHash = hashSecret(token)
  const [counted] = await services.db
    .update(guestSessions)
    .set({ requestCount: sql`${guestSessions.requestCount} + 1` })
    .where(and(eq(guestSessions.tokenHash, tokenHash), gt(guestSessions.expiresAt, now), lt(guestSessions.requestCount, GUEST_LIMITS.max_requests)))
    .returning(sessionColumns)
  if (counted) return counted

  // Not counted: unknown, expired, or out of requests. Only the last is not a 401.
  const [existing] = await services.db.select(sessionColumns).from(guestSessions).where(eq(guestSessions.tokenHash, tokenHash))
  if (!existing) throw new ApiError('UNAUTHORIZED', 'Unknown guest token; get a new one from POST /api/v1/guest/token.')
  if (existing.expiresAt <= now) {
    throw new ApiError('UNAUTHORIZED', 'This guest token has expired; get a new one from POST /api/v1/guest/token.')
  }
  throw new ApiError('GUEST_REQUEST_LIMIT', undefined, {
    limit: GUEST_LIMITS.max_requests,
    remaining: 0,
    upgrade_url: registerUrl(services),
    // A hard cap: the only thing that lifts it is a new token (or registering).
    retryAfter: secondsUntil(existing.expiresAt, now),
    meta: guestMeta(services, existing),
  })
}

/** The principal of a gt_ token: a live session under its request quota, which is its X-RateLimit window. */
export async function guestPrincipal(services: Services, token: string): Promise<Principal> {
  const guest = await authenticateGuest(services, token)
  const quota = GUEST_LIMITS.max_requests
  const resetAt = Math.ceil(guest.expiresAt.getTime() / 1000)
  const rateHeaders = rateLimitHeaders({ limit: quota, remaining: quota - guest.requestCount, resetAt })
  return { kind: 'guest', guest, rateHeaders, credentialId: `gt:${guest.id}` }
}

/**
 * Counts one link against the session inside the caller's transaction; throws GUEST_LINK_LIMIT when
 * the session already has max_links.
 */
export async function countGuestLink(services: Services, tx: Pick<Services['db'], 'update'>, session: GuestSession): Promise<GuestSession> {
  const [counted] = await tx
    .update(guestSessions)
    .set({ linkCount: sql`${guestSessions.linkCount} + 1` })
    .where(and(eq(guestSessions.id, session.id), lt(guestSessions.linkCount, GUEST_LIMITS.max_links)))
    .returning(sessionColumns)
  if (counted) return counted
  const full = { ...session, linkCount: GUEST_LIMITS.max_links }
  throw new ApiError('GUEST_LINK_LIMIT', undefined, {
    limit: GUEST_LIMITS.max_links,
    remaining: 0,
    upgrade_url: registerUrl(services),
    retryAfter: secondsUntil(session.expiresAt, new Date(services.now())),
    meta: guestMeta(services, full),
  })
}

export function guestUsage(session: GuestSession) {
  return {
    links_created: session.linkCount,
    links_remaining: Math.max(0, GUEST_LIMITS.max_links - session.linkCount),
    requests_made: session.requestCount,
    requests_remaining: Math.max(0, GUEST_LIMITS.max_requests - session.requestCount),
    expires_at: session.expiresAt.toISOString(),
  }
}

export function guestUpgrade(services: Pick<Services, 'config'>) {
  return {
    url: registerUrl(services),
    message: 'Register with POST /api/v1/guest/register {email} and verify to keep your links and lift the limits.',
  }
}

/** The meta of every response to a guest token, in one shape: usage, notices and the way up. */
export function guestMeta(services: Pick<Services, 'config'>, guest: GuestSession, extra: { hint?: string; notices?: object[]; limitations?: string[] } = {}) {
  return {
    account_type: 'guest',
    ...(extra.hint && { hint: extra.hint }),
    usage: guestUsage(guest),
    notices: extra.notices ?? [],
    ...(extra.limitations && { limitations: extra.limitations }),
    upgrade: guestUpgrade(services),
  }
}

function secondsUntil(at: Date, now: Date): number {
  return Math.max(1, Math.ceil((at.getTime() - now.getTime()) / 1000))
}
