// The opaque list cursor: the position of the last link of a page, as base64url JSON: created_at in
// microseconds and the id, plus the click count under sort=clicks_desc. Microseconds because Postgres keeps
// them and a millisecond cursor could skip or repeat links created within one millisecond. A cursor names
// its sort (created_desc, the first, names none: its cursors predate sorts), so one handed to another sort
// is refused rather than read as a position it is not. Anything else a client sends is a 400, never a query.
import { sql } from 'drizzle-orm'
import { links } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import { LINK_SORTS, type LinkSort } from './model'

export interface ListPosition {
  /** created_at in microseconds since the epoch, as digits; compared as a bigint in SQL. */
  createdUs: string
  id: string
  /** The link's human clicks when the page was answered; under sort=clicks_desc only. */
  clicks?: number
}

/** created_at to the microsecond, as text: what a cursor carries. */
export const createdUs = sql<string>`((extract(epoch from ${links.createdAt}) * 1000000)::bigint)::text`

const DIGITS = /^\d{1,17}$/
const ID = /^[A-Za-z0-9_-]{1,100}$/
const DEFAULT_SORT: LinkSort = LINK_SORTS[0]

export function encodeCursor(position: ListPosition, sort: LinkSort = DEFAULT_SORT): string {
  const fields = { t: position.createdUs, i: position.id, ...(sort !== DEFAULT_SORT && { s: sort }), ...(position.clicks !== undefined && { c: position.clicks }) }
  return Buffer.from(JSON.stringify(fields)).toString('base64url')
}

const invalid = () => new ApiError('VALIDATION_FAILED', 'query.cursor: not a cursor this API returned; pass data.pagination.next_cursor as it is.')

export function decodeCursor(cursor: string, sort: LinkSort = DEFAULT_SORT): ListPosition {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    value = null
  }
  const { t, i, s = DEFAULT_SORT, c } = (typeof value === 'object' && value !== null ? value : {}) as { t?: unknown; i?: unknown; s?: unknown; c?: unknown }
  if (typeof t !== 'string' || typeof i !== 'string' || !DIGITS.test(t) || !ID.test(i)) throw invalid()
  if (!LINK_SORTS.includes(s as LinkSort)) throw invalid()
  if (s !== sort) throw new ApiError('VALIDATION_FAILED', `query.cursor: belongs to sort=${String(s)}, not sort=${sort}; keep the sort while paging, or start again without a cursor.`)
  if (sort !== 'clicks_desc') return { createdUs: t, id: i }
  if (typeof c !== 'number' || !Number.isSafeInteger(c) || c < 0) throw invalid()
  return { createdUs: t, id: i, clicks: c }
}
