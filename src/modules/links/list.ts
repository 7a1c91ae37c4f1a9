// GET /api/v1/links: the account's links, filtered by search, domain and tag, in one of three orders
// (model.ts LINK_SORTS), paged by cursor and/or offset. The two orders by creation are keyset pages read
// straight from the account's index; the order by clicks is list-clicks.ts. Read from the read replica
// when there is one.
import { and, asc, count, desc, eq, getTableColumns, or, sql, type SQL } from 'drizzle-orm'
import { readFromReplica } from '../../db/client'
import { links, linkTags } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import type { AccountPrincipal } from '../../plugins/auth'
import { createdUs, decodeCursor, encodeCursor, type ListPosition } from './cursor'
import type { LinkListInput, LinkSort } from './model'
import { toLinkRecord } from './service'
import { clickTotals, withClicks, type ClickTotals } from './clicks'
import { ownedTagExists } from './owned'
import { normalizeHost } from './url'
import { clicksPage } from './list-clicks'
import { linksCreatedSince, linksOfAccount, monthWindow } from '../account/meta'

/** `%` and `_` match themselves in a search; `\` is the escape character of LIKE. */
export function likeSubstring(text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`
}

const cursorInstant = (position: ListPosition) => sql`timestamptz 'epoch' + ${position.createdUs}::bigint * interval '1 microsecond'`

/** The links a filtered list matches: a count of them (the account's own total is kept counted). */
async function countMatching(services: Services, matching: SQL | undefined): Promise<number> {
  const [row] = await services.db.select({ n: count() }).from(links).where(matching)
  return Number(row?.n ?? 0)
}

const sinceMonth = async (services: Services, account: AccountPrincipal, monthStart: Date) => ({ all: undefined, sinceMonth: await linksCreatedSince(services.db, account.id, monthStart) })
const bothCounts = async (services: Services, account: AccountPrincipal, matching: SQL, monthStart: Date) => {
  const [all, month] = await Promise.all([countMatching(services, matching), linksCreatedSince(services.db, account.id, monthStart)])
  return { all, sinceMonth: month }
}

/** The account's links that match the query's search, domain and tag; `filtered` when more than the account. */
function matchingLinks(account: AccountPrincipal, query: LinkListInput): { matching: SQL; filtered: boolean } {
  const filters: SQL[] = [eq(links.accountId, account.id)]
  if (query.domain !== undefined) filters.push(eq(links.domain, normalizeHost(query.domain)))
  if (query.search !== undefined && query.search !== '') {
    const pattern = likeSubstring(query.search)
    filters.push(or(sql`${links.alias} ilike ${pattern} escape '\\'`, sql`${links.url} ilike ${pattern} escape '\\'`)!)
  }
  if (query.tag !== undefined) {
    filters.push(sql`exists (select 1 from ${linkTags} where ${linkTags.linkId} = ${links.id} and ${linkTags.tagId} = ${query.tag})`)
  }
  return { matching: and(...filters)!, filtered: filters.length > 1 }
}

type ListedRow = typeof links.$inferSelect & { createdUs: string }
interface Page {
  rows: ListedRow[]
  hasMore: boolean
  /** The page's click counts when the order already read them (clicks_desc); null: ClickHouse did not answer. */
  clicks?: ClickTotals | null
  /** The matching links, when the order already counted them. */
  total?: number
}

/** A keyset page in creation order, either way, with (created_at, id) as the tie-free key. */
async function createdPage(services: Services, matching: SQL, sort: LinkSort, position: ListPosition | undefined, limit: number, offset: number): Promise<Page> {
  const ascending = sort === 'created_asc'
  const after =
    position &&
    (ascending ? sql`(${links.createdAt}, ${links.id}) > (${cursorInstant(position)}, ${position.id})` : sql`(${links.createdAt}, ${links.id}) < (${cursorInstant(position)}, ${position.id})`)
  const order = ascending ? [asc(links.createdAt), asc(links.id)] : [desc(links.createdAt), desc(links.id)]
  const rows = await services.db
    .select({ ...getTableColumns(links), createdUs })
    .from(links)
    .where(after ? and(matching, after) : matching)
    .orderBy(...order)
    // One more than asked tells whether there is a next page.
    .limit(limit + 1)
    .offset(offset)
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit }
}

/**
 * Every query of the list on one handle: the replica's when there is one. A link created a moment ago
 * may be missing from it for the replication delay (GET of that link finds it at once); a tag the
 * replica does not know yet is looked for on the primary rather than answered 404 TAG_NOT_FOUND.
 */
export function listLinks(services: Services, account: AccountPrincipal, query: LinkListInput) {
  return readFromReplica(services, (db) => listFrom({ ...services, db }, account, query), isTagNotFound)
}

const isTagNotFound = (error: unknown) => error instanceof ApiError && error.code === 'TAG_NOT_FOUND'

async function listFrom(services: Services, account: AccountPrincipal, query: LinkListInput) {
  const limit = query.limit ?? 20
  const offset = query.offset ?? 0
  const sort = query.sort ?? 'created_desc'
  const position = query.cursor === undefined ? undefined : decodeCursor(query.cursor, sort)
  // Another account's tag is not found, as on the tag routes: a list filtered by it would say it exists.
  if (query.tag !== undefined) await ownedTagExists(services.db, account.id, query.tag)
  const { matching, filtered } = matchingLinks(account, query)
  const monthStart = monthWindow(services.now()).start
  const byClicks = sort === 'clicks_desc'
  const [linkCounts, page] = await Promise.all([
    // The order by clicks counts what matches itself; so does an unfiltered list, from Postgres's own
    // counters (a few rows read by one query, which also give the month's count for meta).
    !filtered ? linksOfAccount(services.db, account.id, monthStart) : byClicks ? sinceMonth(services, account, monthStart) : bothCounts(services, account, matching, monthStart),
    byClicks ? clicksPage(services, matching, position, limit, offset) : createdPage(services, matching, sort, position, limit, offset),
  ])
  const last = page.rows.at(-1)
  // One ClickHouse query for the whole page (none more when the order read the counts); records lack
  // clicks when it does not answer.
  const clicks =
    page.clicks !== undefined
      ? page.clicks
      : await clickTotals(
          services,
          page.rows.map((row) => row.id),
        )
  const nextPosition = last && { createdUs: last.createdUs, id: last.id, ...(sort === 'clicks_desc' && { clicks: clicks?.get(last.id)?.clicks ?? 0 }) }
  const data = {
    links: page.rows.map((row) => withClicks(toLinkRecord(row, services), row.id, clicks)),
    pagination: {
      total: page.total ?? linkCounts.all ?? 0,
      limit,
      offset,
      next_cursor: page.hasMore && nextPosition ? encodeCursor(nextPosition, sort) : null,
    },
  }
  return { data, linksThisMonth: linkCounts.sinceMonth }
}
