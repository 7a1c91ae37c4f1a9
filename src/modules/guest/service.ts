// Guest sessions: what a gt_ token unlocks. The token is shown once and stored only as its SHA-256;
// the limits are counted atomically in Postgres so concurrent requests cannot overshoot them.
import { and, eq, gt, lt, sql } from 'drizzle-orm'
import { guestSessions } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'

/** DESIGN.md "Guest limits"; returned to the client as `limits`. */
export const GUEST_LIMITS = { max_links: 10, max_requests: 100, expires_in_seconds: 86_400 } as const
/** POST /guest/token: 10 an hour per client IP (DESIGN.md). */
export const GUEST_TOKEN_RATE = { limit: 10, windowMs: 3_600_000 } as const

export const GUEST_TOKEN_PREFIX = 'gt_'
/** 32 random bytes: 43 base64url characters after the prefix. */
const TOKEN_BYTES = 32

export interface GuestSession {
  id: string
  expiresAt: Date
  requestCount: number
  linkCount: number
}

export function randomId(prefix: string, bytes = 16): string {
  return prefix + Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('base64url')
}

export function hashToken(token: string): string {
  return new Bun.CryptoHasher('sha256').update(token).digest('hex')
}

export function upgradeUrl(services: Services): string {
  return `${services.config.publicApiUrl}/api/v1/guest/register`
}

export async function createGuestSession(services: Services): Promise<{ token: string; session: GuestSession }> {
  const token = randomId(GUEST_TOKEN_PREFIX, TOKEN_BYTES)
  const now = services.now()
  const [session] = await services.db
    .insert(guestSessions)
    .values({
      id: randomId('guest_'),
      tokenHash: hashToken(token),
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
  const tokenHash = hashToken(token)
  const [counted] = await services.db
    .update(guestSessions)
    .set({ requestCount: sql`${guestSessions.requestCount} + 1` })
    .where(
      and(
        eq(guestSessions.tokenHash, tokenHash),
        gt(guestSessions.expiresAt, now),
        lt(guestSessions.requestCount, GUEST_LIMITS.max_requests),
      ),
    )
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
    upgrade_url: upgradeUrl(services),
    // A hard cap: the only thing that lifts it is a new token (or registering).
    retryAfter: secondsUntil(existing.expiresAt, now),
    meta: { account_type: 'guest', usage: guestUsage(existing) },
  })
}

/**
 * Counts one link against the session inside the caller's transaction; throws GUEST_LINK_LIMIT when
 * the session already has max_links.
 */
export async function countGuestLink(
  services: Services,
  tx: Pick<Services['db'], 'update'>,
  session: GuestSession,
): Promise<GuestSession> {
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
    upgrade_url: upgradeUrl(services),
    retryAfter: secondsUntil(session.expiresAt, new Date(services.now())),
    meta: { account_type: 'guest', usage: guestUsage(full) },
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

export function guestUpgrade(services: Services) {
  return {
    url: upgradeUrl(services),
    message: 'Register with POST /api/v1/guest/register {email} and verify to keep your links and lift the limits.',
  }
}

function secondsUntil(at: Date, now: Date): number {
  return Math.max(1, Math.ceil((at.getTime() - now.getTime()) / 1000))
}
