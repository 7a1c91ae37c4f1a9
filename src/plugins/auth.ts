// Bearer authentication as a route option. A route says what it accepts and receives the caller ready
// to use:
//   { guest: … }           gt_ guest tokens                     → the handler gets `guest`
//   { account: … }         mk_ API keys and at_ Agent tokens    → the handler gets `account`
//   { guestOrAccount: … }  any of those                         → the handler gets `principal` (kind: guest | account)
//   { human: true }        an API key or the signed-in session  → the handler gets `account`
// Every mode that takes an account also takes the signed-in session (the dashboard's credential) when no
// Authorization header is sent; its writes need X-CSRF-Token. Only `human` refuses at_ tokens.
// The option's value is the route's RouteAccess (plugins/principal.ts): what an Agent's token needs
// there. Every handler also gets `principal`, which the idempotency plugin scopes its keys by. The token
// is checked in the transform step, before body validation, so an unauthenticated caller learns nothing
// about the endpoint but "401".
//
// This plugin knows no token kind itself: authenticators are injected, one per token prefix (the guest
// module answers for gt_, the account module for mk_, the agents module for at_), so a new kind of
// credential is one more authenticator. It imports no module. Once a principal is known, what happens
// to an Agent's call (scopes, approval hold, audit) is plugins/agent-calls.ts.
import { Elysia } from 'elysia'
import { sameSecret } from '../lib/secrets'
import { startClock, type AgentCalls, type CallClock } from './agent-calls'
import { ApiError } from './errors'
import { onBehalfOf } from './on-behalf'
import { callerKind, noteCaller } from './request-log'
import type { Principal, PrincipalKind, RouteAccess } from './principal'

export type { AccountPrincipal, AgentGrant, GuestPrincipal, Principal, PrincipalKind, RouteAccess, SessionGrant } from './principal'

export interface Authenticator {
  /** The token prefix it answers for (`gt_`, `mk_`, `at_`). */
  prefix: string
  kind: PrincipalKind
  /** Who is calling; throws ApiError (401 UNAUTHORIZED, 429) when the token is not good for a request. */
  authenticate(token: string): Promise<Principal>
}

/**
 * What a route accepts, named as its route option (the document's `x-auth`): `account` is an API key or
 * an Agent's at_ token, `human` an API key or the signed-in session, never an at_ token.
 */
export type AuthMode = 'guest' | 'account' | 'guestOrAccount' | 'human'
const MODE_KINDS: Record<AuthMode, readonly PrincipalKind[]> = { guest: ['guest'], account: ['account'], guestOrAccount: ['guest', 'account'], human: ['account'] }
const ACCEPTS: Record<AuthMode, string> = {
  guest: 'a guest token (gt_)',
  account: 'an API key (mk_), an OAuth access token (at_) or the signed-in session',
  guestOrAccount: 'a guest token (gt_), an API key (mk_), an OAuth access token (at_) or the signed-in session',
  human: 'an API key (mk_) or the signed-in session',
}

/** `Bearer <token>`: one token, case-insensitive scheme (RFC 6750 / RFC 9110 auth-scheme). */
const BEARER = /^Bearer +(\S+) *$/i
/** What our tokens look like: a short prefix and base64url. Anything else is refused without a lookup. */
const TOKEN = /^[a-z]{2}_[A-Za-z0-9_-]{16,256}$/

export function readBearer(header: string | null): string {
  if (header === null || header.trim() === '') {
    throw new ApiError('UNAUTHORIZED', 'Missing Authorization header; send Authorization: Bearer <token>.')
  }
  const token = BEARER.exec(header)?.[1]
  if (!token) throw new ApiError('UNAUTHORIZED', 'Malformed Authorization header; expected "Bearer <token>".')
  if (!TOKEN.test(token)) throw new ApiError('UNAUTHORIZED', 'Invalid token.')
  return token
}

export interface Auth {
  /** The route options `guest`, `account`, `guestOrAccount` and `human`. */
  plugin: ReturnType<typeof authMacros>
  /**
   * For a route that authenticates on its own terms (a key or something else, the MCP door): the
   * principal of the request's Authorization header, an Agent's call admitted to `access` like a route's.
   */
  authenticate(request: Request, mode: AuthMode, access: RouteAccess): Promise<Principal>
}

export interface AuthOptions {
  /** RFC 9728 metadata URL named in every 401's WWW-Authenticate, so an OAuth client can discover us. */
  resourceMetadataUrl: string
  /** The signed-in human of a request (session cookie), or null; routes in `human` mode accept it. */
  session?: (request: Request) => Promise<Principal | null>
  /** What follows an authenticated Agent's call: its scopes, its hold, its audit. */
  agentCalls: AgentCalls
}

/** The challenge of a 401 (RFC 6750 3, RFC 9728 5.1): `error="invalid_token"` only when a token was sent. */
function unauthorized(error: ApiError, resourceMetadataUrl: string, tokenSent: boolean): ApiError {
  const challenge = `Bearer resource_metadata="${resourceMetadataUrl}"${tokenSent ? ', error="invalid_token"' : ''}`
  return new ApiError(error.code, error.hint, { ...error.extra, headers: { ...error.extra.headers, 'www-authenticate': challenge } })
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
const sent = (header: string | null) => header !== null && header.trim() !== ''

export function createAuth(authenticators: readonly Authenticator[], options: AuthOptions): Auth {
  const { resourceMetadataUrl, agentCalls } = options
  async function byToken(mode: AuthMode, header: string | null): Promise<Principal> {
    try {
      const token = readBearer(header)
      const authenticator = authenticators.find((a) => token.startsWith(a.prefix))
      if (!authenticator) throw new ApiError('UNAUTHORIZED', `Invalid or unknown token; this endpoint accepts ${ACCEPTS[mode]}.`)
      if (!MODE_KINDS[mode].includes(authenticator.kind)) {
        throw new ApiError('UNAUTHORIZED', `This endpoint needs ${ACCEPTS[mode]}; ${authenticator.prefix} tokens are not accepted.`)
      }
      return await authenticator.authenticate(token)
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) throw unauthorized(error, resourceMetadataUrl, sent(header))
      throw error
    }
  }
  /**
   * A request the app made to itself for a caller it already authenticated (plugins/on-behalf.ts, an MCP
   * tool's call): that principal, held to this route's mode, without a second lookup of the token or a
   * second hit on its rate limit. Null for every request that came from outside.
   */
  function delegated(mode: AuthMode, request: Request): Principal | null {
    const principal = onBehalfOf(request)?.principal
    if (!principal) return null
    if (!MODE_KINDS[mode].includes(principal.kind)) throw unauthorized(new ApiError('UNAUTHORIZED', `This endpoint needs ${ACCEPTS[mode]}.`), resourceMetadataUrl, true)
    return principal
  }
  /**
   * A request to a route an account may call (account, guestOrAccount, human): the bearer token if one is
   * sent, else the signed-in session (the dashboard's credential), whose writes need the CSRF token. A
   * cookie rides along with every request the browser makes to this origin, including those another site
   * triggers, hence the token on writes; reads are safe from other sites since none of these routes
   * answers CORS with credentials, so a page elsewhere cannot read the answer.
   */
  async function sessionOrToken(mode: AuthMode, request: Request): Promise<Principal> {
    const header = request.headers.get('authorization')
    if (!sent(header) && options.session && MODE_KINDS[mode].includes('account')) {
      const principal = await options.session(request)
      if (principal?.kind === 'account' && principal.session) {
        const csrf = request.headers.get('x-csrf-token')
        if (!SAFE_METHODS.has(request.method) && (csrf === null || !sameSecret(csrf, principal.session.csrfToken))) throw new ApiError('CSRF_TOKEN_INVALID')
        return principal
      }
    }
    return byToken(mode, header)
  }
  /** The request's principal, admitted to the route's access (an Agent's call is captured, accepted or refused). */
  async function admitted(request: Request, mode: AuthMode, access: RouteAccess, clock: CallClock = startClock()): Promise<Principal> {
    let principal: Principal
    try {
      principal = delegated(mode, request) ?? (await sessionOrToken(mode, request))
    } catch (error) {
      agentCalls.refused(request, error, access, clock)
      throw error
    }
    noteCaller(request, callerKind(principal))
    agentCalls.admit(request, principal, mode === 'human' ? true : access, clock)
    return principal
  }
  return { plugin: authMacros(admitted, agentCalls), authenticate: (request, mode, access) => admitted(request, mode, access) }
}

function authMacros(admitted: (request: Request, mode: AuthMode, access: RouteAccess) => Promise<Principal>, agentCalls: AgentCalls) {
  // transform cannot add typed context, so it leaves the principal here for resolve to hand over.
  const principals = new WeakMap<Request, Principal>()
  const guard = (mode: AuthMode, access: RouteAccess) => ({
    detail: {
      security: mode === 'guest' ? [{ bearerAuth: [] }] : [{ bearerAuth: [] }, { sessionCookie: [] }],
      'x-auth': mode,
      ...(access !== true && access.scopes.length > 0 && { 'x-scopes': access.scopes }),
      ...(access !== true && access.operation && { 'x-operation': access.operation }),
      // Read by plugins/query.ts: the one place that decides whether a request is a dry run.
      ...(access !== true && access.dryRun && { 'x-dry-run': true }),
    } as Record<string, unknown>,
    async transform({ request, set }: { request: Request; set: { headers: Record<string, unknown> } }) {
      const principal = await admitted(request, mode, access)
      Object.assign(set.headers, principal.rateHeaders)
      principals.set(request, principal)
    },
    // After validation (a held call is a valid one), before the route and its idempotency claim.
    ...(access !== true &&
      access.operation && {
        async beforeHandle({ request, body }: { request: Request; body: unknown }) {
          const principal = principals.get(request)
          if (principal) return agentCalls.hold(request, principal, access, body)
        },
      }),
  })
  const principalOf = (request: Request): Principal => {
    const principal = principals.get(request)
    if (!principal) throw new ApiError('UNAUTHORIZED')
    return principal
  }
  const accountOf = (request: Request) => {
    const principal = principalOf(request)
    if (principal.kind !== 'account') throw new ApiError('UNAUTHORIZED')
    return { principal, account: principal.account }
  }
  return new Elysia({ name: 'plugins.auth' }).macro({
    guest: (access: RouteAccess) => ({
      ...guard('guest', access),
      resolve({ request }) {
        const principal = principalOf(request)
        if (principal.kind !== 'guest') throw new ApiError('UNAUTHORIZED')
        return { principal, guest: principal.guest }
      },
    }),
    account: (access: RouteAccess) => ({
      ...guard('account', access),
      resolve: ({ request }) => accountOf(request),
    }),
    guestOrAccount: (access: RouteAccess) => ({
      ...guard('guestOrAccount', access),
      resolve: ({ request }) => ({ principal: principalOf(request) }),
    }),
    /** The human owner: an API key or the signed-in session; an at_ token is 403 HUMAN_ONLY. */
    human: (access: true) => ({
      ...guard('human', access),
      resolve: ({ request }) => accountOf(request),
    }),
  })
}
