// How much each plan allows: the figures a deployment may change (PLAN_*, TAGS_PER_ACCOUNT, parsed by
// config.ts into config.limits). Here in core, not in src/lib/plans.ts, because config.ts
// parses them and core imports only core (test/boundary.test.ts); plans.ts re-exports them.

/** The plans with limits; src/db/schema's Plan is the same union (plans.ts checks it). */
export type LimitedPlan = 'free' | 'pro'

export interface PlanLimits {
  /** Requests a minute per API key (per credential: each key, Agent and session has its own minute). */
  requestsPerMinute: number
  customDomains: number
  /** Links created per calendar month (UTC). */
  linksPerMonth: number
}

/** The limits of a deployment: each plan's, and the tags every account may have. */
export interface Limits {
  plans: Record<LimitedPlan, PlanLimits>
  tagsPerAccount: number
  /**
   * Requests a minute of a signed-in session when that is more than its plan's: the dashboard makes a few
   * calls per page (a page of links, its tags, the domains), and a person clicking through it must not
   * meet the limit a script on an API key meets. Links a month and every other limit stay the plan's.
   */
  sessionRequestsPerMinute: number
}

/** The default figures (docs/decisions/0003-plans-and-quotas.md; TAGS_PER_ACCOUNT: 20 tags on every plan): what an unset variable means. */
export const DEFAULT_LIMITS: Limits = {
  plans: {
    free: { requestsPerMinute: 30, customDomains: 1, linksPerMonth: 1_000 },
    pro: { requestsPerMinute: 120, customDomains: 10, linksPerMonth: 50_000 },
  },
  tagsPerAccount: 20,
  sessionRequestsPerMinute: 300,
}
