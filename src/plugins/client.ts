// Who is calling, for per-IP limits: core/client-ip.ts's rule (config.clientIp), the same one the
// redirector uses, over the socket address from deps.requestIP (the embedded process serves the app
// through app.handle()) or Elysia's server. Requests with no address at all (app.handle in tests without
// the header) share the key "unknown".
import type { Server } from 'bun'
import type { LimitResult, Limiter } from '../adapters/ports'
import { clientAddress, type Peer } from '../../core/client-ip'
import type { Services } from '../services'
import { ApiError } from './errors'
import { onBehalfOf } from './on-behalf'

export function clientIp(services: Pick<Services, 'config' | 'requestIP'>, request: Request, server: Server<unknown> | null | undefined): string {
  // A request the app made to itself for a caller (an MCP tool's) is that caller's.
  const forwarded = onBehalfOf(request)?.clientIp
  if (forwarded !== undefined) return forwarded
  try {
    return clientAddress(services.config.clientIp, request, peerOf(services, server)) || 'unknown'
  } catch {
    // requestIP throws for a request the server did not receive (e.g. one built in-process).
    return 'unknown'
  }
}

function peerOf(services: Pick<Services, 'requestIP'>, server: Server<unknown> | null | undefined): Peer | undefined {
  const requestIP = services.requestIP
  if (!requestIP) return server ?? undefined
  return {
    requestIP(request) {
      const address = requestIP(request)
      return address ? { address } : null
    },
  }
}

export function rateLimitHeaders(result: Pick<LimitResult, 'limit' | 'remaining' | 'resetAt'>): Record<string, string> {
  return {
    'x-ratelimit-limit': String(result.limit),
    'x-ratelimit-remaining': String(Math.max(0, result.remaining)),
    'x-ratelimit-reset': String(result.resetAt),
  }
}

/**
 * Counts one hit against `key` and returns the X-RateLimit headers, or throws RATE_LIMITED (429 with
 * Retry-After). A limiter that cannot answer fails closed with 503: these limits guard against abuse.
 */
export async function enforceRateLimit(limiter: Limiter, key: string, limit: number, windowMs: number, nowMs: number): Promise<Record<string, string>> {
  let result: LimitResult
  try {
    result = await limiter.hit(key, limit, windowMs)
  } catch {
    throw new ApiError('SERVICE_UNAVAILABLE', 'The rate limiter is unavailable; retry shortly.', { retryAfter: 1 })
  }
  const headers = rateLimitHeaders(result)
  if (!result.allowed) {
    throw new ApiError('RATE_LIMITED', undefined, {
      limit: result.limit,
      remaining: 0,
      retryAfter: result.resetAt - nowMs / 1000,
      headers,
    })
  }
  return headers
}

/**
 * The per-client-IP limit of an unauthenticated route: one hit against `name` for the caller's address
 * (the client-IP rule), the X-RateLimit headers returned, RATE_LIMITED (429) past `rate`.
 */
export function enforceIpLimit(
  services: Pick<Services, 'config' | 'requestIP' | 'limiter' | 'now'>,
  request: Request,
  server: Server<unknown> | null | undefined,
  name: string,
  rate: { limit: number; windowMs: number },
): Promise<Record<string, string>> {
  return enforceRateLimit(services.limiter, `${name}:${clientIp(services, request, server)}`, rate.limit, rate.windowMs, services.now())
}
