// The opaque list cursor: the position (created_at in microseconds, id) of the last link of a page,
// as base64url JSON. Microseconds because Postgres keeps them and a millisecond cursor could skip or
// repeat links created within one millisecond. Anything else a client sends is a 400, never a query.
import { ApiError } from '../../plugins/errors'

export interface ListPosition {
  /** created_at in microseconds since the epoch, as digits; compared as a bigint in SQL. */
  createdUs: string
  id: string
}

const DIGITS = /^\d{1,17}$/
const ID = /^[A-Za-z0-9_-]{1,100}$/

export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify({ t: position.createdUs, i: position.id })).toString('base64url')
}

export function decodeCursor(cursor: string): ListPosition {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    value = null
  }
  const { t, i } = (typeof value === 'object' && value !== null ? value : {}) as { t?: unknown; i?: unknown }
  if (typeof t !== 'string' || typeof i !== 'string' || !DIGITS.test(t) || !ID.test(i)) {
    throw new ApiError('VALIDATION_FAILED', 'query.cursor: not a cursor this API returned; pass data.pagination.next_cursor as it is.')
  }
  return { createdUs: t, id: i }
}
