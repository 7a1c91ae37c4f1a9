import { timingSafeEqual } from 'node:crypto'
import type { CachedLink } from '../../core/link-cache'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { toCachedLink, writeThrough } from '../links/cache'
import { findLink } from '../links/service'

/** Constant-time comparison of the shared secret (hashing first makes the lengths equal). */
export function secretMatches(given: string | null, expected: string): boolean {
  if (given === null) return false
  const a = new Bun.CryptoHasher('sha256').update(given).digest()
  const b = new Bun.CryptoHasher('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}

/**
 * The redirector's cache-miss path: the link as the cache holds it, refilled into the cache on the way.
 * Expired and not-yet-active links are returned as they are; the redirector decides 410/404 itself.
 */
export async function resolveLink(services: Services, domain: string, alias: string): Promise<CachedLink> {
  const row = await findLink(services, domain, alias)
  if (!row) throw new ApiError('LINK_NOT_FOUND')
  const record = toCachedLink(row)
  // No publish: nothing changed, only the cache was cold. Not awaited: with Redis down the refill would
  // spend its timeout on the redirector's miss path, and the answer does not depend on it.
  void writeThrough(services, row, record, { publish: false })
  return record
}
