// What happens to an Agent's call once its token is known, in one place, for REST and MCP alike:
//   1. admit: the call is held to its route's declaration (RouteAccess): a human-only route is 403
//      HUMAN_ONLY, a missing scope 403 INSUFFICIENT_SCOPE with the challenge naming it. An API key
//      restricted to scopes is held to them here too, the same way (a human-only route is 403
//      FULL_ACCESS_REQUIRED for it): one decision for every credential that carries scopes;
//   2. hold: a call to an operation the Agent's policy names waits for a human (202) instead of running,
//      unless it is a dry run or the execution of an approved call;
//   3. the audit event, after the answer is sent: one per call, accepted or refused (a token refused at
//      authentication names its Agent in the error), never slowing or failing the call.
// Authentication itself (which token, which principal) is plugins/auth.ts, which calls admit and refused;
// the route's declaration is read from its auth option. Nothing here knows a module: the hold and the
// audit recorder are injected.
import type { Server } from 'bun'
import { Elysia } from 'elysia'
import type { AuditLog } from '../adapters/ports'
import type { Operation, Scope } from '../lib/agent-access'
import { ApiError } from './errors'
import { onBehalfOf } from './on-behalf'
import type { AgentPrincipal, Principal, RouteAccess } from './principal'
import { isDryRun } from './query'

/** An Agent's call to an operation its policy holds: what the hold needs to keep it for a human. */
export interface HeldCall {
  principal: AgentPrincipal
  operation: Operation
  scopes: readonly Scope[]
  request: Request
  body: unknown
  /** Its route can preview it (a dry run), so the hold may check it before keeping it. */
  previews: boolean
}

/** Keeps a held call: the 202 to answer (the route does not run), or null to let it run. */
export type Hold = (call: HeldCall) => Promise<{ response: Response; approvalId?: string } | null>

export interface AgentCallsOptions {
  /** RFC 9728 metadata URL named in an insufficient_scope challenge. */
  resourceMetadataUrl: string
  /** Where the events go (only queued there); absent, nothing is audited. */
  audit?: AuditLog
  hold?: Hold
  clientIp: (request: Request, server: Server<unknown> | null) => string
}

/** When a request reached authentication: Unix ms for the event, performance.now() for its duration. */
export interface CallClock {
  at: number
  started: number
}

export const startClock = (): CallClock => ({ at: Date.now(), started: performance.now() })

/** A call as captured for its event. */
interface Captured extends CallClock {
  accountId: string
  agentId: string
  operation: string
  scopes: readonly string[]
  via: 'rest' | 'mcp'
  approvalId?: string
  /** A refusal's status (at a door several messages of one request may be refused). */
  status?: number
}

export interface AgentCalls {
  /** After authentication: an Agent's call is captured and held to the route's declaration (throws on a refusal). */
  admit(request: Request, principal: Principal, access: RouteAccess, clock: CallClock): void
  /** Authentication failed: a token that named its Agent (revoked, expired, over its limit) is captured. */
  refused(request: Request, error: unknown, access: RouteAccess, clock: CallClock): void
  /** After validation, before the route: the 202 of a call its Agent's policy holds, or undefined to run it. */
  hold(request: Request, principal: Principal, access: RouteAccess, body: unknown): Promise<Response | undefined>
  /** Writes each captured call's event after its answer is sent. */
  // biome-ignore lint/complexity/noBannedTypes: Elysia's own type of a plugin that adds nothing to the context
  plugin: Elysia<'', { decorator: {}; store: {}; derive: {}; resolve: {} }>
}

/** The operation an event names: the route's policy operation, else its scope (`links:read` → `links.read`). */
function operationOf(access: RouteAccess): string {
  if (access === true) return 'human_only'
  if (access.door) return ''
  return access.operation ?? access.scopes[0]?.replace(':', '.') ?? 'agent_read'
}

function isAgent(principal: Principal): principal is AgentPrincipal {
  return principal.kind === 'account' && principal.agent !== undefined
}

/** The scopes a credential is held to: an Agent's token's, a restricted API key's; null is full access. */
function heldScopes(principal: Principal): readonly string[] | null {
  if (principal.kind !== 'account') return null
  return principal.agent?.scopes ?? principal.key?.scopes ?? null
}

export function agentCalls(options: AgentCallsOptions): AgentCalls {
  const captured = new WeakMap<Request, Captured[]>()
  const capture = (request: Request, call: Captured) => captured.set(request, [...(captured.get(request) ?? []), call])
  const viaOf = (request: Request, access: RouteAccess) => onBehalfOf(request)?.via ?? (access !== true && access.door ? access.door : 'rest')
  const scopesOf = (access: RouteAccess) => (access === true ? [] : access.scopes)

  /**
   * A credential that carries scopes (an Agent's token, a restricted API key) on a route: within the
   * route's scopes, and never on a human-only route.
   */
  function requireScopes(principal: Principal, held: readonly string[], access: RouteAccess): void {
    const agent = isAgent(principal)
    if (access === true) throw new ApiError(agent ? 'HUMAN_ONLY' : 'FULL_ACCESS_REQUIRED')
    const missing = access.scopes.filter((scope) => !held.includes(scope))
    if (missing.length === 0) return
    const hint = agent
      ? `This token lacks the scope ${missing.join(' ')}; authorize again asking for it.`
      : `This API key is restricted to ${held.join(' ')} and lacks ${missing.join(' ')}; use a key with that scope, or one without scopes.`
    throw new ApiError('INSUFFICIENT_SCOPE', hint, {
      headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${access.scopes.join(' ')}", resource_metadata="${options.resourceMetadataUrl}"` },
      data: { required_scopes: [...access.scopes] },
    })
  }

  const plugin = new Elysia({ name: 'plugins.agent-calls' }).onAfterResponse({ as: 'global' }, ({ request, set, server, responseValue }) => {
    const calls = captured.get(request)
    // A request made in process as part of another call (its preview) has no event of its own.
    if (!calls || !options.audit || onBehalfOf(request)?.audited === false) return
    const status = responseValue instanceof Response ? responseValue.status : typeof set.status === 'number' ? set.status : 200
    const path = new URL(request.url).pathname
    for (const call of calls) {
      options.audit.record({
        accountId: call.accountId,
        agentId: call.agentId,
        via: call.via,
        operation: call.operation,
        method: request.method,
        path,
        status: call.status ?? status,
        scopesUsed: [...call.scopes],
        approvalId: call.approvalId,
        dryRun: isDryRun(request),
        durationMs: performance.now() - call.started,
        ip: options.clientIp(request, server),
        at: call.at,
      })
    }
  })

  return {
    admit(request, principal, access, clock) {
      // A door lets the call through to its operations, which are audited (and scoped) by their routes.
      if (access !== true && access.door) return
      if (isAgent(principal)) {
        const { agentId, approvalId } = principal.agent
        capture(request, {
          accountId: principal.account.id,
          agentId,
          operation: operationOf(access),
          scopes: scopesOf(access),
          via: viaOf(request, access),
          ...(approvalId && { approvalId }),
          ...clock,
        })
      }
      const held = heldScopes(principal)
      if (held) requireScopes(principal, held, access)
    },
    refused(request, error, access, clock) {
      const agent = error instanceof ApiError ? error.extra.agent : undefined
      if (!agent) return
      capture(request, { ...agent, operation: operationOf(access), scopes: scopesOf(access), via: viaOf(request, access), status: (error as ApiError).status, ...clock })
    },
    async hold(request, principal, access, body) {
      if (!options.hold || access === true || !access.operation || !isAgent(principal)) return
      if (principal.agent.approvalId || !principal.agent.requireApproval.includes(access.operation) || isDryRun(request)) return
      const held = await options.hold({ principal, operation: access.operation, scopes: access.scopes, request, body, previews: access.dryRun === true })
      if (!held) return
      const call = captured.get(request)?.at(-1)
      if (call && held.approvalId) call.approvalId = held.approvalId
      return held.response
    },
    plugin,
  }
}
