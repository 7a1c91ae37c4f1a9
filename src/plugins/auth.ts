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
import { ApiError } from './errors'

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

/** What a route accepts, by principal kind (the document's `x-auth`, which spec section 4 calls gt, mk, gt/mk). */
export type AuthMode = 'gt' | 'mk' | 'gt/mk'
const MODE_KINDS: Record<AuthMode, readonly PrincipalKind[]> = { gt: ['guest'], mk: ['account'], 'gt/mk': ['guest', 'account'] }
const ACCEPTS: Record<AuthMode, string> = {
  gt: 'a guest token (gt_)',
  mk: 'an API key (mk_)',
  'gt/mk': 'a guest token (gt_) or an API key (mk_)',
}

/**
 * A route's auth option: `true`, or the OAuth scopes an `at_` token needs for it (DESIGN's route → scope
 * table; shown in the document now, enforced once `at_` tokens exist; guest tokens and API keys hold
 * every scope of their kind).
 */
export type AuthOption = true | { scopes: readonly string[] }

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
  /** The route options `guest`, `account` and `guestOrAccount`. */
  plugin: ReturnType<typeof authMacros>
  /** For a route that authenticates on its own terms (a key or something else): the principal of a header. */
  authenticate(mode: AuthMode, header: string | null): Promise<Principal>
}

export function createAuth(authenticators: readonly Authenticator[]): Auth {
  async function authenticate(mode: AuthMode, header: string | null): Promise<Principal> {
    const token = readBearer(header)
    const authenticator = authenticators.find((a) => token.startsWith(a.prefix))
    if (!authenticator) throw new ApiError('UNAUTHORIZED', `Invalid or unknown token; this endpoint accepts ${ACCEPTS[mode]}.`)
    if (!MODE_KINDS[mode].includes(authenticator.kind)) {
      throw new ApiError('UNAUTHORIZED', `This endpoint needs ${ACCEPTS[mode]}; ${authenticator.prefix} tokens are not accepted.`)
    }
    return authenticator.authenticate(token)
  }
  return { plugin: authMacros(authenticate), authenticate }
}

function authMacros(authenticate: Auth['authenticate']) {
  // transform cannot add typed context, so it leaves the principal here for resolve to hand over.
  const principals = new WeakMap<Request, Principal>()
  const guard = (mode: AuthMode, option: AuthOption) => ({
    detail: { security: [{ bearerAuth: [] }], 'x-auth': mode, ...(option !== true && { 'x-scopes': option.scopes }) } as Record<string, unknown>,
    async transform({ request, set }: { request: Request; set: { headers: Record<string, unknown> } }) {
      const principal = await authenticate(mode, request.headers.get('authorization'))
      Object.assign(set.headers, principal.rateHeaders)
      principals.set(request, principal)
    },
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
  })
}
