// Account status and usage. Plain arguments in, plain values out. account_type is the plan of an API
// key's account ('free' or 'pro'), or 'guest' for a guest token. The meta of responses is meta.ts.
import { eq } from 'drizzle-orm'
import { accounts, type Plan } from '../../db/schema'
import type { Principal } from '../../plugins/auth'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { GUEST_LIMITS } from '../guest/model'
import { guestUsage } from '../guest/service'
import { linksCreatedThisMonth, monthWindow } from './meta'
import { DEFAULT_LINK_TTL_DAYS, PLAN_FEATURES, planLimitsView } from '../../lib/plans'

/** What a guest session may do: only `url` on shorten, and account status. */
const GUEST_FEATURES = {
  custom_alias: false,
  custom_domains: false,
  password_protection: false,
  custom_expiration: false,
  scheduled_activation: false,
  bulk: false,
  link_management: false,
  analytics: false,
  tags: false,
  conversions: false,
}

export function accountStatus(principal: Extract<Principal, { kind: 'guest' }>) {
  const { guest } = principal
  return {
    account_type: 'guest',
    email: null,
    plan: {
      name: 'guest',
      max_links: GUEST_LIMITS.max_links,
      max_requests: GUEST_LIMITS.max_requests,
      link_expiry_days: DEFAULT_LINK_TTL_DAYS,
    },
    usage: guestUsage(guest),
    features: { ...GUEST_FEATURES },
  }
}

export function planFeatures(plan: Plan) {
  const features = PLAN_FEATURES[plan]
  return {
    custom_alias: true,
    custom_domains: true,
    password_protection: true,
    custom_expiration: true,
    scheduled_activation: true,
    bulk: true,
    link_management: true,
    tags: true,
    analytics: features.stats,
    conversions: features.attribution,
  }
}

export interface AccountView {
  id: string
  email: string
  plan: Plan
  planInterval: string | null
  proSince: Date | null
  createdAt: Date
}

export async function loadAccount(services: Pick<Services, 'db'>, accountId: string): Promise<AccountView> {
  const [row] = await services.db
    .select({
      id: accounts.id,
      email: accounts.email,
      plan: accounts.plan,
      planInterval: accounts.planInterval,
      proSince: accounts.proSince,
      createdAt: accounts.createdAt,
    })
    .from(accounts)
    .where(eq(accounts.id, accountId))
    .limit(1)
  if (!row) throw new ApiError('ACCOUNT_NOT_FOUND')
  return row
}

/** X-RateLimit-* of this request, read back: the per-key window costs nothing more to report. */
function requestWindow(rateHeaders: Record<string, string>) {
  const limit = Number(rateHeaders['x-ratelimit-limit'] ?? 0)
  const remaining = Number(rateHeaders['x-ratelimit-remaining'] ?? 0)
  const reset = Number(rateHeaders['x-ratelimit-reset'] ?? 0)
  return { limit, remaining, used: Math.max(0, limit - remaining), resetAt: reset ? new Date(reset * 1000).toISOString() : null }
}

export async function accountUsage(services: Pick<Services, 'db' | 'now' | 'config'>, account: Pick<AccountView, 'id' | 'plan'>, rateHeaders: Record<string, string>) {
  const quota = services.config.limits.plans[account.plan].linksPerMonth
  const [created, period] = [await linksCreatedThisMonth(services, account.id), monthWindow(services.now())]
  const window = requestWindow(rateHeaders)
  return {
    links_this_month: created,
    links_per_month: quota,
    links_remaining: Math.max(0, quota - created),
    period_start: period.start.toISOString(),
    period_resets_at: period.next.toISOString(),
    requests_this_minute: window.used,
    requests_per_minute: window.limit,
    requests_remaining: window.remaining,
    requests_reset_at: window.resetAt,
  }
}

export type AccountUsage = Awaited<ReturnType<typeof accountUsage>>

export async function accountStatusForKey(services: Services, principal: Extract<Principal, { kind: 'account' }>) {
  const account = await loadAccount(services, principal.account.id)
  const usage = await accountUsage(services, account, principal.rateHeaders)
  return {
    account,
    usage,
    data: {
      account_type: account.plan,
      email: account.email,
      plan: {
        name: account.plan,
        interval: account.planInterval,
        pro_since: account.proSince ? account.proSince.toISOString() : null,
        limits: planLimitsView(services.config.limits, account.plan),
      },
      usage,
      features: planFeatures(account.plan),
    },
  }
}
