// Links as operators see and act on them: every account's and every guest's. A search names an alias,
// a host (its subdomains too) or a URL; an action sets the link's state (links/state.ts writes it
// through the cache, so every redirector follows within a second) and closes its open reports.
import { and, desc, eq, inArray, sql, type SQL } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { links, type LinkRow, type LinkState } from '../../db/schema'
import { isId } from '../../lib/ids'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { listHost, parseUrl } from '../abuse/normalize'
import { disableForGood, setLinkStates } from '../links/state'
import { normalizeHost } from '../links/url'
import { closeReports } from '../reports/service'
import { recordAction } from './audit'
import { microseconds, olderThan, pageOf } from './cursor'
import type { Operator } from './guard'
import { destinationHostIs } from './host-match'
import type { AdminLink } from './model'

type StateServices = Pick<Services, 'db' | 'kv' | 'counters' | 'now' | 'config' | 'webhookOutbox'>

export type LinkAction = 'flag' | 'disable' | 'restore'
const STATE_OF: Record<LinkAction, LinkState> = { flag: 'flagged', disable: 'disabled', restore: 'ok' }

/** Links changed per statement: bounded parameter lists, and every redirector hears of each batch soon. */
const BATCH = 500

// Written out: drizzle renders a column inside a subquery unqualified, and "id" would be the report's.
const openReports = sql<number>`(select count(*)::int from "reports" r where r."link_id" = "links"."id" and r."status" = 'open')`

const itemColumns = { link: links, openReports, us: microseconds(links.createdAt) }

function itemOf(row: { link: LinkRow; openReports: number }): AdminLink {
  const { link } = row
  return {
    id: link.id,
    alias: link.alias,
    domain: link.domain,
    url: link.url,
    account_id: link.accountId,
    state: link.state,
    state_reason: link.stateReason,
    open_reports: Number(row.openReports),
    created_at: link.createdAt.toISOString(),
  }
}

/**
 * What `q` matches. A URL (http or https): the links whose destination starts with it (on its host
 * exactly, so the host index narrows it first), and the link at that short URL. Otherwise an alias,
 * exactly, or a host and its subdomains.
 */
function searchCondition(q: string): SQL | undefined {
  const text = q.trim()
  if (text === '') return undefined
  const url = /^https?:\/\//i.test(text) ? parseUrl(text) : null
  if (url) {
    const prefix = and(eq(links.urlHostReversed, [...url.hostname].reverse().join('')), sql`starts_with(${links.url}, ${url.href})`)!
    const alias = decodeURIComponent(url.pathname.slice(1)).replace(/\+$/, '')
    const domains = [...new Set([normalizeHost(url.host), normalizeHost(url.hostname)])]
    return sql`(${prefix} or (${inArray(links.domain, domains)} and ${eq(links.alias, alias)}))`
  }
  const host = listHost(text)
  return host === null ? eq(links.alias, text) : sql`(${eq(links.alias, text)} or ${destinationHostIs(host)})`
}

/** Links matching `q` (every link without one), newest first. */
export async function searchLinks(db: Db, query: { q?: string; cursor?: string; limit: number }): Promise<{ links: AdminLink[]; next_cursor: string | null }> {
  let match: SQL | undefined
  try {
    match = query.q === undefined ? undefined : searchCondition(query.q)
  } catch {
    // A URL whose path is not valid percent-encoding names no alias.
    throw new ApiError('VALIDATION_FAILED', 'query.q: an alias, a host name or an http(s) URL')
  }
  const rows = await db
    .select(itemColumns)
    .from(links)
    .where(and(match, olderThan(links.createdAt, links.id, query.cursor)))
    .orderBy(desc(links.createdAt), desc(links.id))
    .limit(query.limit + 1)
  const { items, next } = pageOf(
    rows.map((r) => ({ ...r, id: r.link.id })),
    query.limit,
  )
  return { links: items.map(itemOf), next_cursor: next }
}

/** One link as an admin item, or 404 LINK_NOT_FOUND. */
export async function adminLink(db: Db, id: string): Promise<AdminLink> {
  const [row] = isId('link', id) ? await db.select(itemColumns).from(links).where(eq(links.id, id)).limit(1) : []
  if (!row) throw new ApiError('LINK_NOT_FOUND', 'No link with that id.')
  return itemOf(row)
}

/**
 * Disables links (the cache follows) in batches; links already disabled stay so, and those a suspension
 * disabled take `reason` instead of its mark, so an account's restore cannot bring them back. Closes
 * their open reports. Returns how many links changed state.
 */
export async function disableLinks(services: StateServices, ids: readonly string[], reason: string): Promise<number> {
  let changed = 0
  for (let at = 0; at < ids.length; at += BATCH) {
    const batch = ids.slice(at, at + BATCH)
    changed += (await disableForGood(services, batch, reason)).length
    await closeReports(services, { linkIds: batch }, 'disable')
  }
  return changed
}

/** flag, disable or restore one link for an operator: its state, its open reports closed, the audit row. */
export async function actOnLink(services: StateServices, operator: Operator, id: string, action: LinkAction, reason: string | null): Promise<{ link: AdminLink; reports_closed: number }> {
  const before = await adminLink(services.db, id)
  const state = STATE_OF[action]
  const why = reason ?? `${action === 'flag' ? 'flagged' : 'disabled'} by an operator`
  await setLinkStates(services, [id], state, why)
  // Already in that state: the operator's reason replaces the old one (a suspension's mark included).
  if (before.state === state && state !== 'ok') await services.db.update(links).set({ stateReason: why }).where(eq(links.id, id))
  const closed = await closeReports(services, { linkIds: [id] }, action)
  await recordAction(services, operator, `link.${action}`, id, reason)
  return { link: await adminLink(services.db, id), reports_closed: closed }
}
