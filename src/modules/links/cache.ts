// Write-through of a committed link to the shared cache the redirector reads, and the invalidation
// that makes every redirector drop its L1 copy. Best effort: the link is already in Postgres and a
// redirector that misses the cache asks /internal/resolve, so a cache failure never fails a request.
//
// Two writers of one key can finish out of order (two updates, or an update and the resolve endpoint's
// refill of what it read just before the update committed), and a stale record would then live in the
// cache for LINK_CACHE_TTL_SECONDS. So every write is checked against Postgres afterwards: if the row
// no longer yields the record just written, the key is deleted and the next redirect resolves afresh.
// Whatever the interleaving, the last write is followed by its own check, which sees every commit made
// before it; a commit after that check is followed by that writer's own write and check.
import { and, asc, eq, gt, isNull, or, sql, type SQL } from 'drizzle-orm'
import { encodeCachedLink, INVALIDATION_CHANNEL, LINK_CACHE_TTL_SECONDS, linkCacheKey, type CachedLink } from '../../../core/link-cache'
import { accounts, links, type Plan, type LinkRow } from '../../db/schema'
import type { Services } from '../../services'
import { PLAN_FEATURES } from '../../lib/plans'
import { cachedRouting } from './routing'

type CacheFields = Pick<LinkRow, 'id' | 'url' | 'expiresAt' | 'activatedAt' | 'passwordHash'> & Partial<Pick<LinkRow, 'routing' | 'state'>>

/**
 * Only what a redirect needs; flags only when set; never the password hash. `pro` when the owning
 * account's plan has attribution (the redirector then appends the attribution parameters). A link taken
 * down for abuse is version 3, a link with routing version 2, every other link version 1, so an older
 * redirector skips what it could not honour (core/link-cache.ts).
 */
export function toCachedLink(row: CacheFields, pro = false): CachedLink {
  const routing = cachedRouting(row.routing)
  const state = row.state === 'flagged' || row.state === 'disabled' ? row.state : undefined
  return {
    v: state ? 3 : routing ? 2 : 1,
    id: row.id,
    url: row.url,
    ...(row.expiresAt && { exp: row.expiresAt.getTime() }),
    ...(row.activatedAt && { act: row.activatedAt.getTime() }),
    ...(row.passwordHash && { pw: 1 as const }),
    ...(pro && { pro: 1 as const }),
    ...(routing && { r: routing }),
    ...(state && { st: state }),
  }
}

/** Whether links of an account on `plan` carry the `pro` flag; guest links (no plan) never do. */
export function planIsPro(plan: Plan | null | undefined): boolean {
  return plan ? PLAN_FEATURES[plan].attribution : false
}

/** A link row with what its cache record needs from the owning account. */
export type LinkWithPlan = LinkRow & { plan: Plan | null }

/** The link matching `where` (one at most) with its account's plan. */
export async function findLinkWithPlan(services: Pick<Services, 'db'>, where: SQL | undefined): Promise<LinkWithPlan | undefined> {
  const [found] = await services.db.select({ link: links, plan: accounts.plan }).from(links).leftJoin(accounts, eq(accounts.id, links.accountId)).where(where).limit(1)
  return found ? { ...found.link, plan: found.plan } : undefined
}

/** The cache record of a row found by findLinkWithPlan. */
export function recordOf(row: LinkWithPlan): CachedLink {
  return toCachedLink(row, planIsPro(row.plan))
}

/** What the cache should hold for (domain, alias) right now, by Postgres; null when there is no link. */
async function committedRecord(services: Pick<Services, 'db'>, domain: string, alias: string): Promise<CachedLink | null> {
  const row = await findLinkWithPlan(services, and(eq(links.domain, domain), eq(links.alias, alias)))
  return row ? recordOf(row) : null
}

/**
 * After a commit: stores `record` under the link's key (or deletes the key when the link is gone),
 * deletes it again if Postgres has moved on meanwhile, and announces the key so redirectors drop their
 * L1 copy. Never throws; failures are counted.
 */
export async function syncLinkCache(
  services: Pick<Services, 'db' | 'kv' | 'counters'>,
  target: Pick<LinkRow, 'domain' | 'alias'>,
  record: CachedLink | null,
  opts: { publish: boolean },
): Promise<void> {
  const key = linkCacheKey(target.domain, target.alias)
  try {
    let publish = opts.publish
    if (record) {
      await services.kv.set(key, encodeCachedLink(record), LINK_CACHE_TTL_SECONDS)
      const now = await committedRecord(services, target.domain, target.alias)
      if (now === null || encodeCachedLink(now) !== encodeCachedLink(record)) {
        await services.kv.del(key)
        // A redirector may have read the stale record in between: it must drop it too.
        publish = true
      }
    } else {
      // A refill racing with this delete checks afterwards and finds no row, so it deletes too.
      await services.kv.del(key)
    }
    if (publish) await services.kv.publish(INVALIDATION_CHANNEL, key)
  } catch {
    services.counters.cacheWriteFailures++
  }
}

/**
 * syncLinkCache of links this request has just created, all at once: their records stored, then one
 * Postgres query for what every key should hold now (the same check, for the same reason), mismatches
 * deleted, every key announced (a redirector may hold a "not found" for it). Never throws; each link
 * whose write-through failed is counted.
 */
export async function syncCreatedLinks(services: Pick<Services, 'db' | 'kv' | 'counters'>, created: readonly { row: LinkRow; record: CachedLink }[]): Promise<void> {
  if (created.length === 0) return
  try {
    await Promise.all(created.map(({ row, record }) => services.kv.set(linkCacheKey(row.domain, row.alias), encodeCachedLink(record), LINK_CACHE_TTL_SECONDS)))
    const pairs = created.map(({ row }) => sql`(${row.domain}, ${row.alias})`)
    const committed = await services.db
      .select({ link: links, plan: accounts.plan })
      .from(links)
      .leftJoin(accounts, eq(accounts.id, links.accountId))
      .where(sql`(${links.domain}, ${links.alias}) in (${sql.join(pairs, sql`, `)})`)
    const now = new Map(committed.map(({ link, plan }) => [linkCacheKey(link.domain, link.alias), encodeCachedLink(recordOf({ ...link, plan }))]))
    await Promise.all(
      created.map(async ({ row, record }) => {
        const key = linkCacheKey(row.domain, row.alias)
        if (now.get(key) !== encodeCachedLink(record)) await services.kv.del(key)
        await services.kv.publish(INVALIDATION_CHANNEL, key)
      }),
    )
  } catch {
    services.counters.cacheWriteFailures += created.length
  }
}

/** Links written through per round; keeps a large account from flooding the cache connection. */
const CACHE_CONCURRENCY = 50
const LINK_PAGE = 500

/**
 * Writes every live link of the account through to the redirect cache with `pro: 1`, publishing an
 * invalidation for each, so redirects start appending attribution parameters at once. Best effort like
 * every write-through (failures are counted; the cache heals from Postgres through /internal/resolve).
 */
export async function markAccountLinksPro(services: Services, accountId: string): Promise<number> {
  const now = new Date(services.now())
  let after = ''
  let written = 0
  for (;;) {
    const rows = await services.db
      .select()
      .from(links)
      .where(and(eq(links.accountId, accountId), gt(links.id, after), or(isNull(links.expiresAt), gt(links.expiresAt, now))))
      .orderBy(asc(links.id))
      .limit(LINK_PAGE)
    for (let i = 0; i < rows.length; i += CACHE_CONCURRENCY) {
      await Promise.all(rows.slice(i, i + CACHE_CONCURRENCY).map((row) => syncLinkCache(services, row, toCachedLink(row, true), { publish: true })))
    }
    written += rows.length
    if (rows.length < LINK_PAGE) return written
    after = rows[rows.length - 1]!.id
  }
}
