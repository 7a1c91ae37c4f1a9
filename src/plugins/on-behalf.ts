// Requests the app makes to itself on behalf of a caller who has already been authenticated: an MCP
// tool (src/mcp) calls the REST route of its operation, an approved Agent call runs when the human
// approves it, a held link operation is previewed as a dry run; so scopes, idempotency, approvals,
// audit and dry_run are the route's own. Marked by the Request object itself, in this process only:
// nothing a client sends (a header, a parameter) can claim to be such a request.
import type { Principal } from './principal'

export interface OnBehalfOf {
  /** Where the call came from, for the audit (`via`). */
  via: 'rest' | 'mcp'
  /** The MCP tool that made it. */
  tool?: string
  /** The caller as the outer request authenticated it; the route holds it to its own mode and scopes. */
  principal: Principal
  /** The outer request's client address (the client-IP rule), for per-IP limits and the audit's ip_hash. */
  clientIp?: string
  /** false: part of another call (a preview), which records the event; no audit event of its own. */
  audited?: boolean
}

const calls = new WeakMap<Request, OnBehalfOf>()

/** Marks `request` as made for `call`; returns it. */
export function actOnBehalfOf(request: Request, call: OnBehalfOf): Request {
  calls.set(request, call)
  return request
}

/** The caller an in-process request was made for, or undefined for a request that came from outside. */
export function onBehalfOf(request: Request): OnBehalfOf | undefined {
  return calls.get(request)
}
