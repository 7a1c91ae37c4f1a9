// Recognising Postgres errors the API turns into answers (a duplicate alias becomes 409 ALIAS_TAKEN) or
// routes around (a read replica that cannot be reached: the primary answers instead).
// drizzle wraps every driver error in a DrizzleQueryError whose `cause` is the driver's own error:
// postgres.js' PostgresError (constraint in `constraint_name`) or PGlite's DatabaseError (in
// `constraint`); both carry the SQLSTATE in `code`. So the cause chain is walked rather than trusted
// to have one shape.

/** SQLSTATE unique_violation. */
const UNIQUE_VIOLATION = '23505'
/** Enough for drizzle's one wrapper plus a caller's own; guards against a cause cycle. */
const MAX_CAUSE_DEPTH = 5

type PgErrorFields = { code?: unknown; constraint?: unknown; constraint_name?: unknown }

function findPgError(err: unknown, matches: (code: unknown) => boolean): PgErrorFields | undefined {
  let current: unknown = err
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current && typeof current === 'object'; depth++) {
    if (matches((current as PgErrorFields).code)) return current as PgErrorFields
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/**
 * True when `err` (as thrown by a drizzle query on either driver) is a unique violation, optionally only
 * of the named constraint or unique index, e.g. "links_domain_alias_key" (a primary-key clash is not an
 * alias clash).
 */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const pg = findPgError(err, (code) => code === UNIQUE_VIOLATION)
  if (!pg) return false
  return constraint === undefined || (pg.constraint_name ?? pg.constraint) === constraint
}

/**
 * Codes of a server that cannot be reached or is going away: the socket's (refused, reset, no route, no
 * name), postgres.js' own (its connect timeout, a connection closed under a query) and the SQLSTATEs of a
 * server shutting down or still starting (57P01-57P03; a standby restarting says 57P03).
 */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  '57P01',
  '57P02',
  '57P03',
])
/** SQLSTATE class 08: connection exception. */
const CONNECTION_EXCEPTION_CLASS = '08'

/** True when `err` says the server could not be reached or dropped the connection, not that the query was wrong. */
export function isConnectionError(err: unknown): boolean {
  return findPgError(err, (code) => typeof code === 'string' && (CONNECTION_CODES.has(code) || (code.length === 5 && code.startsWith(CONNECTION_EXCEPTION_CLASS)))) !== undefined
}
