// Tags of an account and their assignment to the account's links. Plain arguments in, plain values
// out; errors are ApiError. Another account's tag or link is "not found", never "forbidden".
import { and, asc, count, eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { linkTags, tags } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { MAX_TAG_ID, MAX_TAG_NAME_LENGTH, TAG_COLORS, type CreateTagInput, type TagColor, type TagRecord } from './model'
import { findOwnedLink, linkHost, ownedTagExists } from '../links/owned'
import { lockFor } from '../../db/locks'

type TagRow = typeof tags.$inferSelect
type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]

/**
 * First key of the two-key advisory lock that serialises tag creation per account (the second is a
 * hash of the account id). Arbitrary, distinct from the migration lock and the domains lock.
 */
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/

export function toTagRecord(row: TagRow): TagRecord {
  return { id: row.id, name: row.name, color: row.color as TagColor, created_at: row.createdAt.toISOString() }
}

export function tagUsage(limit: number, total: number) {
  return { tags: total, tags_limit: limit, tags_remaining: Math.max(0, limit - total) }
}

/** A tag id from the path: the schema allows 1-10 digits, the column is int4. */
export function parseTagId(raw: string): number {
  const id = Number(raw)
  if (!Number.isInteger(id) || id < 1 || id > MAX_TAG_ID) {
    throw new ApiError('VALIDATION_FAILED', `params.tagId: must be an integer from 1 to ${MAX_TAG_ID}`)
  }
  return id
}

export async function listTags(services: Pick<Services, 'db'>, accountId: string): Promise<TagRecord[]> {
  const rows = await services.db.select().from(tags).where(eq(tags.accountId, accountId)).orderBy(asc(tags.id))
  return rows.map(toTagRecord)
}

function tagName(raw: string): string {
  const name = raw.trim()
  if (name.length === 0) throw new ApiError('VALIDATION_FAILED', 'body.name: must not be blank')
  if (name.length > MAX_TAG_NAME_LENGTH) throw new ApiError('VALIDATION_FAILED', `body.name: must be at most ${MAX_TAG_NAME_LENGTH} characters`)
  if (CONTROL_CHARS.test(name)) throw new ApiError('VALIDATION_FAILED', 'body.name: must not contain control characters')
  return name
}

/**
 * Creates a tag. Creations of one account are serialised by a transaction-scoped advisory lock, so the
 * count check and the insert cannot interleave: 30 concurrent creates leave exactly 20 tags. Names are
 * unique per account regardless of case (the unique index on lower(name) has the last word).
 */
export async function createTag(services: Pick<Services, 'db' | 'now' | 'config'>, accountId: string, input: CreateTagInput): Promise<{ tag: TagRecord; total: number }> {
  const name = tagName(input.name)
  const color: TagColor = input.color ?? TAG_COLORS[0]
  const now = new Date(services.now())
  return services.db.transaction(async (tx) => {
    await lockFor(tx, 'tagCreate', accountId)
    const [same] = await tx
      .select({ id: tags.id })
      .from(tags)
      .where(and(eq(tags.accountId, accountId), sql`lower(${tags.name}) = lower(${name})`))
      .limit(1)
    if (same) throw new ApiError('TAG_EXISTS', `This account already has a tag named "${name}" (names are compared regardless of case).`)
    const total = await countTags(tx, accountId)
    const limit = services.config.limits.tagsPerAccount
    if (total >= limit) {
      throw new ApiError('TAG_LIMIT_REACHED', `An account can have at most ${limit} tags; delete one to make room.`, { limit, remaining: 0 })
    }
    const [row] = await tx.insert(tags).values({ accountId, name, color, createdAt: now }).onConflictDoNothing().returning()
    if (!row) throw new ApiError('TAG_EXISTS')
    return { tag: toTagRecord(row), total: total + 1 }
  })
}

async function countTags(tx: Pick<Db, 'select'>, accountId: string): Promise<number> {
  const [row] = await tx.select({ n: count() }).from(tags).where(eq(tags.accountId, accountId))
  return Number(row?.n ?? 0)
}

export async function countAccountTags(services: Pick<Services, 'db'>, accountId: string): Promise<number> {
  return countTags(services.db, accountId)
}

/** Deletes a tag of the account; its assignments go with it (link_tags cascades). */
export async function deleteTag(services: Pick<Services, 'db'>, accountId: string, tagId: number): Promise<void> {
  const [row] = await services.db
    .delete(tags)
    .where(and(eq(tags.id, tagId), eq(tags.accountId, accountId)))
    .returning({ id: tags.id })
  if (!row) throw new ApiError('TAG_NOT_FOUND')
}

export interface LinkRef {
  alias: string
  /** As given by the caller; undefined means the default domain. */
  domain: string | undefined
}

/** The link's id when it belongs to the account; LINK_NOT_FOUND otherwise (missing and foreign alike). */
async function ownedLinkId(db: Pick<Db, 'select'>, accountId: string, domain: string, alias: string, lock = false): Promise<string> {
  return (await findOwnedLink(db, accountId, domain, alias, lock)).id
}

export async function listLinkTags(services: Pick<Services, 'db' | 'config'>, accountId: string, ref: LinkRef): Promise<TagRecord[]> {
  const linkId = await ownedLinkId(services.db, accountId, linkHost(services.config, ref.domain), ref.alias)
  const rows = await services.db.select({ tag: tags }).from(linkTags).innerJoin(tags, eq(tags.id, linkTags.tagId)).where(eq(linkTags.linkId, linkId)).orderBy(asc(tags.id))
  return rows.map((row) => toTagRecord(row.tag))
}

/**
 * Assigns a tag to a link, both of the account. Idempotent: `created` is false when the tag was
 * already on the link. Both rows are locked against deletion for the insert, so a concurrent delete of
 * either ends as a 404 rather than a foreign-key error.
 */
export async function assignTag(services: Pick<Services, 'db' | 'config' | 'now'>, accountId: string, ref: LinkRef, tagId: number): Promise<{ created: boolean; domain: string }> {
  const domain = linkHost(services.config, ref.domain)
  const created = await services.db.transaction(async (tx: Tx) => {
    const linkId = await ownedLinkId(tx, accountId, domain, ref.alias, true)
    await ownedTagExists(tx, accountId, tagId, true)
    const inserted = await tx
      .insert(linkTags)
      .values({ linkId, tagId, createdAt: new Date(services.now()) })
      .onConflictDoNothing()
      .returning({ tagId: linkTags.tagId })
    return inserted.length > 0
  })
  return { created, domain }
}

/** Removes a tag from a link. Idempotent: `removed` is false when it was not assigned. */
export async function unassignTag(services: Pick<Services, 'db' | 'config'>, accountId: string, ref: LinkRef, tagId: number): Promise<{ removed: boolean; domain: string }> {
  const domain = linkHost(services.config, ref.domain)
  const linkId = await ownedLinkId(services.db, accountId, domain, ref.alias)
  await ownedTagExists(services.db, accountId, tagId)
  const deleted = await services.db
    .delete(linkTags)
    .where(and(eq(linkTags.linkId, linkId), eq(linkTags.tagId, tagId)))
    .returning({ tagId: linkTags.tagId })
  return { removed: deleted.length > 0, domain }
}
