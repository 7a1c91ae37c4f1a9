// CORS for /mcp (docs/agents-and-mcp.md#mcp). An Origin is no credential here: every call needs an
// at_ token in Authorization and no cookie is ever read, so a page on another origin gains nothing a
// program could not do without a browser. Browser-based hosts (the MCP Inspector) are therefore
// answered with CORS, without credentials; every answer carries the headers, the 401 too, since the
// host must read its WWW-Authenticate to start OAuth. MCP_ALLOWED_ORIGINS narrows the origins for an
// operator who wants it; another origin is then 403 ORIGIN_NOT_ALLOWED, the preflight included.
import { ApiError } from '../plugins/errors'

/** What a host sends: the token, JSON, the protocol headers of the 2025 and 2026 revisions. */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'MCP-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID', 'Mcp-Method', 'Mcp-Name', 'X-Request-Id']
/** GET and DELETE are allowed so that a browser host reads their 405 instead of failing the preflight. */
const ALLOWED_METHODS = ['POST', 'GET', 'DELETE', 'OPTIONS']
/** What a host's script must read: the challenge, the session (none, stateless), its rate limit. */
const EXPOSED_HEADERS = ['WWW-Authenticate', 'Mcp-Session-Id', 'MCP-Protocol-Version', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'X-Request-Id']
/** A browser caches the preflight this long (seconds); Chromium caps it at 7200. */
const PREFLIGHT_MAX_AGE = '7200'

export interface McpCors {
  /** The CORS headers of an answer to a request from `origin`; none when it sent no Origin or may not call. */
  headers(origin: string | null): Record<string, string>
  /** Throws 403 ORIGIN_NOT_ALLOWED for an origin the operator did not allow. */
  check(origin: string | null): void
  /** The answer to OPTIONS /mcp: 204 with what may be sent, or 403 for an origin not allowed. */
  preflight(request: Request): Response
}

/** `allowed`: MCP_ALLOWED_ORIGINS (undefined: any origin); `ownOrigin`: the API's, always allowed. */
export function mcpCors(allowed: readonly string[] | undefined, ownOrigin: string): McpCors {
  const list = allowed && new Set([...allowed, ownOrigin])
  const allows = (origin: string) => !list || list.has(origin)
  const headers = (origin: string | null): Record<string, string> => {
    if (origin === null || !allows(origin)) return {}
    // With a list the answer depends on the Origin, so caches must key on it; without, '*' is the same for all.
    const base: Record<string, string> = list ? { 'access-control-allow-origin': origin, vary: 'Origin' } : { 'access-control-allow-origin': '*' }
    return { ...base, 'access-control-expose-headers': EXPOSED_HEADERS.join(', ') }
  }
  const check = (origin: string | null) => {
    if (origin !== null && !allows(origin)) throw new ApiError('ORIGIN_NOT_ALLOWED')
  }
  return {
    headers,
    check,
    preflight(request) {
      const origin = request.headers.get('origin')
      check(origin)
      return new Response(null, {
        status: 204,
        headers: {
          ...headers(origin),
          'access-control-allow-methods': ALLOWED_METHODS.join(', '),
          'access-control-allow-headers': ALLOWED_HEADERS.join(', '),
          'access-control-max-age': PREFLIGHT_MAX_AGE,
          allow: ALLOWED_METHODS.join(', '),
        },
      })
    },
  }
}
