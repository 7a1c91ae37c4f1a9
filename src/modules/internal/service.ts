import { and, eq } from 'drizzle-orm'
import type { CachedLink } from '../../../core/link-cache'
import { links } from '../../db/schema'
import { enforceRateLimit } from '../../plugins/client'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { findLinkWithPlan, recordOf, syncLinkCache } from '../links/cache'
import { normalizeHost } from '../links/url'

/**
 * The redirector's cache-miss path: the link as the cache holds it, refilled into the cache on the way.
 * Expired and not-yet-active links are returned as they are; the redirector decides 410/404 itself.
 */
export async function resolveLink(services: Services, domain: string, alias: string): Promise<CachedLink> {
  const row = await findLinkWithPlan(services, and(eq(links.domain, normalizeHost(domain)), eq(links.alias, alias)))
  if (!row) throw new ApiError('LINK_NOT_FOUND')
  const record = recordOf(row)
  // No publish: nothing changed, only the cache was cold (unless the check after the write finds that
  // the link changed meanwhile). Not awaited: with Redis down the refill would spend its timeout on the
  // redirector's miss path, and the answer does not depend on it.
  void syncLinkCache(services, row, record, { publish: false })
  return record
}

/**
 * Password attempts per client IP and link: 5 per 15 minutes. Every attempt counts, right ones too:
 * the limiter is consulted before the hash is checked, so it bounds guesses and argon2 work alike.
 */
export const UNLOCK_RATE = { limit: 5, windowMs: 15 * 60_000 } as const

/**
 * Password attempts per link, from all addresses together: 30 per 15 minutes. Many addresses (a botnet,
 * rotating proxies) each within the per-IP limit still guess at most 30 times a window; the link is then
 * locked until the window ends (429 with Retry-After), for everyone: the price of a bound on guessing.
 */
export const UNLOCK_LINK_RATE = { limit: 30, windowMs: 15 * 60_000 } as const

/**
 * Checks the password of a protected link for the redirector. Returns the link's current record when
 * it is right (or when the link has no password any more); 401 PASSWORD_INCORRECT when wrong; 429
 * RATE_LIMITED (Retry-After) past UNLOCK_RATE. The password is never stored, logged or echoed.
 */
export async function unlockLink(services: Services, input: { link_id: string; password: string; ip: string }): Promise<CachedLink> {
  const row = await findLinkWithPlan(services, eq(links.id, input.link_id))
  if (!row) throw new ApiError('LINK_NOT_FOUND')
  await enforceRateLimit(services.limiter, `unlock:${row.id}:${input.ip}`, UNLOCK_RATE.limit, UNLOCK_RATE.windowMs, services.now())
  await enforceRateLimit(services.limiter, `unlock:${row.id}`, UNLOCK_LINK_RATE.limit, UNLOCK_LINK_RATE.windowMs, services.now())
  if (row.passwordHash && !(await passwordMatches(input.password, row.passwordHash))) {
    throw new ApiError('PASSWORD_INCORRECT')
  }
  return recordOf(row)
}

async function passwordMatches(password: string, hash: string): Promise<boolean> {
  try {
    return await Bun.password.verify(password, hash)
  } catch {
    // An unreadable hash matches nothing.
    return false
  }
}
