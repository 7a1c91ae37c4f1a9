// Requests the app makes to itself on behalf of a caller who has already been authenticated: an MCP
// tool (src/mcp) calls the REST route of its operation, an approved Agent call runs when the human
// approves it, a held link operation is previewed as a dry run; so scopes, idempotency, approvals,
// audit and dry_run are the route's own. All three go through one path, `inProcess` (callAs). Marked by
// the Request object itself, in this process only: nothing a client sends (a header, a parameter) can
// claim to be such a request.
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

/** A request to one of the app's own routes, as data: what an MCP tool, an approval or a preview sends. */
export interface InProcessCall {
  method: string
  /** The route's path, its segments already encoded. */
  path: string
  /** Query parameters; undefined and null ones are left out. */
  query?: Record<string, unknown>
  /** A JSON body; null or undefined for none. */
  body?: unknown
  headers?: Record<string, string>
}

/** Sends `call` to the app's own routes as `caller`, and answers what the route answered. */
export type CallAs = (caller: OnBehalfOf, call: InProcessCall) => Promise<Response>

/**
 * The one in-process path: `handle` is the app's own request handler (app.handle), `base` the public
 * API URL its routes live under. The request is marked as made for the caller before it is handled.
 */
export function inProcess(handle: (request: Request) => Promise<Response>, base: string): CallAs {
  return (caller, call) => {
    const url = new URL(call.path, base)
    for (const [name, value] of Object.entries(call.query ?? {})) if (value !== undefined && value !== null) url.searchParams.set(name, String(value))
    const hasBody = call.body !== undefined && call.body !== null
    const headers = { ...call.headers, ...(hasBody && { 'content-type': 'application/json' }) }
    const request = new Request(url.href, { method: call.method, headers, ...(hasBody && { body: JSON.stringify(call.body) }) })
    return handle(actOnBehalfOf(request, caller))
  }
}
