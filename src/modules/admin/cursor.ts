// The admin lists' opaque cursor: the position of a page's last item, newest first, as base64url JSON
// of its created_at in microseconds (what Postgres keeps: a millisecond cursor could skip or repeat rows
// made within one millisecond) and its id. Anything else a client sends is a 400, never a query.
import { sql, type AnyColumn, type SQL } from 'drizzle-orm'
import { ApiError } from '../../plugins/errors'

export interface Position {
  /** created_at in microseconds since the epoch, as digits. */
  us: string
  id: string
}

const DIGITS = /^\d{1,17}$/
const ID = /^[A-Za-z0-9_-]{1,100}$/

/** created_at to the microsecond, as text: what a cursor carries. */
export const microseconds = (column: AnyColumn) => sql<string>`((extract(epoch from ${column}) * 1000000)::bigint)::text`

export function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify({ t: position.us, i: position.id })).toString('base64url')
}

export function decodeCursor(cursor: string): Position {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    value = null
  }
  const { t, i } = (typeof value === 'object' && value !== null ? value : {}) as { t?: unknown; i?: unknown }
  if (typeof t !== 'string' || typeof i !== 'string' || !DIGITS.test(t) || !ID.test(i)) {
    throw new ApiError('VALIDATION_FAILED', 'query.cursor: not a cursor this API returned; pass data.next_cursor as it is.')
  }
  return { us: t, id: i }
}

/**
 * Rows after `cursor` in newest-first order: (created_at, id) below the position's, as a row comparison
 * an index on (…, created_at, id) serves; the timestamp is rebuilt from whole microseconds, exactly.
 */
export function olderThan(createdAt: AnyColumn, id: AnyColumn, cursor: string | undefined): SQL | undefined {
  if (cursor === undefined) return undefined
  const { us, id: lastId } = decodeCursor(cursor)
  return sql`(${createdAt}, ${id}) < (timestamptz 'epoch' + ${us}::bigint * interval '1 microsecond', ${lastId})`
}

/**
 * One page of `rows` fetched with `limit + 1`: the page, and the cursor of its last item when another
 * page follows (each row carries its created_at in microseconds as `us`).
 */
export function pageOf<R extends { us: string; id: string }>(rows: R[], limit: number): { items: R[]; next: string | null } {
  const items = rows.slice(0, limit)
  const last = items.at(-1)
  return { items, next: rows.length > limit && last ? encodeCursor({ us: last.us, id: last.id }) : null }
}
