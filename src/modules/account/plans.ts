// What each plan allows (README, decisions: "Plans"). One table: limits, quotas and features are read from here.
import type { Plan } from '../../db/schema'

export interface PlanLimits {
  /** Requests a minute per API key. */
  requestsPerMinute: number
  customDomains: number
  /** Links created per calendar month (UTC). */
  linksPerMonth: number
  stats: boolean
  attribution: boolean
}

export const PLAN_LIMITS: Record<Plan, PlanLimits> = {
  free: { requestsPerMinute: 30, customDomains: 1, linksPerMonth: 1_000, stats: false, attribution: false },
  pro: { requestsPerMinute: 120, customDomains: 10, linksPerMonth: 50_000, stats: true, attribution: true },
}

/** Spec sections 1 and 8: links expire after 30 days by default, on every plan. */
export const DEFAULT_LINK_TTL_DAYS = 30
export const DEFAULT_LINK_TTL_MS = DEFAULT_LINK_TTL_DAYS * 24 * 3600 * 1000

/** Spec 4.3: at most 20 tags per account, on every plan. */
export const TAGS_PER_ACCOUNT = 20

/** The limits of a plan as the API shows them (verify's `limits`, status's plan.limits). */
export function planLimitsView(plan: Plan) {
  const limits = PLAN_LIMITS[plan]
  return {
    requests_per_minute: limits.requestsPerMinute,
    links_per_month: limits.linksPerMonth,
    custom_domains: limits.customDomains,
    tags: TAGS_PER_ACCOUNT,
    link_expiry_days: DEFAULT_LINK_TTL_DAYS,
    stats: limits.stats,
    attribution: limits.attribution,
  }
}

/** The hint of every Free response: its limits and what Pro adds. */
export function freePlanHint(): string {
  const free = PLAN_LIMITS.free
  return `Free plan: ${free.linksPerMonth.toLocaleString('en-US')} links a month, ${free.requestsPerMinute} requests a minute. Pro: ${proBenefits().join(', ')}.`
}

/** What Pro adds, in words, from the table: the upgrade hint of every Free response and the checkout page. */
export function proBenefits(): string[] {
  const pro = PLAN_LIMITS.pro
  return [
    `${pro.requestsPerMinute} requests a minute`,
    `${pro.linksPerMonth.toLocaleString('en-US')} links a month`,
    `${pro.customDomains} custom domains`,
    ...(pro.stats ? ['link statistics'] : []),
    ...(pro.attribution ? ['conversion attribution'] : []),
  ]
}
