// Account status, usage and the meta every account response carries. Plain arguments in, plain values
// out. account_type is the plan of an API key's account ('free' or 'pro'), or 'guest' for a guest token.
import { and, count, eq, gte } from 'drizzle-orm'
import { accounts, links, type Plan } from '../../db/schema'
import type { Principal } from '../../plugins/auth'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { GUEST_LIMITS, guestUsage } from '../guest/service'
import { DEFAULT_LINK_TTL_MS } from '../links/service'
import { formatPrice, PLAN_LIMITS } from './plans'

/** Spec 4.3: at most 20 tags per account, on every plan. */
const TAGS_PER_ACCOUNT = 20
/** A quota notice appears when less than this share of it is left. */
const LOW_QUOTA_SHARE = 0.1

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
      link_expiry_days: DEFAULT_LINK_TTL_MS / 86_400_000,
    },
    usage: guestUsage(guest),
    features: { ...GUEST_FEATURES },
  }
}

/** The limits of a plan as the API shows them (verify's `limits`, status's plan.limits). */
export function planLimitsView(plan: Plan) {
  const limits = PLAN_LIMITS[plan]
  return {
    requests_per_minute: limits.requestsPerMinute,
    links_per_month: limits.linksPerMonth,
    custom_domains: limits.customDomains,
    tags: TAGS_PER_ACCOUNT,
    link_expiry_days: DEFAULT_LINK_TTL_MS / 86_400_000,
    stats: limits.stats,
    attribution: limits.attribution,
  }
}

export function planFeatures(plan: Plan) {
  const limits = PLAN_LIMITS[plan]
  return {
    custom_alias: true,
    custom_domains: true,
    password_protection: true,
    custom_expiration: true,
    scheduled_activation: true,
    bulk: true,
    link_management: true,
    tags: true,
    analytics: limits.stats,
    conversions: limits.attribution,
  }
}

/** The calendar month (UTC) a link quota counts in: DESIGN.md "1,000 links a month". */
export function quotaPeriod(nowMs: number): { start: Date; end: Date } {
  const now = new Date(nowMs)
  return {
    start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
    end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  }
}

/** Links of the account created this calendar month (claimed guest links count in their month). */
export async function linksCreatedThisMonth(services: Pick<Services, 'db' | 'now'>, accountId: string): Promise<number> {
  const { start } = quotaPeriod(services.now())
  const [row] = await services.db
    .select({ n: count() })
    .from(links)
    .where(and(eq(links.accountId, accountId), gte(links.createdAt, start)))
  return Number(row?.n ?? 0)
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

export async function accountUsage(
  services: Pick<Services, 'db' | 'now'>,
  account: Pick<AccountView, 'id' | 'plan'>,
  rateHeaders: Record<string, string>,
) {
  const quota = PLAN_LIMITS[account.plan].linksPerMonth
  const [created, period] = [await linksCreatedThisMonth(services, account.id), quotaPeriod(services.now())]
  const window = requestWindow(rateHeaders)
  return {
    links_this_month: created,
    links_per_month: quota,
    links_remaining: Math.max(0, quota - created),
    period_start: period.start.toISOString(),
    period_resets_at: period.end.toISOString(),
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
        limits: planLimitsView(account.plan),
      },
      usage,
      features: planFeatures(account.plan),
    },
  }
}

export function accountUpgradeUrl(services: Pick<Services, 'config'>): string {
  return `${services.config.publicApiUrl}/api/v1/account/upgrade`
}

/** meta.upgrade for a Free account: where to go and what it costs. */
export function proUpgrade(services: Pick<Services, 'config'>) {
  return {
    url: accountUpgradeUrl(services),
    method: 'POST',
    prices: { monthly: formatPrice('monthly'), yearly: formatPrice('yearly') },
    benefits: [
      `${PLAN_LIMITS.pro.requestsPerMinute} requests a minute`,
      `${PLAN_LIMITS.pro.linksPerMonth.toLocaleString('en-US')} links a month`,
      `${PLAN_LIMITS.pro.customDomains} custom domains`,
      'link statistics',
      'conversion attribution',
    ],
    message: 'POST /api/v1/account/upgrade {"interval": "monthly" | "yearly"} returns a checkout URL.',
  }
}

const FREE_LIMITATIONS = [
  `${PLAN_LIMITS.free.requestsPerMinute} requests a minute per API key`,
  `${PLAN_LIMITS.free.linksPerMonth.toLocaleString('en-US')} links a month`,
  `${PLAN_LIMITS.free.customDomains} custom domain`,
  'statistics need Pro (403 with basic totals on Free)',
  'no conversion attribution on Free',
]

/**
 * meta of an account response: plan, usage against quota, notices when a quota runs low, the Free
 * plan's limitations and, on Free, how to upgrade.
 */
export function accountMeta(
  services: Pick<Services, 'config'>,
  plan: Plan,
  usage?: Pick<AccountUsage, 'links_this_month' | 'links_per_month' | 'links_remaining' | 'requests_remaining' | 'requests_per_minute'>,
  extra: { hint?: string; notices?: { type: string; message: string }[] } = {},
) {
  const notices = [...(extra.notices ?? [])]
  if (usage && usage.links_remaining < usage.links_per_month * LOW_QUOTA_SHARE) {
    notices.push({ type: 'quota', message: `${usage.links_remaining} of ${usage.links_per_month} links left this month.` })
  }
  return {
    account_type: plan,
    ...(extra.hint && { hint: extra.hint }),
    ...(usage && {
      usage: {
        links_this_month: usage.links_this_month,
        links_remaining: usage.links_remaining,
        requests_remaining: usage.requests_remaining,
      },
    }),
    notices,
    limitations: plan === 'free' ? [...FREE_LIMITATIONS] : [],
    ...(plan === 'free' && { upgrade: proUpgrade(services) }),
  }
}
