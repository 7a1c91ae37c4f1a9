// Human sessions: what a person who signed in (e-mail code, GitHub, Google) carries in a cookie. The
// cookie holds a random token; human_sessions holds only its SHA-256, so a database dump opens no
// session. A session lives SESSION_TTL_MS from sign-in (no sliding renewal) unless signed out.
//
// CSRF: a session's token is an HMAC of its id under a key derived from INTERNAL_SECRET, so it is stored
// nowhere, differs per session and cannot be computed without the secret. Forms carry it in a hidden
// field; API calls made with the cookie carry it in X-CSRF-Token (the auth plugin checks it).
import { createHmac } from 'node:crypto'
import { and, eq, gt, isNull } from 'drizzle-orm'
import type { Config } from '../../../core/config'
import { accounts, humanSessions, type Plan } from '../../db/schema'
import { newId } from '../../lib/ids'
import { hashSecret, randomBase64url, sameSecret } from '../../lib/secrets'
import type { Principal, SessionGrant } from '../../plugins/auth'
import { noteCaller } from '../../plugins/request-log'
import type { Services } from '../../services'
import { limitCredential } from '../../plugins/request-limit'
import { clearCookie, readCookieOf, setCookie } from './cookies'

/** A week: long enough not to ask people every day, short enough that a forgotten device lets go. */
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000

export type SignInMethod = 'email-code' | 'github' | 'google'

/** hs_ ("human session") and 32 random bytes, so a leaked cookie value is recognisable. */
const SESSION_TOKEN_PREFIX = 'hs_'
const SESSION_TOKEN = /^hs_[A-Za-z0-9_-]{43}$/

export interface Session {
  id: string
  method: string
  expiresAt: Date
  account: { id: string; email: string; plan: Plan }
  csrfToken: string
}

function csrfKey(config: Pick<Config, 'internalSecret'>): Buffer {
  return createHmac('sha256', config.internalSecret).update('session-csrf/v1').digest()
}

/** The CSRF token of a session: derived, never stored. */
export function csrfTokenFor(config: Pick<Config, 'internalSecret'>, sessionId: string): string {
  return createHmac('sha256', csrfKey(config)).update(sessionId).digest('base64url')
}

/**
 * Whether `token` is the CSRF token of the signed-in session, in constant time. A principal without a
 * session (an API key's) has no CSRF token: false, so a caller cannot skip the check by mistake.
 */
export function checkCsrf(holder: Principal | SessionGrant | Session | null | undefined, token: unknown): boolean {
  const expected = !holder ? undefined : 'kind' in holder ? (holder.kind === 'account' ? holder.session?.csrfToken : undefined) : holder.csrfToken
  if (expected === undefined || typeof token !== 'string' || token === '') return false
  return sameSecret(token, expected)
}

/** Thrown by createSession for an account an operator has suspended (docs/operators.md): no sign-in. */
export class AccountSuspendedError extends Error {
  constructor() {
    super('account suspended')
    this.name = 'AccountSuspendedError'
  }
}

/**
 * Starts a session for the account; the token goes into the cookie and nowhere else. Throws
 * AccountSuspendedError while an operator has suspended the account. The account's row is read FOR
 * SHARE, so a suspension committing meanwhile is either waited for (and seen) or waits for this session
 * (and revokes it).
 */
export async function createSession(services: Pick<Services, 'db' | 'now'>, accountId: string, method: SignInMethod) {
  const token = SESSION_TOKEN_PREFIX + randomBase64url(32)
  const now = new Date(services.now())
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS)
  const id = newId('session')
  return services.db.transaction(async (tx) => {
    const [account] = await tx.select({ suspendedAt: accounts.suspendedAt }).from(accounts).where(eq(accounts.id, accountId)).for('share')
    if (account?.suspendedAt) throw new AccountSuspendedError()
    await tx.insert(humanSessions).values({ id, tokenHash: hashSecret(token), accountId, method, expiresAt, createdAt: now })
    return { id, token, expiresAt }
  })
}

/** Set-Cookie for a new session: Max-Age is the session's whole life. */
export function sessionCookie(config: Pick<Config, 'publicApiUrl'>, token: string): string {
  return setCookie(config, 'session', token, SESSION_TTL_MS / 1000)
}

export function clearSessionCookie(config: Pick<Config, 'publicApiUrl'>): string {
  return clearCookie(config, 'session')
}

/** The live session of the request's cookie (not revoked, not expired, account still there), or null. */
export async function readSession(services: Pick<Services, 'db' | 'config' | 'now'>, request: Request): Promise<Session | null> {
  const token = readCookieOf(services.config, request, 'session')
  if (token === null || !SESSION_TOKEN.test(token)) return null
  const [row] = await services.db
    .select({ id: humanSessions.id, method: humanSessions.method, expiresAt: humanSessions.expiresAt, accountId: accounts.id, email: accounts.email, plan: accounts.plan })
    .from(humanSessions)
    .innerJoin(accounts, eq(accounts.id, humanSessions.accountId))
    .where(and(eq(humanSessions.tokenHash, hashSecret(token)), isNull(humanSessions.revokedAt), gt(humanSessions.expiresAt, new Date(services.now()))))
    .limit(1)
  if (!row) return null
  // The request's log line says a session called (pages read it here, API routes through plugins/auth.ts).
  noteCaller(request, 'session')
  return {
    id: row.id,
    method: row.method,
    expiresAt: row.expiresAt,
    account: { id: row.accountId, email: row.email, plan: row.plan },
    csrfToken: csrfTokenFor(services.config, row.id),
  }
}

/**
 * The principal of the request's session cookie, for routes that accept "an API key or the signed-in
 * human", or null when there is no valid session. Counts one request against the session's window (the
 * plan's requests a minute, or SESSION_REQUESTS_PER_MINUTE when higher: the dashboard's); over it,
 * throws RATE_LIMITED.
 */
export async function sessionPrincipal(services: Services, request: Request): Promise<Principal | null> {
  const session = await readSession(services, request)
  if (!session) return null
  const { account } = session
  const credentialId = `ses:${session.id}`
  return {
    kind: 'account',
    account: { id: account.id, email: account.email, plan: account.plan },
    session: { sessionId: session.id, csrfToken: session.csrfToken },
    rateHeaders: await limitCredential(services, credentialId, account.plan, services.config.limits.sessionRequestsPerMinute),
    credentialId,
  }
}

/** Ends a session at once (sign-out); true when it was live. */
export async function revokeSession(services: Pick<Services, 'db' | 'now'>, sessionId: string): Promise<boolean> {
  const revoked = await services.db
    .update(humanSessions)
    .set({ revokedAt: new Date(services.now()) })
    .where(and(eq(humanSessions.id, sessionId), isNull(humanSessions.revokedAt)))
    .returning({ id: humanSessions.id })
  return revoked.length > 0
}
