// Who may call /api/v1/admin/…: an operator (keys/admin-scope.ts) with the signed-in session (writes send
// X-CSRF-Token) or one of their mk_ keys carrying the `admin` scope. Never an Agent's at_ token, a guest
// token, a key without `admin` (full access included) or another account's credential. Everyone else gets
// the JSON 404 of an unknown path, with or without a credential: the answer says nothing of who is an
// operator (the routes themselves are in the public OpenAPI document, as any self-hosted code is public).
//
// The verdict is taken in onRequest, before Elysia parses a body or validates anything, so a refused
// caller cannot learn the routes from a 400, a 405 or a 413 either; each route also asks for it (the
// `operator` option) and gets the same verdict, kept per request, so no route runs unguarded whatever
// spelling of its path reached it. The request window is counted only once the caller is known to be an
// operator: a stranger's credential is never answered 429 here.
import { and, eq, isNull, lt, or } from 'drizzle-orm'
import { Elysia } from 'elysia'
import { accounts, apiKeys } from '../../db/schema'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import { hashSecret, sameSecret, TOKEN_PREFIXES } from '../../lib/secrets'
import { readBearer } from '../../plugins/auth'
import { ApiError } from '../../plugins/errors'
import { noteCaller } from '../../plugins/request-log'
import { limitCredential } from '../../plugins/request-limit'
import type { Services } from '../../services'
import { readSession } from '../signin/service'
import { ADMIN_SCOPE, isOperator } from '../keys/admin-scope'

export const ADMIN_PREFIX = '/api/v1/admin'

/** The operator behind an admin call. */
export interface Operator {
  id: string
  email: string
  via: 'session' | 'key'
}

interface Verdict {
  operator: Operator
  /** Set for a session: its writes must carry this token. */
  csrfToken?: string
  rateHeaders: Record<string, string>
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
/** last_used_at of a key is written at most this often (as keys/verdicts.ts does for every other route). */
const LAST_USED_GRANULARITY_MS = 60_000

/** The JSON 404 of an unknown path, word for word (the errors plugin renders it). */
const unknownPath = () => new ApiError('NOT_FOUND')

/** Whether a request URL's path is /api/v1/admin or under it; read without parsing the URL. */
export function isAdminPath(url: string): boolean {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start < 0 || !url.startsWith(ADMIN_PREFIX, start)) return false
  const next = url.charAt(start + ADMIN_PREFIX.length)
  return next === '' || next === '/' || next === '?' || next === '#'
}

/** An mk_ key of an operator that carries `admin`, live, of an account not suspended; else null. */
async function keyOperator(services: Services, header: string): Promise<Verdict | null> {
  let token: string
  try {
    token = readBearer(header)
  } catch {
    return null
  }
  if (!token.startsWith(TOKEN_PREFIXES.apiKey)) return null
  const [row] = await services.db
    .select({ id: accounts.id, email: accounts.email, plan: accounts.plan, keyId: apiKeys.id, scopes: apiKeys.scopes, lastUsedAt: apiKeys.lastUsedAt })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(and(eq(apiKeys.keyHash, hashSecret(token)), isNull(apiKeys.revokedAt), isNull(accounts.suspendedAt)))
    .limit(1)
  if (!row?.scopes?.includes(ADMIN_SCOPE) || !isOperator(services.config, row.email)) return null
  touch(services, row.keyId, row.lastUsedAt)
  const rateHeaders = await limitCredential(services, `mk:${row.keyId}`, row.plan)
  return { operator: { id: row.id, email: row.email, via: 'key' }, rateHeaders }
}

/** Records a key's use, at most once a minute; never delays nor fails the call. */
function touch(services: Services, keyId: string, lastUsedAt: Date | null): void {
  const now = services.now()
  const stale = new Date(now - LAST_USED_GRANULARITY_MS)
  if (lastUsedAt !== null && lastUsedAt > stale) return
  services.db
    .update(apiKeys)
    .set({ lastUsedAt: new Date(now) })
    .where(and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, stale))))
    .then(
      () => undefined,
      (error: unknown) => log.error({ component: 'admin', error: errorSummary(error) }, 'last_used_at not recorded'),
    )
}

/** The signed-in session of an operator; else null. */
async function sessionOperator(services: Services, request: Request): Promise<Verdict | null> {
  const session = await readSession(services, request)
  if (!session || !isOperator(services.config, session.account.email)) return null
  const rateHeaders = await limitCredential(services, `ses:${session.id}`, session.account.plan, services.config.limits.sessionRequestsPerMinute)
  return { operator: { id: session.account.id, email: session.account.email, via: 'session' }, csrfToken: session.csrfToken, rateHeaders }
}

/** The bearer token when one is sent (never falling back to the cookie then), else the session. */
function decide(services: Services, request: Request): Promise<Verdict | null> {
  const header = request.headers.get('authorization')
  return header !== null && header.trim() !== '' ? keyOperator(services, header) : sessionOperator(services, request)
}

export function operatorGuard(services: Services) {
  const verdicts = new WeakMap<Request, Promise<Verdict | null>>()
  /** The request's operator, decided once; throws the unknown path's 404, or 403 CSRF_TOKEN_INVALID. */
  async function admit(request: Request, headers: Record<string, unknown>): Promise<Operator> {
    let pending = verdicts.get(request)
    if (!pending) verdicts.set(request, (pending = decide(services, request)))
    const verdict = await pending
    if (!verdict) throw unknownPath()
    if (verdict.csrfToken !== undefined && !SAFE_METHODS.has(request.method)) {
      const sent = request.headers.get('x-csrf-token')
      if (sent === null || !sameSecret(sent, verdict.csrfToken)) throw new ApiError('CSRF_TOKEN_INVALID')
    }
    noteCaller(request, verdict.operator.via)
    Object.assign(headers, verdict.rateHeaders)
    return verdict.operator
  }
  const operators = new WeakMap<Request, Operator>()
  return (
    new Elysia({ name: 'modules.admin.guard' })
      // onRequest hooks run for every request of the app; only admin paths are looked at.
      .onRequest(async ({ request, set }) => {
        if (isAdminPath(request.url)) operators.set(request, await admit(request, set.headers))
      })
      .macro({
        /** An admin route: the operator of the request, or the unknown path's 404. */
        operator: (_: true) => ({
          detail: { security: [{ bearerAuth: [ADMIN_SCOPE] }, { sessionCookie: [] }] } as Record<string, unknown>,
          async transform({ request, set }: { request: Request; set: { headers: Record<string, unknown> } }) {
            operators.set(request, await admit(request, set.headers))
          },
          resolve({ request }) {
            const operator = operators.get(request)
            if (!operator) throw unknownPath()
            return { operator }
          },
        }),
      })
  )
}
