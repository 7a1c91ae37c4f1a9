// Recognising Postgres errors the API turns into answers (a duplicate alias becomes 409 ALIAS_TAKEN).
// drizzle wraps every driver error in a DrizzleQueryError whose `cause` is the driver's own error:
// postgres.js' PostgresError (constraint in `constraint_name`) or PGlite's DatabaseError (in
// `constraint`); both carry the SQLSTATE in `code`. So the cause chain is walked rather than trusted
// to have one shape.

/** SQLSTATE unique_violation. */
const UNIQUE_VIOLATION = '23505'
/** Enough for drizzle's one wrapper plus a caller's own; guards against a cause cycle. */
const MAX_CAUSE_DEPTH = 5

type PgErrorFields = { code?: unknown; constraint?: unknown; constraint_name?: unknown }

function findPgError(err: unknown, code: string): PgErrorFields | undefined {
  let current: unknown = err
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current && typeof current === 'object'; depth++) {
    if ((current as PgErrorFields).code === code) return current as PgErrorFields
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
  const pg = findPgError(err, UNIQUE_VIOLATION)
  if (!pg) return false
  return constraint === undefined || (pg.constraint_name ?? pg.constraint) === constraint
}
