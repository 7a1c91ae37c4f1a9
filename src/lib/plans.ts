// What each plan allows (docs/decisions/0003-plans-and-quotas.md). The numbers are defaults a deployment may change
// (PLAN_* and TAGS_PER_ACCOUNT, parsed in core/config.ts into config.limits); code that enforces or
// shows a limit reads config.limits. The API document is built from the defaults (docs/configuration.md#plan-limits).
import type { LimitedPlan, Limits } from '../../core/plan-limits'

/** The plans an account can be on (the accounts table's enum). */
export const PLANS = ['free', 'pro'] as const
export type Plan = (typeof PLANS)[number]

export { DEFAULT_LIMITS, type Limits, type PlanLimits } from '../../core/plan-limits'

// The plans are the plans with limits, both ways: a plan added to one must be added to the other.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never
const samePlans: Same<Plan, LimitedPlan> = true
void samePlans

/** What a plan is, not how much of it: not configurable (Pro is the plan with statistics, attribution and routing). */
export const PLAN_FEATURES: Record<Plan, { stats: boolean; attribution: boolean; routing: boolean }> = {
  free: { stats: false, attribution: false, routing: false },
  pro: { stats: true, attribution: true, routing: true },
}

/** Links expire after 30 days by default, on every plan. */
export const DEFAULT_LINK_TTL_DAYS = 30
export const DEFAULT_LINK_TTL_MS = DEFAULT_LINK_TTL_DAYS * 24 * 3600 * 1000

/** The limits of a plan as the API shows them (verify's `limits`, status's plan.limits). */
export function planLimitsView(limits: Limits, plan: Plan) {
  const own = limits.plans[plan]
  return {
    requests_per_minute: own.requestsPerMinute,
    links_per_month: own.linksPerMonth,
    custom_domains: own.customDomains,
    tags: limits.tagsPerAccount,
    link_expiry_days: DEFAULT_LINK_TTL_DAYS,
    stats: PLAN_FEATURES[plan].stats,
    attribution: PLAN_FEATURES[plan].attribution,
  }
}

/** The hint of every Free response: its limits and what Pro adds. */
export function freePlanHint(limits: Limits): string {
  const free = limits.plans.free
  return `Free plan: ${free.linksPerMonth.toLocaleString('en-US')} links a month, ${free.requestsPerMinute} requests a minute. Pro: ${proBenefits(limits).join(', ')}.`
}

/** What Pro adds, in words, from the limits: the upgrade hint of every Free response and the checkout page. */
export function proBenefits(limits: Limits): string[] {
  const pro = limits.plans.pro
  return [
    `${pro.requestsPerMinute} requests a minute`,
    `${pro.linksPerMonth.toLocaleString('en-US')} links a month`,
    `${pro.customDomains} custom domains`,
    ...(PLAN_FEATURES.pro.stats ? ['link statistics'] : []),
    ...(PLAN_FEATURES.pro.attribution ? ['conversion attribution'] : []),
    ...(PLAN_FEATURES.pro.routing ? ['routing by device, country and language, and A/B tests'] : []),
  ]
}
