// The one lookup of "this account's link": links, tags and stats all find a link by (domain, alias)
// and the caller's account, and another account's link is 404 exactly like a missing one. The same for a
// tag id (the tag routes and the list's `tag` filter): here, below both modules, so neither imports the other.
import { and, eq } from 'drizzle-orm'
import type { Config } from '../../../core/config'
import type { Db } from '../../db/client'
import { links, tags } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { LinkRow } from '../../db/schema'
import { normalizeHost } from './url'

/** The host a request's `domain` names; the default short domain when it names none. */
export function linkHost(config: Pick<Config, 'shortDomain'>, domain: string | undefined): string {
  return domain === undefined ? config.shortDomain : normalizeHost(domain)
}

export function linkNotFound(host: string, alias: string): ApiError {
  return new ApiError('LINK_NOT_FOUND', `No link ${host}/${alias} in this account.`)
}

/**
 * The account's link, or 404 LINK_NOT_FOUND. With `lock` the row is held KEY SHARE until the caller's
 * transaction ends: it cannot be deleted under the caller, yet edits of it are not blocked.
 */
export async function findOwnedLink(db: Pick<Db, 'select'>, accountId: string, host: string, alias: string, lock = false): Promise<LinkRow> {
  const query = db
    .select()
    .from(links)
    .where(and(eq(links.domain, host), eq(links.alias, alias), eq(links.accountId, accountId)))
    .limit(1)
  const [row] = lock ? await query.for('key share') : await query
  if (!row) throw linkNotFound(host, alias)
  return row
}

/** Resolves when the tag is the account's; TAG_NOT_FOUND otherwise (missing and foreign alike). */
export async function ownedTagExists(db: Pick<Db, 'select'>, accountId: string, tagId: number, lock = false): Promise<void> {
  const query = db
    .select({ id: tags.id })
    .from(tags)
    .where(and(eq(tags.id, tagId), eq(tags.accountId, accountId)))
    .limit(1)
  const [row] = lock ? await query.for('key share') : await query
  if (!row) throw new ApiError('TAG_NOT_FOUND')
}
