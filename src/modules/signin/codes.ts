// Sign-in by a one-time code mailed to the account's address (accounts are created by e-mail
// verification, so every account's address is verified). The code is a mailed one-time code
// (account/mailed-codes.ts, as registration's): its HMAC binds the attempt id and the account.
//
// Nobody learns from these steps whether an address has an account: an unknown address gets an
// attempt id as well (stored nowhere), whose wrong codes are counted in the limiter instead of the
// table and answered with the same words; the account lookup, the stored code and the mail all happen
// after the answer (requestSignInCode), so the answer's timing tells nothing either.
import type { LimitResult } from '../../adapters/ports'
import { and, eq, isNull } from 'drizzle-orm'
import type { Config } from '../../core/config'
import { accounts, signInCodes } from '../../db/schema'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import { isId, newId } from '../../lib/ids'
import { hashSecret, sameSecret } from '../../lib/secrets'
import type { Mailer, MailMessage } from '../../mail/mailer'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { codePepper, countAttempt, generateCode, hashCode, limitWithHint, MAILED_CODE_TTL_MS, MAX_MAILED_CODE_ATTEMPTS, PER_ADDRESS_RATES, readCode, useCode } from '../account/mailed-codes'
import { normalizeEmail } from '../account/registration'

export const SIGN_IN_CODE_TTL_MS = MAILED_CODE_TTL_MS
export const MAX_SIGN_IN_ATTEMPTS = MAX_MAILED_CODE_ATTEMPTS

/**
 * Per address: one code a minute and five an hour, whether or not it has an account (the same limits
 * as registration's, so nobody floods an inbox). Per client IP: twenty requests an hour, and sixty code
 * submissions (a person needs a handful; a guesser is stopped by the five attempts per code anyway).
 */
export const SIGN_IN_RATES = {
  ...PER_ADDRESS_RATES,
  requestsPerIp: { limit: 20, windowMs: 3_600_000 },
  codesPerIp: { limit: 60, windowMs: 3_600_000 },
} as const

/** Attempts on an id that has no pending row are counted a day: far longer than any code lives. */
const UNKNOWN_ATTEMPT_WINDOW_MS = 24 * 3_600_000

export function isAttemptId(value: string): boolean {
  return isId('signIn', value)
}

function hashSignInCode(config: Pick<Config, 'internalSecret'>, attemptId: string, accountId: string, code: string): string {
  return hashCode(codePepper(config, 'sign-in-code/v1'), attemptId, accountId, code)
}

export function signInMail(to: string, code: string, origin: string): MailMessage {
  const minutes = SIGN_IN_CODE_TTL_MS / 60_000
  return {
    to,
    subject: `Your sign-in code: ${code}`,
    text: [
      `Your sign-in code is: ${code}`,
      '',
      `Enter it on the sign-in page of ${origin}. It is valid for ${minutes} minutes and can be used once.`,
      '',
      'If you did not try to sign in, ignore this message: nobody can sign in without the code.',
    ].join('\n'),
  }
}

/**
 * Starts a sign-in for an address: returns the attempt id the code form carries. The answer does not
 * wait for anything that depends on the address: only the per-address limits (the same for every
 * address) run first. Looking the account up, storing its code (a transaction an unknown address does not
 * need) and mailing it happen after, so the answer's timing tells nobody whether the address has an
 * account. Whatever fails there is logged (never the code) and the person simply asks again.
 */
export async function requestSignInCode(services: Services, mailer: Mailer, rawEmail: string): Promise<{ attemptId: string; email: string; issued: Promise<void> }> {
  const email = normalizeEmail(rawEmail)
  // Keyed by the address's hash: the limiter's store never holds it in clear.
  const emailKey = hashSecret(email)
  await limitWithHint(services, `signin:email-minute:${emailKey}`, SIGN_IN_RATES.perEmailMinute, 'A code was sent to this address less than a minute ago; wait a minute before asking again.')
  await limitWithHint(services, `signin:email-hour:${emailKey}`, SIGN_IN_RATES.perEmailHour, 'Too many codes were asked for this address this hour; retry later.')

  const attemptId = newId('signIn')
  const issued = issueSignInCode(services, mailer, email, attemptId).catch((error) => {
    log.error({ component: 'signin', error: errorSummary(error) }, 'sign-in code not issued')
  })
  return { attemptId, email, issued }
}

/** When an account uses the address: its code stored under the attempt id (replacing any pending one) and mailed. */
async function issueSignInCode(services: Services, mailer: Mailer, email: string, attemptId: string): Promise<void> {
  const [account] = await services.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.email, email)).limit(1)
  if (!account) return
  const code = generateCode()
  const now = new Date(services.now())
  await services.db.transaction(async (tx) => {
    await tx.update(signInCodes).set({ usedAt: now }).where(and(eq(signInCodes.accountId, account.id), isNull(signInCodes.usedAt)))
    await tx.insert(signInCodes).values({
      id: attemptId,
      accountId: account.id,
      codeHash: hashSignInCode(services.config, attemptId, account.id, code),
      expiresAt: new Date(now.getTime() + SIGN_IN_CODE_TTL_MS),
      createdAt: now,
    })
  })
  try {
    await mailer.send(signInMail(email, code, services.config.publicApiUrl))
  } catch (error) {
    // Nobody received this code: retire it. The person sees no mail and asks again.
    log.error({ component: 'mail', error: errorSummary(error) }, 'sign-in code not delivered')
    await useCode(services.db, signInCodes, attemptId, now).catch(() => {})
  }
}

export type CodeCheck =
  | { ok: true; accountId: string }
  /** Wrong, expired, replaced or never issued: one answer for all, with the attempts left. */
  | { ok: false; reason: 'wrong'; remaining: number }
  | { ok: false; reason: 'exhausted' }
  | { ok: false; reason: 'malformed' }

/**
 * Checks a code. The attempt is counted (atomically, capped) before the comparison, so parallel guesses
 * cannot exceed five; on success the code is used up in the same guarded update, so it works once.
 */
export async function checkSignInCode(services: Services, attemptId: string, rawCode: string): Promise<CodeCheck> {
  const code = readCode(rawCode)
  if (!isAttemptId(attemptId) || code === null) return { ok: false, reason: 'malformed' }
  const now = new Date(services.now())
  const counted = await countAttempt(services.db, signInCodes, attemptId)
  if (!counted) {
    const [row] = await services.db.select({ usedAt: signInCodes.usedAt }).from(signInCodes).where(eq(signInCodes.id, attemptId)).limit(1)
    if (row && row.usedAt === null) return { ok: false, reason: 'exhausted' }
    return unknownAttempt(services, attemptId)
  }
  const right = counted.expiresAt > now && sameSecret(counted.codeHash, hashSignInCode(services.config, attemptId, counted.accountId, code))
  if (!right) return wrong(MAX_SIGN_IN_ATTEMPTS - counted.attempts)
  // Used by a parallel request with the same code a moment ago: that one signed in.
  if (!(await useCode(services.db, signInCodes, attemptId, now))) return wrong(MAX_SIGN_IN_ATTEMPTS - counted.attempts)
  return { ok: true, accountId: counted.accountId }
}

function wrong(remaining: number): CodeCheck {
  return remaining <= 0 ? { ok: false, reason: 'exhausted' } : { ok: false, reason: 'wrong', remaining }
}

/** No pending code behind this id: counted like a real one, so the answers cannot tell them apart. */
async function unknownAttempt(services: Services, attemptId: string): Promise<CodeCheck> {
  let hit: LimitResult
  try {
    hit = await services.limiter.hit(`signin:unknown-attempt:${attemptId}`, MAX_SIGN_IN_ATTEMPTS, UNKNOWN_ATTEMPT_WINDOW_MS)
  } catch {
    throw new ApiError('SERVICE_UNAVAILABLE', 'The rate limiter is unavailable; retry shortly.', { retryAfter: 1 })
  }
  return hit.allowed ? wrong(hit.remaining) : { ok: false, reason: 'exhausted' }
}
