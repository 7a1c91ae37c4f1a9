// Who is calling, as the auth plugin hands it to routes and to what follows an Agent's call. Types
// only, shared by auth.ts (which builds principals), agent-calls.ts (which holds an Agent's call to its
// route) and on-behalf.ts (which carries one into an in-process request), so none of them imports
// another for a type.
import type { Plan } from '../db/schema'
import type { Operation, Scope } from '../lib/agent-access'

/** A guest session: what a gt_ token unlocks (its counters as of this request). */
export interface GuestPrincipal {
  id: string
  expiresAt: Date
  requestCount: number
  linkCount: number
}

/** The account behind a credential. */
export interface AccountPrincipal {
  id: string
  email: string
  plan: Plan
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

/**
 * What an mk_ key carries: its id, and the OAuth scopes it is held to, like an Agent's token
 * (plugins/agent-calls.ts); null is the account's full access, and only such a key reaches human-only routes.
 */
export interface KeyGrant {
  keyId: string
  scopes: readonly string[] | null
}

/** A signed-in human (session cookie): state-changing calls must carry its CSRF token. */
export interface SessionGrant {
  sessionId: string
  csrfToken: string
}

interface Authenticated {
  /** X-RateLimit-* of this request: the credential's window, counted by its authenticator. */
  rateHeaders: Record<string, string>
  /**
   * The credential itself, by kind and id (`gt:guest_…`, `mk:key_…`, `at:agt_…`, `ses:ses_…`): its
   * request window, idempotency keys and other per-credential state are keyed by it.
   */
  credentialId: string
}

export type Principal =
  | ({ kind: 'guest'; guest: GuestPrincipal } & Authenticated)
  | ({ kind: 'account'; account: AccountPrincipal; agent?: AgentGrant; key?: KeyGrant; session?: SessionGrant } & Authenticated)

export type PrincipalKind = Principal['kind']

/** An Agent's principal (an at_ token, or the approval of one of its held calls). */
export type AgentPrincipal = Principal & { kind: 'account'; agent: AgentGrant }

/**
 * What a route declares of an Agent's token (the auth option): `true`, human only (an at_ token is 403
 * HUMAN_ONLY, a key restricted to scopes 403 FULL_ACCESS_REQUIRED); or the OAuth scopes it needs (of an
 * at_ token or a restricted key), the operation a policy may hold for a human, and whether it answers
 * `?dry_run=true` with a preview that writes nothing. Shown in the document as x-scopes, x-operation and
 * x-dry-run. Guest tokens, full-access API keys and sessions hold every scope of their kind.
 */
export type RouteAccess =
  | true
  | {
      scopes: readonly Scope[]
      operation?: Operation
      dryRun?: true
      /**
       * Set on a protocol's door (MCP): the operations behind it are audited by their own routes, so
       * only a refusal at the door is an event, recorded as made through that protocol.
       */
      door?: 'mcp'
    }
