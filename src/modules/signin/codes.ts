// Sign-in by a one-time code mailed to the account's address (accounts are created by e-mail
// verification, so every account's address is verified). The code is a mailed one-time code
// (registration/mailed-codes.ts, as registration's): its HMAC binds the attempt id and the account.
//
// Nobody learns from these steps whether an address has an account: every attempt id, issued for an
// account's address or not, has its wrong codes counted in the limiter before anything is looked up,
// so the answer to a code cannot depend on whether (or when) its row was written; the account lookup,
// the stored code and the mail happen after the answer (requestSignInCode), so its timing tells nothing.
//
// Nobody can lock a person out either: the limits per address count per requesting network, so a
// stranger's requests do not use up the owner's; the same client address asking again within the
// minute gets its pending code mailed again (the code is derived from the attempt, so it can be); and
// asking again never retires a code already mailed: each works until it is used or expires.
import type { LimitResult } from '../../adapters/ports'
import { createHmac } from 'node:crypto'
import { and, eq, isNull, ne } from 'drizzle-orm'
import type { Config } from '../../../core/config'
import { accounts, signInCodes } from '../../db/schema'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import { isId, newId } from '../../lib/ids'
import { networkOf } from '../../lib/network'
import { hashSecret, sameSecret } from '../../lib/secrets'
import type { Mailer, MailMessage } from '../../mail/mailer'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { codePepper, hashCode, limitWithHint, MAILED_CODE_TTL_MS, MAX_MAILED_CODE_ATTEMPTS, readCode, useCode } from '../registration/mailed-codes'
import { normalizeEmail } from '../registration/service'

export const SIGN_IN_CODE_TTL_MS = MAILED_CODE_TTL_MS
export const MAX_SIGN_IN_ATTEMPTS = MAX_MAILED_CODE_ATTEMPTS

/**
 * Mails per address and requesting network (IPv4 /24, IPv6 /56): five an hour; a repeat from the same
 * client address within the minute re-sends its pending code rather than a new one. Mails per address from every network:
 * twenty an hour, the ceiling that stops anyone flooding an inbox from many networks. Per client IP:
 * twenty requests an hour, and sixty code submissions (a person needs a handful; a guesser is stopped
 * by the five attempts per code anyway).
 */
export const SIGN_IN_RATES = {
  perAddressNetworkHour: { limit: 5, windowMs: 3_600_000 },
  perAddressHour: { limit: 20, windowMs: 3_600_000 },
  requestsPerIp: { limit: 20, windowMs: 3_600_000 },
  codesPerIp: { limit: 60, windowMs: 3_600_000 },
} as const

/** How long a request's attempt is the one the same e-mail address and client address get again. */
export const RESEND_WINDOW_SECONDS = 60

/** Wrong codes are counted per attempt for a day: far longer than any code lives. */
const ATTEMPT_WINDOW_MS = 24 * 3_600_000

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
 * Starts a sign-in for an address from a client address: returns the attempt id the code form carries.
 * The answer waits only for the limits and the pending-attempt lookup, which are the same for every
 * address. Looking the account up, storing its code and mailing it happen after, so the answer's timing
 * tells nobody whether the address has an account. Whatever fails there is logged (never the code) and
 * the person simply asks again.
 */
export async function requestSignInCode(services: Services, mailer: Mailer, rawEmail: string, clientIp: string): Promise<{ attemptId: string; email: string; resent: boolean; issued: Promise<void> }> {
  const email = normalizeEmail(rawEmail)
  // Keyed by hashes: the stores never hold the address in clear.
  const emailKey = hashSecret(email)
  const networkKey = `${emailKey}:${hashSecret(networkOf(clientIp))}`
  // The pending attempt is the requesting address's own: another address of the same network never
  // receives it (and so cannot spend its attempts).
  const pendingKey = `signin:pending:${emailKey}:${hashSecret(clientIp)}`
  const pending = await services.kv.get(pendingKey)
  const attemptId = pending !== null && isAttemptId(pending) ? pending : newId('signIn')
  const resent = attemptId === pending
  // A new code is refused past the limits; a repeat of a pending one is answered either way and mailed
  // only while the limits allow (the code mailed before still works).
  const mailAllowed = await mailBudget(services, emailKey, networkKey, !resent)
  if (!resent) await services.kv.set(pendingKey, attemptId, RESEND_WINDOW_SECONDS)
  const issued = (mailAllowed ? issueSignInCode(services, mailer, email, attemptId) : Promise.resolve()).catch((error) => {
    log.error({ component: 'signin', error: errorSummary(error) }, 'sign-in code not issued')
  })
  return { attemptId, email, resent, issued }
}

/** One mail counted against the address's limits; throws RATE_LIMITED past them when `refuse`. */
async function mailBudget(services: Services, emailKey: string, networkKey: string, refuse: boolean): Promise<boolean> {
  const limits = [
    {
      key: `signin:mail-net-hour:${networkKey}`,
      rate: SIGN_IN_RATES.perAddressNetworkHour,
      hint: 'Too many codes were asked for this address from your network this hour; use the latest code you received, or retry later.',
    },
    { key: `signin:mail-hour:${emailKey}`, rate: SIGN_IN_RATES.perAddressHour, hint: 'Too many codes were asked for this address this hour; use the latest code you received, or retry later.' },
  ]
  for (const { key, rate, hint } of limits) {
    try {
      await limitWithHint(services, key, rate, hint)
    } catch (error) {
      if (refuse || !(error instanceof ApiError && error.code === 'RATE_LIMITED')) throw error
      return false
    }
  }
  return true
}

/**
 * When an account uses the address: the attempt's code stored (once: a re-send finds it there) and
 * mailed. Codes mailed before stay valid until used or expired.
 */
async function issueSignInCode(services: Services, mailer: Mailer, email: string, attemptId: string): Promise<void> {
  const [account] = await services.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.email, email)).limit(1)
  if (!account) return
  const code = signInCode(services.config, attemptId, account.id)
  const now = new Date(services.now())
  await services.db.transaction(async (tx) => {
    await tx
      .insert(signInCodes)
      .values({
        id: attemptId,
        accountId: account.id,
        codeHash: hashSignInCode(services.config, attemptId, account.id, code),
        expiresAt: new Date(now.getTime() + SIGN_IN_CODE_TTL_MS),
        createdAt: now,
      })
      .onConflictDoNothing({ target: signInCodes.id })
  })
  try {
    await mailer.send(signInMail(email, code, services.config.publicApiUrl))
  } catch (error) {
    // Nobody received this code, unless an earlier mail of the same attempt did: it stays, and the
    // person asks again if no mail came.
    log.error({ component: 'mail', error: errorSummary(error) }, 'sign-in code not delivered')
  }
}

/**
 * The attempt's code: six digits of an HMAC of the attempt and the account under a key derived from
 * INTERNAL_SECRET, so the same attempt can be mailed again while only a hash of the code is stored.
 * 48 bits reduced modulo 10^6: the bias is below one in 10^8.
 */
function signInCode(config: Pick<Config, 'internalSecret'>, attemptId: string, accountId: string): string {
  const mac = createHmac('sha256', codePepper(config, 'sign-in-code-derivation/v1')).update(`${attemptId}\n${accountId}`).digest()
  return String(mac.readUIntBE(0, 6) % 1_000_000).padStart(6, '0')
}

export type CodeCheck =
  | { ok: true; accountId: string }
  /** Wrong, expired, used or never issued: one answer for all, with the attempts left. */
  | { ok: false; reason: 'wrong'; remaining: number }
  | { ok: false; reason: 'exhausted' }
  | { ok: false; reason: 'malformed' }

/**
 * Checks a code. The attempt is counted in the limiter (atomically, capped) before anything is looked
 * up, the same way for every attempt id, so parallel guesses cannot exceed five and the answer is the
 * same whether the code's row exists yet or not. On success the code is used up in a guarded update,
 * so it works once, and the account's other pending codes are retired with it.
 */
export async function checkSignInCode(services: Services, attemptId: string, rawCode: string): Promise<CodeCheck> {
  const code = readCode(rawCode)
  if (!isAttemptId(attemptId) || code === null) return { ok: false, reason: 'malformed' }
  let hit: LimitResult
  try {
    hit = await services.limiter.hit(`signin:attempt:${attemptId}`, MAX_SIGN_IN_ATTEMPTS, ATTEMPT_WINDOW_MS)
  } catch {
    throw new ApiError('SERVICE_UNAVAILABLE', 'The rate limiter is unavailable; retry shortly.', { retryAfter: 1 })
  }
  if (!hit.allowed) return { ok: false, reason: 'exhausted' }
  const now = new Date(services.now())
  const [row] = await services.db.select().from(signInCodes).where(eq(signInCodes.id, attemptId)).limit(1)
  const right = row !== undefined && row.usedAt === null && row.expiresAt > now && sameSecret(row.codeHash, hashSignInCode(services.config, attemptId, row.accountId, code))
  // Used by a parallel request with the same code a moment ago: that one signed in.
  if (!right || !(await useCode(services.db, signInCodes, attemptId, now))) return wrong(hit.remaining)
  await services.db
    .update(signInCodes)
    .set({ usedAt: now })
    .where(and(eq(signInCodes.accountId, row.accountId), isNull(signInCodes.usedAt), ne(signInCodes.id, attemptId)))
  return { ok: true, accountId: row.accountId }
}

function wrong(remaining: number): CodeCheck {
  return remaining <= 0 ? { ok: false, reason: 'exhausted' } : { ok: false, reason: 'wrong', remaining }
}
