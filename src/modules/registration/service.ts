// Turning a guest session into an account: POST /guest/register mails a six-digit code, POST
// /guest/verify checks it and creates the Free account, its first API key and the claim on the guest's
// links in one transaction.
//
// The code is a mailed one-time code (./mailed-codes.ts, as sign-in's): its HMAC binds the row id and
// the e-mail address.
import { and, desc, eq, isNull } from 'drizzle-orm'
import type { Config } from '../../../core/config'
import { isUniqueViolation } from '../../db/errors'
import { accounts, emailVerifications, guestSessions, links } from '../../db/schema'
import type { Mailer } from '../../mail/mailer'
import { verificationMail } from '../../mail/templates'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import type { GuestPrincipal as GuestSession } from '../../plugins/auth'
import { createApiKey } from '../keys/verdicts'
import { newId } from '../../lib/ids'
import { hashSecret, sameSecret } from '../../lib/secrets'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import { codePepper as pepperFor, countAttempt, generateCode, hashCode, limitWithHint, MAILED_CODE_TTL_MS, MAX_MAILED_CODE_ATTEMPTS, PER_ADDRESS_RATES, readCode, useCode } from './mailed-codes'

export { generateCode, hashCode }
export const CODE_TTL_MS = MAILED_CODE_TTL_MS
export const MAX_CODE_ATTEMPTS = MAX_MAILED_CODE_ATTEMPTS

/**
 * Sending codes. Per guest: 5 an hour (a guest token cannot mail-bomb many addresses). Per address:
 * one a minute and 5 an hour (nobody can flood an inbox, whatever the number of guest tokens).
 */
export const REGISTER_RATES = {
  perGuest: { limit: 5, windowMs: 3_600_000 },
  ...PER_ADDRESS_RATES,
} as const

export const ACCOUNT_EMAIL_CONSTRAINT = 'accounts_email_unique'

export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase()
}

/** The pepper of verification codes. */
export function codePepper(config: Pick<Config, 'internalSecret'>): Buffer {
  return pepperFor(config, 'email-verification-code/v1')
}

async function emailTaken(services: Pick<Services, 'db'>, email: string): Promise<boolean> {
  const [row] = await services.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.email, email)).limit(1)
  return row !== undefined
}

const guestMeta = { account_type: 'guest' }

/** The limit's hint, and the guest's meta on the answer. */
const limit = (services: Services, key: string, rate: { limit: number; windowMs: number }, hint: string) => limitWithHint(services, key, rate, hint, { meta: guestMeta })

/** Issues a new code for (guest, e-mail), replacing any earlier one, and mails it. */
export async function requestVerificationCode(services: Services, mailer: Mailer, guest: GuestSession, rawEmail: string) {
  const email = normalizeEmail(rawEmail)
  await limit(services, `register:guest:${guest.id}`, REGISTER_RATES.perGuest, 'This guest token has asked for too many codes; retry later.')
  if (await emailTaken(services, email)) throw new ApiError('EMAIL_TAKEN', undefined, { meta: guestMeta })
  // Addresses are keyed by their hash: the limiter's store never holds them in clear.
  const emailKey = hashSecret(email)
  await limit(services, `register:email-minute:${emailKey}`, REGISTER_RATES.perEmailMinute, 'A code was sent to this address less than a minute ago; wait before asking again.')
  await limit(services, `register:email-hour:${emailKey}`, REGISTER_RATES.perEmailHour, 'Too many codes were sent to this address this hour; retry later.')

  const id = newId('emailVerification')
  const code = generateCode()
  const now = new Date(services.now())
  const expiresAt = new Date(now.getTime() + CODE_TTL_MS)
  await services.db.transaction(async (tx) => {
    await tx
      .update(emailVerifications)
      .set({ usedAt: now })
      .where(and(eq(emailVerifications.guestId, guest.id), eq(emailVerifications.email, email), isNull(emailVerifications.usedAt)))
    await tx.insert(emailVerifications).values({
      id,
      guestId: guest.id,
      email,
      codeHash: hashCode(codePepper(services.config), id, email, code),
      expiresAt,
      createdAt: now,
    })
  })
  try {
    await mailer.send(verificationMail(email, code, CODE_TTL_MS / 60_000))
  } catch (error) {
    // Nobody received this code: retire it. The address's one-a-minute budget is spent, hence Retry-After.
    await useCode(services.db, emailVerifications, id, now)
    log.error({ component: 'mail', error: errorSummary(error) }, 'verification code not delivered')
    throw new ApiError('MAIL_UNAVAILABLE', undefined, { retryAfter: REGISTER_RATES.perEmailMinute.windowMs / 1000, meta: guestMeta })
  }
  return { email, expiresAt }
}

/**
 * Checks the code and creates the account. The attempt is counted (atomically, capped) before the
 * comparison, so parallel guesses cannot exceed five. Whether the address already has an account is
 * told only to the holder of its right code (409): verify cannot be used to probe addresses.
 */
export async function verifyEmailCode(services: Services, guest: GuestSession, rawEmail: string, rawCode: string) {
  const email = normalizeEmail(rawEmail)
  const code = readCode(rawCode)
  const now = new Date(services.now())
  const [pending] = await services.db
    .select()
    .from(emailVerifications)
    .where(and(eq(emailVerifications.guestId, guest.id), eq(emailVerifications.email, email), isNull(emailVerifications.usedAt)))
    .orderBy(desc(emailVerifications.createdAt))
    .limit(1)
  if (!pending) {
    throw new ApiError(
      'INVALID_CODE',
      'No code is waiting for this e-mail address and guest token (never requested, replaced by a newer one, or used); request one with POST /api/v1/guest/register.',
      { remaining: null, meta: guestMeta },
    )
  }
  if (pending.attempts >= MAX_CODE_ATTEMPTS) throw tooManyAttempts()
  if (pending.expiresAt <= now) throw new ApiError('CODE_EXPIRED', undefined, { meta: guestMeta })
  if (code === null) {
    throw new ApiError('INVALID_CODE', 'The code is the six digits from the e-mail.', { remaining: MAX_CODE_ATTEMPTS - pending.attempts, meta: guestMeta })
  }

  const counted = await countAttempt(services.db, emailVerifications, pending.id)
  if (!counted) {
    // Not counted: out of attempts, or used by a parallel verify since it was read.
    const [current] = await services.db.select({ usedAt: emailVerifications.usedAt }).from(emailVerifications).where(eq(emailVerifications.id, pending.id))
    if (current?.usedAt) throw new ApiError('INVALID_CODE', 'This code has just been used.', { remaining: null, meta: guestMeta })
    throw tooManyAttempts()
  }
  if (!sameSecret(pending.codeHash, hashCode(codePepper(services.config), pending.id, email, code))) {
    const remaining = MAX_CODE_ATTEMPTS - counted.attempts
    if (remaining === 0) throw tooManyAttempts()
    throw new ApiError('INVALID_CODE', `Wrong code; ${remaining} attempt${remaining === 1 ? '' : 's'} left.`, { remaining, limit: MAX_CODE_ATTEMPTS, meta: guestMeta })
  }
  // Registered meanwhile (from another guest session): the unique constraint would say so too.
  if (await emailTaken(services, email)) throw new ApiError('EMAIL_TAKEN', undefined, { meta: guestMeta })
  return createAccountFromGuest(services, guest, email, pending.id, now)
}

function tooManyAttempts(): ApiError {
  return new ApiError('TOO_MANY_ATTEMPTS', undefined, {
    remaining: 0,
    limit: MAX_CODE_ATTEMPTS,
    // A new code can be asked for once the address's one-a-minute window has passed.
    retryAfter: REGISTER_RATES.perEmailMinute.windowMs / 1000,
    meta: guestMeta,
  })
}

/**
 * One transaction: the account (the unique e-mail decides a race: the loser gets 409), the code used up,
 * the first API key, the guest's links claimed, and the guest session retired (its token stops working:
 * the session has become the account). The links' cache records do not change: a new account is Free.
 */
async function createAccountFromGuest(services: Services, guest: GuestSession, email: string, verificationId: string, now: Date) {
  try {
    return await services.db.transaction(async (tx) => {
      const [account] = await tx
        .insert(accounts)
        .values({ id: newId('account'), email, plan: 'free', createdAt: now })
        .returning({ id: accounts.id })
      if (!(await useCode(tx, emailVerifications, verificationId, now))) throw new ApiError('INVALID_CODE', 'This code has just been used.', { remaining: null, meta: guestMeta })
      const apiKey = await createApiKey(tx, account!.id, now)
      const claimed = await tx
        .update(links)
        .set({ accountId: account!.id })
        .where(and(eq(links.guestId, guest.id), isNull(links.accountId)))
        .returning({ id: links.id })
      await tx.update(guestSessions).set({ expiresAt: now }).where(eq(guestSessions.id, guest.id))
      return { accountId: account!.id, apiKey, linksClaimed: claimed.length }
    })
  } catch (error) {
    if (isUniqueViolation(error, ACCOUNT_EMAIL_CONSTRAINT)) throw new ApiError('EMAIL_TAKEN', undefined, { meta: guestMeta })
    throw error
  }
}
