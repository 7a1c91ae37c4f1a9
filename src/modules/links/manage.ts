// Reading, changing and deleting an account's own links. A link of another account, or of nobody, is
// 404 LINK_NOT_FOUND alike and nothing changes. Every change is written through to the cache after
// the commit (a deleted link's key is deleted) and announced, so redirectors follow within a second.
import { and, count, desc, eq, getTableColumns, or, sql, type SQL } from 'drizzle-orm'
import { links, type LinkRow } from '../../db/schema'
import type { Services } from '../../services'
import type { AccountPrincipal } from '../../plugins/auth'
import { planIsPro, syncLinkCache, toCachedLink } from './cache'
import { checkActivation, checkFutureExpiry, hashPassword, parseInstant } from './create'
import { decodeCursor, encodeCursor } from './cursor'
import type { LinkListInput, UpdateInput } from './model'
import { toLinkRecord } from './service'
import { clickTotals, withClicks } from './clicks'
import { checkDestination, normalizeHost } from './url'
import { findOwnedLink, linkHost, linkNotFound } from './owned'
import { linksCreatedSince, linksOfAccount, monthWindow } from '../account/meta'


/** The host named by a `domain` query parameter; the default domain when there is none. */
export function getOwnLink(services: Services, account: AccountPrincipal, alias: string, domain: string | undefined): Promise<LinkRow> {
  return findOwnedLink(services.db, account.id, linkHost(services.config, domain), alias)
}

/** `%` and `_` match themselves in a search; `\` is the escape character of LIKE. */
export function likeSubstring(text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`
}

/** created_at to the microsecond, as text: what a cursor carries. */
const createdUs = sql<string>`((extract(epoch from ${links.createdAt}) * 1000000)::bigint)::text`

/** The links a filtered list matches: a count of them (the account's own total is kept counted). */
async function countMatching(services: Services, matching: SQL | undefined): Promise<number> {
  const [row] = await services.db.select({ n: count() }).from(links).where(matching)
  return Number(row?.n ?? 0)
}

export async function listLinks(services: Services, account: AccountPrincipal, query: LinkListInput) {
  const limit = query.limit ?? 20
  const offset = query.offset ?? 0
  const position = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
  const filters: SQL[] = [eq(links.accountId, account.id)]
  if (query.domain !== undefined) filters.push(eq(links.domain, normalizeHost(query.domain)))
  if (query.search !== undefined && query.search !== '') {
    const pattern = likeSubstring(query.search)
    filters.push(or(sql`${links.alias} ilike ${pattern} escape '\\'`, sql`${links.url} ilike ${pattern} escape '\\'`)!)
  }
  const matching = and(...filters)
  const page = position
    ? and(
        matching,
        sql`(${links.createdAt}, ${links.id}) < (timestamptz 'epoch' + ${position.createdUs}::bigint * interval '1 microsecond', ${position.id})`,
      )
    : matching
  const monthStart = monthWindow(services.now()).start
  const [linkCounts, rows] = await Promise.all([
    // With no filter but the account, the total and the month's count (meta) are Postgres's own counters,
    // a few rows read by one query; a domain or a search has to count what it matches.
    filters.length === 1
      ? linksOfAccount(services.db, account.id, monthStart)
      : Promise.all([countMatching(services, matching), linksCreatedSince(services.db, account.id, monthStart)]).then(([all, sinceMonth]) => ({ all, sinceMonth })),
    services.db
      .select({ ...getTableColumns(links), createdUs })
      .from(links)
      .where(page)
      .orderBy(desc(links.createdAt), desc(links.id))
      // One more than asked tells whether there is a next page.
      .limit(limit + 1)
      .offset(offset),
  ])
  const shown = rows.slice(0, limit)
  const last = shown.at(-1)
  // One ClickHouse query for the whole page; records lack clicks when it does not answer.
  const clicks = await clickTotals(services, shown.map((row) => row.id))
  const data = {
    links: shown.map((row) => withClicks(toLinkRecord(row, services), row.id, clicks)),
    pagination: {
      total: linkCounts.all,
      limit,
      offset,
      next_cursor: rows.length > limit && last ? encodeCursor({ createdUs: last.createdUs, id: last.id }) : null,
    },
  }
  return { data, linksThisMonth: linkCounts.sinceMonth }
}

/** The columns a PATCH changes; fields left out keep their value, null clears. */
async function changes(services: Services, current: LinkRow, patch: UpdateInput): Promise<Partial<LinkRow>> {
  const now = services.now()
  const set: Partial<LinkRow> = {}
  if (patch.url !== undefined) set.url = await checkDestination(services, patch.url)
  if (patch.expiration !== undefined) {
    set.expiresAt = patch.expiration === null ? null : parseInstant(patch.expiration, 'body.expiration')
    checkFutureExpiry(set.expiresAt, now, 'body.expiration')
  }
  if (patch.activated_at !== undefined) {
    set.activatedAt = patch.activated_at === null ? null : parseInstant(patch.activated_at, 'body.activated_at')
  }
  checkActivation(
    set.activatedAt === undefined ? current.activatedAt : set.activatedAt,
    set.expiresAt === undefined ? current.expiresAt : set.expiresAt,
    patch.activated_at !== undefined ? 'body.activated_at' : 'body.expiration',
  )
  if (patch.password !== undefined) set.passwordHash = patch.password === null ? null : await hashPassword(patch.password)
  return set
}

/** A dry run checks the change and answers the link as it would be, writing nothing. */
export async function updateLink(services: Services, account: AccountPrincipal, alias: string, domain: string | undefined, patch: UpdateInput, dryRun = false): Promise<LinkRow> {
  const current = await getOwnLink(services, account, alias, domain)
  const set = await changes(services, current, patch)
  if (Object.keys(set).length === 0) return current
  if (dryRun) return { ...current, ...set, updatedAt: new Date(services.now()) }
  const [row] = await services.db
    .update(links)
    .set({ ...set, updatedAt: new Date(services.now()) })
    .where(and(eq(links.id, current.id), eq(links.accountId, account.id)))
    .returning()
  // Deleted between the read and the update.
  if (!row) throw linkNotFound(current.domain, alias)
  await syncLinkCache(services, row, toCachedLink(row, planIsPro(account.plan)), { publish: true })
  return row
}

/** A dry run finds the link it would delete (404 alike) and leaves it. */
export async function deleteLink(services: Services, account: AccountPrincipal, alias: string, domain: string | undefined, dryRun = false): Promise<{ domain: string; alias: string }> {
  const host = linkHost(services.config, domain)
  if (dryRun) {
    const row = await findOwnedLink(services.db, account.id, host, alias)
    return { domain: row.domain, alias: row.alias }
  }
  const [row] = await services.db
    .delete(links)
    .where(and(eq(links.domain, host), eq(links.alias, alias), eq(links.accountId, account.id)))
    .returning({ domain: links.domain, alias: links.alias })
  if (!row) throw linkNotFound(host, alias)
  await syncLinkCache(services, row, null, { publish: true })
  return row
}
