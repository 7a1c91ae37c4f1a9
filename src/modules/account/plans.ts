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
export const DEFAULT_LINK_TTL_MS = 30 * 24 * 3600 * 1000

/** Spec 4.3: at most 20 tags per account, on every plan. */
export const TAGS_PER_ACCOUNT = 20

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
