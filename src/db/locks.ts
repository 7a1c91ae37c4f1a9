// Postgres advisory locks, one table so no two purposes share a key. Each is the first key of a
// two-key transaction lock whose second key is hashtext() of what it serialises (an account, a
// click): work on one account or click queues, everything else runs on. 7_311 is this service's prefix.
import { sql, type SQL } from 'drizzle-orm'

export const ADVISORY_LOCKS = {
  /** Session lock around migrations (db/client.ts), one key. */
  migration: 7_311_001,
  /** Link creation of an account: the monthly quota is exact across processes. */
  linkQuota: 7_311_002,
  /** Domain additions of an account: the plan's allowance is exact. */
  domainAdd: 7_311_003,
  /** Tag creation of an account: 20 tags, exactly. */
  tagCreate: 7_311_004,
  /** Signed conversions of one click: CONVERSIONS_PER_CLICK, exactly. */
  clickConversions: 7_311_005,
  /** API key creation of an account: its live keys, exactly. */
  apiKeyCreate: 7_311_006,
} as const

/** Holds the lock for `subject` until the caller's transaction ends. */
export async function lockFor(tx: { execute(query: SQL): PromiseLike<unknown> }, lock: Exclude<keyof typeof ADVISORY_LOCKS, 'migration'>, subject: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${ADVISORY_LOCKS[lock]}, hashtext(${subject}))`)
}
