// What each plan allows (DESIGN.md "Plans"). One table: limits, quotas and features are read from here.
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

/** Pro prices shown by POST /account/upgrade. */
export const PRO_PRICES = {
  monthly: { amountCents: 900, currency: 'USD' },
  yearly: { amountCents: 9_000, currency: 'USD' },
} as const

export type BillingInterval = keyof typeof PRO_PRICES

export function formatPrice(interval: BillingInterval): string {
  const { amountCents, currency } = PRO_PRICES[interval]
  return `${(amountCents / 100).toFixed(2)} ${currency}`
}
