// Who is calling, for per-IP limits: the first entry of a header set by a trusted proxy
// (config.clientIpHeader), else the socket address (from deps.requestIP or Elysia's server). Requests
// with neither (app.handle in tests without the header) share the key "unknown".
import type { Server } from 'bun'
import type { LimitResult, Limiter } from '../adapters/ports'
import type { Services } from '../services'
import { ApiError } from './errors'

/** Longest IPv6 text form is 45 characters; anything longer in a header is not an address. */
const MAX_IP_CHARS = 64

export function clientIp(
  services: Pick<Services, 'config' | 'requestIP'>,
  request: Request,
  server: Server<unknown> | null | undefined,
): string {
  const header = services.config.clientIpHeader
  if (header) {
    const first = request.headers.get(header)?.split(',')[0]?.trim()
    if (first) return first.slice(0, MAX_IP_CHARS)
  }
  try {
    const address = services.requestIP ? services.requestIP(request) : server?.requestIP(request)?.address
    return address ? address.slice(0, MAX_IP_CHARS) : 'unknown'
  } catch {
    // requestIP throws for a request the server did not receive (e.g. one built in-process).
    return 'unknown'
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
export async function enforceRateLimit(
  limiter: Limiter,
  key: string,
  limit: number,
  windowMs: number,
  nowMs: number,
): Promise<Record<string, string>> {
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
