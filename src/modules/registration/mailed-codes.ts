// One-time codes sent by mail, for registration (e-mail verification) and sign-in alike: six digits,
// uniform (crypto random, rejection sampling), single-use, valid 15 minutes, five attempts, at most one a
// minute and five an hour per address. Only an HMAC-SHA256 of (row id, subject, code) is stored, keyed
// by a pepper derived from INTERNAL_SECRET for each purpose, which never reaches the database: a plain
// hash of a six-digit code would fall to a million guesses, while a database dump without the secret
// reveals nothing. Each caller keeps its own table, mail and answers; the mechanics are here.
import { createHmac } from 'node:crypto'
import { and, eq, isNull, lt, sql } from 'drizzle-orm'
import type { Config } from '../../../core/config'
import type { Db } from '../../db/client'
import type { emailVerifications, signInCodes } from '../../db/schema'
import { enforceRateLimit } from '../../plugins/client'
import { ApiError, type ApiErrorExtra } from '../../plugins/errors'
import type { Services } from '../../services'

const CODE_DIGITS = 6
export const MAILED_CODE_TTL_MS = 15 * 60 * 1000
export const MAX_MAILED_CODE_ATTEMPTS = 5

/** Per address, whether or not it has an account: nobody can flood an inbox. */
export const PER_ADDRESS_RATES = {
  perEmailMinute: { limit: 1, windowMs: 60_000 },
  perEmailHour: { limit: 5, windowMs: 3_600_000 },
} as const

/** What a pepper is for: one key per purpose, so a code of one can never pass as the other's. */
export type MailedCodePurpose = 'email-verification-code/v1' | 'sign-in-code/v1' | 'sign-in-code-derivation/v1'

/** Six digits, uniform: 32-bit draws at or above the largest multiple of 10^6 are drawn again (no modulo bias). */
export function generateCode(random: (buffer: Uint32Array) => void = (b) => void crypto.getRandomValues(b)): string {
  const space = 10 ** CODE_DIGITS
  const limit = Math.floor(2 ** 32 / space) * space
  const draw = new Uint32Array(1)
  for (;;) {
    random(draw)
    if (draw[0]! < limit) return String(draw[0]! % space).padStart(CODE_DIGITS, '0')
  }
}

/** The code as typed, spaces and dashes dropped; null when that is not six digits. */
export function readCode(raw: string): string | null {
  const code = raw.replace(/[\s-]/g, '')
  return /^\d{6}$/.test(code) ? code : null
}

/** The pepper: an HMAC key derived from INTERNAL_SECRET for this one purpose. */
export function codePepper(config: Pick<Config, 'internalSecret'>, purpose: MailedCodePurpose): Buffer {
  return createHmac('sha256', config.internalSecret).update(purpose).digest()
}

/** What is stored of a code: bound to its row and its subject (an address, an account). */
export function hashCode(pepper: Buffer, rowId: string, subject: string, code: string): string {
  return createHmac('sha256', pepper).update(`${rowId}\n${subject}\n${code}`).digest('hex')
}

/** enforceRateLimit, answering RATE_LIMITED with a hint that says which limit it was (and `extra`). */
export async function limitWithHint(services: Services, key: string, rate: { limit: number; windowMs: number }, hint: string, extra: ApiErrorExtra = {}): Promise<void> {
  try {
    await enforceRateLimit(services.limiter, key, rate.limit, rate.windowMs, services.now())
  } catch (error) {
    if (error instanceof ApiError && error.code === 'RATE_LIMITED') throw new ApiError('RATE_LIMITED', hint, { ...error.extra, ...extra })
    throw error
  }
}

/** The tables of mailed codes: each row a code with its hash, attempts, expiry and use. */
type CodeTable = typeof emailVerifications | typeof signInCodes
type Writer = Pick<Db, 'update'>

/**
 * Counts an attempt on the unused code `id` before any comparison, atomically and capped, so parallel
 * guesses cannot exceed the maximum; null when it was not counted (no such unused code, or out of attempts).
 */
export async function countAttempt<T extends CodeTable>(db: Writer, table: T, id: string): Promise<T['$inferSelect'] | null> {
  const counted = await db
    .update(table as CodeTable)
    .set({ attempts: sql`${table.attempts} + 1` })
    .where(and(eq(table.id, id), isNull(table.usedAt), lt(table.attempts, MAX_MAILED_CODE_ATTEMPTS)))
    .returning()
  return (counted[0] as T['$inferSelect'] | undefined) ?? null
}

/** Uses up the code `id` if nobody has: true for the one request that did. Also retires a code nobody received. */
export async function useCode(db: Writer, table: CodeTable, id: string, now: Date): Promise<boolean> {
  const used = await db
    .update(table)
    .set({ usedAt: now })
    .where(and(eq(table.id, id), isNull(table.usedAt)))
    .returning({ id: table.id })
  return used.length > 0
}
