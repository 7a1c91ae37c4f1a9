// Reading, changing and deleting an account's own links (the list is list.ts). A link of another account, or of nobody, is
// 404 LINK_NOT_FOUND alike and nothing changes. Every change is written through to the cache after
// the commit (a deleted link's key is deleted) and announced, so redirectors follow within a second.
// A change commits with its webhook event (link.updated, link.deleted) when an endpoint wants it.
import { and, eq } from 'drizzle-orm'
import { readFromReplica } from '../../db/client'
import { links, type LinkRow } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import type { AccountPrincipal } from '../../plugins/auth'
import { planIsPro, syncLinkCache, toCachedLink } from './cache'
import { checkActivation, checkFutureExpiry, hashPassword, parseInstant } from './create'
import type { UpdateInput } from './model'
import { checkDestination } from './url'
import { findOwnedLink, linkHost, linkNotFound } from './owned'
import { linkEventSubscribers, writeLinkEvents } from './service'

/** The host named by a `domain` query parameter; the default domain when there is none. */
export function getOwnLink(services: Services, account: AccountPrincipal, alias: string, domain: string | undefined): Promise<LinkRow> {
  return findOwnedLink(services.db, account.id, linkHost(services.config, domain), alias)
}

/**
 * getOwnLink for a read that changes nothing (GET of the link, statistics' lookup), from the read
 * replica when there is one. A link the replica does not have is looked for on the primary before the
 * answer is 404: the replica may be a moment behind, and a link just created is never "not found".
 */
export function readOwnLink(services: Services, account: AccountPrincipal, alias: string, domain: string | undefined): Promise<LinkRow> {
  const host = linkHost(services.config, domain)
  return readFromReplica(services, (db) => findOwnedLink(db, account.id, host, alias), isLinkNotFound)
}

const isLinkNotFound = (error: unknown) => error instanceof ApiError && error.code === 'LINK_NOT_FOUND'

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
  const now = new Date(services.now())
  if (dryRun) return { ...current, ...set, updatedAt: now }
  const row = await services.db.transaction(async (tx) => {
    const [[updated], webhookIds] = await Promise.all([
      tx
        .update(links)
        .set({ ...set, updatedAt: now })
        .where(and(eq(links.id, current.id), eq(links.accountId, account.id)))
        .returning(),
      linkEventSubscribers(services, tx, account.id, 'link.updated'),
    ])
    // Deleted between the read and the update.
    if (!updated) throw linkNotFound(current.domain, alias)
    await writeLinkEvents(services, tx, account.id, 'link.updated', webhookIds, [updated])
    return updated
  })
  await syncLinkCache(services, row, toCachedLink(row, planIsPro(account.plan)), { publish: true })
  if (set.url !== undefined) services.destinationsWritten?.([{ id: row.id, url: row.url, routingUrls: [] }])
  return row
}

/** A dry run finds the link it would delete (404 alike) and leaves it. */
export async function deleteLink(services: Services, account: AccountPrincipal, alias: string, domain: string | undefined, dryRun = false): Promise<{ domain: string; alias: string }> {
  const host = linkHost(services.config, domain)
  if (dryRun) {
    const row = await findOwnedLink(services.db, account.id, host, alias)
    return { domain: row.domain, alias: row.alias }
  }
  const row = await services.db.transaction(async (tx) => {
    const [[deleted], webhookIds] = await Promise.all([
      tx
        .delete(links)
        .where(and(eq(links.domain, host), eq(links.alias, alias), eq(links.accountId, account.id)))
        .returning(),
      linkEventSubscribers(services, tx, account.id, 'link.deleted'),
    ])
    if (!deleted) throw linkNotFound(host, alias)
    await writeLinkEvents(services, tx, account.id, 'link.deleted', webhookIds, [deleted])
    return deleted
  })
  await syncLinkCache(services, row, null, { publish: true })
  return { domain: row.domain, alias: row.alias }
}
