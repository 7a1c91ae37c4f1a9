// Write-through of a committed link to the shared cache the redirector reads, and the invalidation
// that makes every redirector drop its L1 copy. Best effort: the link is already in Postgres and a
// redirector that misses the cache asks /internal/resolve, so a cache failure never fails a request.
import {
  encodeCachedLink,
  INVALIDATION_CHANNEL,
  LINK_CACHE_TTL_SECONDS,
  LINK_CACHE_VERSION,
  linkCacheKey,
  type CachedLink,
} from '../../core/link-cache'
import type { links } from '../../db/schema'
import type { Services } from '../../services'

type LinkRow = typeof links.$inferSelect

/** Only what a redirect needs; flags only when set; never the password hash. */
export function toCachedLink(row: Pick<LinkRow, 'id' | 'url' | 'expiresAt' | 'activatedAt' | 'passwordHash'>): CachedLink {
  return {
    v: LINK_CACHE_VERSION,
    id: row.id,
    url: row.url,
    ...(row.expiresAt && { exp: row.expiresAt.getTime() }),
    ...(row.activatedAt && { act: row.activatedAt.getTime() }),
    ...(row.passwordHash && { pw: 1 as const }),
  }
}

export async function writeThrough(
  services: Pick<Services, 'kv' | 'counters'>,
  row: Pick<LinkRow, 'domain' | 'alias'>,
  record: CachedLink,
  opts: { publish: boolean },
): Promise<void> {
  const key = linkCacheKey(row.domain, row.alias)
  try {
    await services.kv.set(key, encodeCachedLink(record), LINK_CACHE_TTL_SECONDS)
    if (opts.publish) await services.kv.publish(INVALIDATION_CHANNEL, key)
  } catch {
    services.counters.cacheWriteFailures++
  }
}
