// The per-credential request limit (docs/api.md#limits-and-rate-headers): every credential of an account (an API key, an Agent's
// tokens, a signed-in session) has its own window of the plan's requests a minute, keyed by the
// credential (Principal.credentialId). Its authenticator counts one request here before the route runs;
// the X-RateLimit-* headers it returns are the ones account status shows.
import type { Plan } from '../db/schema'
import { enforceRateLimit } from './client'
import type { Services } from '../services'

const WINDOW_MS = 60_000

/**
 * Counts a request of `credentialId`; its rate headers, or 429 RATE_LIMITED past the plan's limit (or
 * past `atLeast` when that is higher: a signed-in session's, config.limits.sessionRequestsPerMinute).
 */
export function limitCredential(services: Pick<Services, 'limiter' | 'now' | 'config'>, credentialId: string, plan: Plan, atLeast = 0): Promise<Record<string, string>> {
  const limit = Math.max(services.config.limits.plans[plan].requestsPerMinute, atLeast)
  return enforceRateLimit(services.limiter, credentialId, limit, WINDOW_MS, services.now())
}
