// Bearer authentication as a route option. A route says what it accepts and receives the caller ready
// to use:
//   { guest: true }           gt_ guest tokens          → the handler gets `guest`
//   { account: true }         mk_ API keys              → the handler gets `account`
//   { guestOrAccount: true }  either                    → the handler gets `principal` (kind: guest | account)
// Every handler also gets `principal`, which the idempotency plugin scopes its keys by. The token is
// checked in the transform step, before body validation, so an unauthenticated caller learns nothing
// about the endpoint but "401".
//
// This plugin knows no token kind itself: authenticators are injected, one per token prefix (the guest
// module answers for gt_, the account module for mk_), so a new kind of credential is one more
// authenticator. It imports no module. The `scopes` slot of the options is where OAuth scopes go; a
// route that declares none accepts every credential of its kind.
import { Elysia } from 'elysia'
import type { Plan } from '../db/schema'
import { sameSecret } from '../lib/secrets'
import { ApiError } from './errors'
import { onBehalfOf } from './on-behalf'
import { isDryRun } from './query'

/** A guest session: what a gt_ token unlocks (its counters as of this request). */
export interface GuestPrincipal {
  id: string
  expiresAt: Date
  requestCount: number
  linkCount: number
}

/**
 * The account behind a credential, and the credential's own id: an API key's (key_…), an Agent's
 * (agt_…) for an at_ token, a session's (ses_…) for a signed-in human. Per-credential state (the
 * request window shown by account status) is keyed by it.
 */
export interface AccountPrincipal {
  id: string
  email: string
  plan: Plan
  keyId: string
}

/** What an at_ token carries: the Agent it belongs to and the scopes it holds now (token ∩ Agent). */
export interface AgentGrant {
  agentId: string
  tokenId: string
  /** The OAuth client the token was issued to; null for a token the human minted directly. */
  clientId: string | null
  scopes: readonly string[]
  /** Operations the Agent's policy holds for a human decision (`links.delete`, …). */
  requireApproval: readonly string[]
  /** Set when this request is the execution of an approved one: it is not held again. */
  approvalId?: string
}

/** A signed-in human (session cookie): state-changing calls must carry its CSRF token. */
export interface SessionGrant {
  sessionId: string
  csrfToken: string
}

interface Authenticated {
  /** X-RateLimit-* of this request: the credential's window, counted by its authenticator. */
  rateHeaders: Record<string, string>
  /** What idempotency keys and other per-credential state are scoped by, e.g. `mk:key_…`. */
  credentialId: string
}

export type Principal =
  | ({ kind: 'guest'; guest: GuestPrincipal } & Authenticated)
  | ({ kind: 'account'; account: AccountPrincipal; agent?: AgentGrant; session?: SessionGrant } & Authenticated)

export type PrincipalKind = Principal['kind']

export interface Authenticator {
  /** The token prefix it answers for (`gt_`, `mk_`). */
  prefix: string
  kind: PrincipalKind
  /** Who is calling; throws ApiError (401 UNAUTHORIZED, 429) when the token is not good for a request. */
  authenticate(token: string): Promise<Principal>
}

/**
 * What a route accepts, by principal kind (the document's `x-auth`, which spec section 4 calls gt, mk,
 * gt/mk; `human` is an API key or the signed-in session, never an Agent's at_ token).
 */
export type AuthMode = 'gt' | 'mk' | 'gt/mk' | 'human'
const MODE_KINDS: Record<AuthMode, readonly PrincipalKind[]> = { gt: ['guest'], mk: ['account'], 'gt/mk': ['guest', 'account'], human: ['account'] }
const ACCEPTS: Record<AuthMode, string> = {
  gt: 'a guest token (gt_)',
  mk: 'an API key (mk_) or an OAuth access token (at_)',
  'gt/mk': 'a guest token (gt_), an API key (mk_) or an OAuth access token (at_)',
  human: 'an API key (mk_) or the signed-in session',
}

/**
 * A route's auth option: `true`, or the OAuth scope an `at_` token needs for it (DESIGN's route → scope
 * table, shown in the document). Guest tokens, API keys and sessions hold every scope of their kind; an
 * at_ token is refused (403 HUMAN_ONLY) by a route that names no scope.
 */
export type AuthOption =
  | true
  | {
      scopes: readonly string[]
      operation?: string
      /** The route answers `?dry_run=true` with a preview that writes nothing (plugins/query.ts refuses the flag elsewhere). */
      dryRun?: true
    }

/** An Agent's call to an operation its policy holds: what the hold hook needs to keep it for a human. */
export interface HeldCall {
  principal: Principal & { kind: 'account'; agent: AgentGrant }
  operation: string
  scopes: readonly string[]
  request: Request
  body: unknown
  /** Its route can preview it (a dry run), so the hold may check it before keeping it. */
  previews: boolean
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
   * For a route that authenticates on its own terms (a key or something else): the principal of a
   * header, held to `scopes` when it is an Agent's token.
   */
  authenticate(mode: AuthMode, header: string | null, option?: AuthOption): Promise<Principal>
  /** The Agent call a request made, accepted or refused (undefined for every other caller). */
  agentCall(request: Request): AgentCall | undefined
}

/** An Agent's call, accepted or refused, as its audit event needs it. */
export interface AgentCall {
  accountId: string
  agentId: string
  /** The route's policy operation, else its scope as a name (`links.read`). */
  operation: string
  scopes: readonly string[]
  /** The approval this call created (a 202) or executes. */
  approvalId?: string
  /** Unix ms and performance.now() when the request reached authentication. */
  at: number
  started: number
}

export interface AuthOptions {
  /** RFC 9728 metadata URL named in every 401's WWW-Authenticate, so an OAuth client can discover us. */
  resourceMetadataUrl: string
  /** The signed-in human of a request (session cookie), or null; routes in `human` mode accept it. */
  session?: (request: Request) => Promise<Principal | null>
  /**
   * Keeps an Agent's call to an operation its policy names for a human decision: answers the 202 (and
   * the route does not run), or null to let it run. Not called for a dry run or an approved execution.
   */
  hold?: (call: HeldCall) => Promise<{ response: Response; approvalId?: string } | null>
}

/** The challenge of a 401 (RFC 6750 3, RFC 9728 5.1): `error="invalid_token"` only when a token was sent. */
function unauthorized(error: ApiError, resourceMetadataUrl: string, tokenSent: boolean): ApiError {
  const challenge = `Bearer resource_metadata="${resourceMetadataUrl}"${tokenSent ? ', error="invalid_token"' : ''}`
  return new ApiError(error.code, error.hint, { ...error.extra, headers: { ...error.extra.headers, 'www-authenticate': challenge } })
}

/** An Agent's token on a route: within the route's scope, and never on a human-only route. */
function requireScopes(principal: Principal, option: AuthOption, resourceMetadataUrl: string): void {
  if (principal.kind !== 'account' || !principal.agent) return
  if (option === true) throw new ApiError('HUMAN_ONLY')
  const missing = option.scopes.filter((scope) => !principal.agent!.scopes.includes(scope))
  if (missing.length === 0) return
  throw new ApiError('INSUFFICIENT_SCOPE', `This token lacks the scope ${missing.join(' ')}; authorize again asking for it.`, {
    headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${option.scopes.join(' ')}", resource_metadata="${resourceMetadataUrl}"` },
    data: { required_scopes: [...option.scopes] },
  })
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export function createAuth(authenticators: readonly Authenticator[], options: AuthOptions): Auth {
  const { resourceMetadataUrl } = options
  async function byToken(mode: AuthMode, header: string | null): Promise<Principal> {
    const token = readBearer(header)
    const authenticator = authenticators.find((a) => token.startsWith(a.prefix))
    if (!authenticator) throw new ApiError('UNAUTHORIZED', `Invalid or unknown token; this endpoint accepts ${ACCEPTS[mode]}.`)
    if (!MODE_KINDS[mode].includes(authenticator.kind)) {
      throw new ApiError('UNAUTHORIZED', `This endpoint needs ${ACCEPTS[mode]}; ${authenticator.prefix} tokens are not accepted.`)
    }
    return authenticator.authenticate(token)
  }
  async function authenticate(mode: AuthMode, header: string | null, option: AuthOption = true): Promise<Principal> {
    let principal: Principal
    try {
      principal = await byToken(mode, header)
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) throw unauthorized(error, resourceMetadataUrl, header !== null && header.trim() !== '')
      throw error
    }
    requireAgentScopes(principal, mode, option)
    return principal
  }
  /** requireScopes, naming the Agent on a refusal so that its audit event is written. */
  function requireAgentScopes(principal: Principal, mode: AuthMode, option: AuthOption): void {
    try {
      requireScopes(principal, mode === 'human' ? true : option, resourceMetadataUrl)
    } catch (error) {
      if (error instanceof ApiError && principal.kind === 'account' && principal.agent) {
        error.extra.agent = { accountId: principal.account.id, agentId: principal.agent.agentId }
      }
      throw error
    }
  }
  /**
   * A request the app made to itself for a caller it already authenticated (plugins/on-behalf.ts, an MCP
   * tool's call): that principal, held to this route's mode and scopes, without a second lookup of the
   * token or a second hit on its rate limit. Null for every request that came from outside.
   */
  function delegated(mode: AuthMode, option: AuthOption, request: Request): Principal | null {
    const principal = onBehalfOf(request)?.principal
    if (!principal) return null
    if (!MODE_KINDS[mode].includes(principal.kind)) throw unauthorized(new ApiError('UNAUTHORIZED', `This endpoint needs ${ACCEPTS[mode]}.`), resourceMetadataUrl, true)
    requireAgentScopes(principal, mode, option)
    return principal
  }
  /** A human-mode request: the bearer key if one is sent, else the session (whose writes need the CSRF token). */
  async function human(request: Request): Promise<Principal> {
    const header = request.headers.get('authorization')
    if ((header === null || header.trim() === '') && options.session) {
      const principal = await options.session(request)
      if (principal?.kind === 'account' && principal.session) {
        const sent = request.headers.get('x-csrf-token')
        if (!SAFE_METHODS.has(request.method) && (sent === null || !sameSecret(sent, principal.session.csrfToken))) throw new ApiError('CSRF_TOKEN_INVALID')
        return principal
      }
    }
    return authenticate('human', header)
  }
  const calls = new WeakMap<Request, AgentCall>()
  return {
    plugin: authMacros(authenticate, human, delegated, options.hold, calls),
    authenticate,
    // A request made in process as part of another call (its preview) has no event of its own.
    agentCall: (request) => (onBehalfOf(request)?.audited === false ? undefined : calls.get(request)),
  }
}

/** The operation an audit event names: the route's policy operation, else its scope (`links:read` → `links.read`). */
function operationOf(option: AuthOption): string {
  if (option === true) return 'human_only'
  return option.operation ?? option.scopes[0]?.replace(':', '.') ?? 'agent_read'
}

function authMacros(
  authenticate: Auth['authenticate'],
  human: (request: Request) => Promise<Principal>,
  delegated: (mode: AuthMode, option: AuthOption, request: Request) => Principal | null,
  hold: AuthOptions['hold'],
  calls: WeakMap<Request, AgentCall>,
) {
  // transform cannot add typed context, so it leaves the principal here for resolve to hand over.
  const principals = new WeakMap<Request, Principal>()
  const guard = (mode: AuthMode, option: AuthOption) => ({
    detail: {
      security: mode === 'human' ? [{ bearerAuth: [] }, { sessionCookie: [] }] : [{ bearerAuth: [] }],
      'x-auth': mode,
      ...(option !== true && option.scopes.length > 0 && { 'x-scopes': option.scopes }),
      ...(option !== true && option.operation && { 'x-operation': option.operation }),
      // Read by plugins/query.ts: the one place that decides whether a request is a dry run.
      ...(option !== true && option.dryRun && { 'x-dry-run': true }),
    } as Record<string, unknown>,
    async transform({ request, set }: { request: Request; set: { headers: Record<string, unknown> } }) {
      const at = Date.now()
      const started = performance.now()
      const scopes = option === true ? [] : option.scopes
      let principal: Principal
      try {
        principal =
          delegated(mode, option, request) ??
          (mode === 'human' ? await human(request) : await authenticate(mode, request.headers.get('authorization'), option))
      } catch (error) {
        const agent = error instanceof ApiError ? error.extra.agent : undefined
        if (agent) calls.set(request, { ...agent, operation: operationOf(option), scopes, at, started })
        throw error
      }
      if (principal.kind === 'account' && principal.agent) {
        calls.set(request, {
          accountId: principal.account.id,
          agentId: principal.agent.agentId,
          operation: operationOf(option),
          scopes,
          ...(principal.agent.approvalId && { approvalId: principal.agent.approvalId }),
          at,
          started,
        })
      }
      Object.assign(set.headers, principal.rateHeaders)
      principals.set(request, principal)
    },
    // After validation (a held call is a valid one), before the route and its idempotency claim.
    ...(option !== true &&
      option.operation &&
      hold && {
        async beforeHandle({ request, body }: { request: Request; body: unknown }) {
          const principal = principals.get(request)
          if (principal?.kind !== 'account' || !principal.agent || principal.agent.approvalId) return
          if (!principal.agent.requireApproval.includes(option.operation!)) return
          if (isDryRun(request)) return
          const held = await hold({ principal: principal as HeldCall['principal'], operation: option.operation!, scopes: option.scopes, request, body, previews: option.dryRun === true })
          if (!held) return
          const call = calls.get(request)
          if (call && held.approvalId) call.approvalId = held.approvalId
          return held.response
        },
      }),
  })
  const principalOf = (request: Request): Principal => {
    const principal = principals.get(request)
    if (!principal) throw new ApiError('UNAUTHORIZED')
    return principal
  }
  return new Elysia({ name: 'plugins.auth' }).macro({
    guest: (option: AuthOption) => ({
      ...guard('gt', option),
      resolve({ request }) {
        const principal = principalOf(request)
        if (principal.kind !== 'guest') throw new ApiError('UNAUTHORIZED')
        return { principal, guest: principal.guest }
      },
    }),
    account: (option: AuthOption) => ({
      ...guard('mk', option),
      resolve({ request }) {
        const principal = principalOf(request)
        if (principal.kind !== 'account') throw new ApiError('UNAUTHORIZED')
        return { principal, account: principal.account }
      },
    }),
    guestOrAccount: (option: AuthOption) => ({
      ...guard('gt/mk', option),
      resolve({ request }) {
        return { principal: principalOf(request) }
      },
    }),
    /** The human owner: an API key or the signed-in session; an at_ token is 403 HUMAN_ONLY. */
    human: (option: true) => ({
      ...guard('human', option),
      resolve({ request }) {
        const principal = principalOf(request)
        if (principal.kind !== 'account') throw new ApiError('UNAUTHORIZED')
        return { principal, account: principal.account }
      },
    }),
  })
}
