// Hosts operators ban (banned_hosts): a ban covers the host and its subdomains (host-match.ts). Banning
// disables every stored link that leads there — its destination, or a routing rule's or an A/B
// variant's — and closes their reports; the destination checks (src/modules/abuse/) refuse the host in
// new links from then on, in every process, reading the same table. Unbanning removes the row only: the
// links it disabled stay disabled until an operator restores each (their owners may have been phishing).
// No process keeps the table in memory (each write reads the host and its parents by index), so a ban
// holds everywhere from its commit.
import { desc, eq, or } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { bannedHosts, links } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { listHost } from '../abuse/normalize'
import { recordAction } from './audit'
import { microseconds, olderThan, pageOf } from './cursor'
import type { Operator } from './guard'
import { destinationHostIs, routingHostIs } from './host-match'
import { disableLinks } from './links'
import type { BannedHost } from './model'

type Row = typeof bannedHosts.$inferSelect

const itemOf = (row: Row): BannedHost => ({ host: row.host, reason: row.reason, banned_by: row.bannedBy, created_at: row.createdAt.toISOString() })

/** A host as bans store it (lower-case, punycode, no trailing dot), or 400 naming `field`. */
function hostOf(text: string, field: string): string {
  const host = listHost(text.trim())
  if (host === null) throw new ApiError('VALIDATION_FAILED', `${field}: a host name such as evil.example, or an IP address (no scheme, port or path)`)
  return host
}

export async function listHosts(db: Db, page: { cursor?: string; limit: number }): Promise<{ hosts: BannedHost[]; next_cursor: string | null }> {
  const rows = await db
    .select({ row: bannedHosts, us: microseconds(bannedHosts.createdAt) })
    .from(bannedHosts)
    .where(olderThan(bannedHosts.createdAt, bannedHosts.host, page.cursor))
    .orderBy(desc(bannedHosts.createdAt), desc(bannedHosts.host))
    .limit(page.limit + 1)
  const { items, next } = pageOf(
    rows.map((r) => ({ ...r, id: r.row.host })),
    page.limit,
  )
  return { hosts: items.map(({ row }) => itemOf(row)), next_cursor: next }
}

/**
 * Bans `host` (a ban already there is kept as it was) and disables every link leading there.
 * `created` is false when it was banned already.
 */
export async function banHost(services: Services, operator: Operator, input: { host: string; reason?: string }): Promise<{ host: BannedHost; links_disabled: number; created: boolean }> {
  const host = hostOf(input.host, 'body.host')
  const reason = input.reason ?? null
  const [inserted] = await services.db
    .insert(bannedHosts)
    .values({ host, reason, bannedBy: operator.id, createdAt: new Date(services.now()) })
    .onConflictDoNothing()
    .returning()
  const [row] = inserted ? [inserted] : await services.db.select().from(bannedHosts).where(eq(bannedHosts.host, host))
  const matching = await services.db
    .select({ id: links.id })
    .from(links)
    .where(or(destinationHostIs(host), routingHostIs(host)))
  const disabled = await disableLinks(
    services,
    matching.map((m) => m.id),
    `host banned: ${host}`,
  )
  await recordAction(services, operator, 'host.ban', host, reason)
  return { host: itemOf(row!), links_disabled: disabled, created: inserted !== undefined }
}

/** Lifts the ban of `host`; 404 when it is not banned. */
export async function unbanHost(services: Services, operator: Operator, text: string, reason: string | null): Promise<BannedHost> {
  const host = hostOf(text, 'params.host')
  const [row] = await services.db.delete(bannedHosts).where(eq(bannedHosts.host, host)).returning()
  if (!row) throw new ApiError('HOST_NOT_BANNED')
  await recordAction(services, operator, 'host.unban', host, reason)
  return itemOf(row)
}
