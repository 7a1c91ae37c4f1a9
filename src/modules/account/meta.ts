// The `meta` of every response to an account's credential, in one shape: the plan, usage
// against the monthly link quota (and the route's own resource: tags, custom domains), notices, and on
// Free its limitations and the way to Pro. The calendar month (UTC) of the quota, the count of links in
// it and the upgrade URL live here too, so every module reads them alike.
import { and, eq, gte, sql, sum, type SQL } from 'drizzle-orm'
import { formatPrice } from '../../lib/prices'
import type { Db } from '../../db/client'
import { accountLinkMonths, type Plan } from '../../db/schema'
import type { AccountPrincipal } from '../../plugins/auth'
import type { Services } from '../../services'
import { freePlanHint, PLAN_FEATURES, proBenefits, type Limits } from '../../lib/plans'

/** A quota notice appears when less than this share of it is left. */
const LOW_QUOTA_SHARE = 0.1

export type Notice = { type?: string; field?: string; message: string }

/** The calendar month (UTC) a link quota counts in (docs/decisions/0003-plans-and-quotas.md). */
export function monthWindow(nowMs: number): { start: Date; next: Date } {
  const now = new Date(nowMs)
  return {
    start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
    next: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  }
}

/**
 * The account's links counted per month by Postgres itself (account_link_months, kept by triggers on
 * links): a few rows however many links, read inside the caller's transaction when it passes one.
 */
async function countedLinks(db: Pick<Db, 'select'>, where: SQL | undefined): Promise<number> {
  const [row] = await db
    .select({ n: sum(accountLinkMonths.links) })
    .from(accountLinkMonths)
    .where(where)
  return Number(row?.n ?? 0)
}

/**
 * Links of the account created since `monthStart`, a month's first instant (monthWindow): claimed guest
 * links count in the month they were created, a deleted link no longer counts.
 */
export function linksCreatedSince(db: Pick<Db, 'select'>, accountId: string, monthStart: Date): Promise<number> {
  const month = monthStart.toISOString().slice(0, 10)
  return countedLinks(db, and(eq(accountLinkMonths.accountId, accountId), gte(accountLinkMonths.month, month)))
}

/** Every link of the account, whenever created, and those created since `monthStart`: one query. */
export async function linksOfAccount(db: Pick<Db, 'select'>, accountId: string, monthStart: Date): Promise<{ all: number; sinceMonth: number }> {
  const month = monthStart.toISOString().slice(0, 10)
  const [row] = await db
    .select({ all: sum(accountLinkMonths.links), sinceMonth: sql<string | null>`sum(${accountLinkMonths.links}) filter (where ${accountLinkMonths.month} >= ${month})` })
    .from(accountLinkMonths)
    .where(eq(accountLinkMonths.accountId, accountId))
  return { all: Number(row?.all ?? 0), sinceMonth: Number(row?.sinceMonth ?? 0) }
}

export function linksCreatedThisMonth(services: Pick<Services, 'db' | 'now'>, accountId: string): Promise<number> {
  return linksCreatedSince(services.db, accountId, monthWindow(services.now()).start)
}

export function upgradeUrl(services: Pick<Services, 'config'>): string {
  return `${services.config.publicApiUrl}/api/v1/account/upgrade`
}

/** meta.upgrade for a Free account: where to go, what it costs and what it adds. */
export function proUpgrade(services: Pick<Services, 'config'>) {
  return {
    plan: 'pro',
    url: upgradeUrl(services),
    method: 'POST',
    prices: { monthly: formatPrice('monthly'), yearly: formatPrice('yearly') },
    benefits: proBenefits(services.config.limits),
    message: 'POST /api/v1/account/upgrade {"interval": "monthly" | "yearly"} returns a checkout URL.',
  }
}

function freeLimitations(limits: Limits): string[] {
  const free = limits.plans.free
  return [
    `${free.requestsPerMinute} requests a minute per API key`,
    `${free.linksPerMonth.toLocaleString('en-US')} links a month`,
    `${free.customDomains} custom domain${free.customDomains === 1 ? '' : 's'}`,
    ...(PLAN_FEATURES.free.stats ? [] : ['statistics need Pro (403 with basic totals on Free)']),
    ...(PLAN_FEATURES.free.attribution ? [] : ['no conversion attribution on Free']),
  ]
}

export interface MetaInput {
  plan: Plan
  /** Links created this month, when the response counted them: usage against the quota. */
  linksThisMonth?: number
  /** Requests left in this key's minute (X-RateLimit-Remaining), when the response reports it. */
  requestsRemaining?: number
  /** Usage of what the route manages (tags, custom domains), beside the links. */
  usage?: Record<string, unknown>
  hint?: string
  notices?: Notice[]
}

export function accountMeta(services: Pick<Services, 'config' | 'now'>, input: MetaInput) {
  const { plan } = input
  const quota = services.config.limits.plans[plan].linksPerMonth
  const notices = [...(input.notices ?? [])]
  const links =
    input.linksThisMonth === undefined
      ? {}
      : {
          links_this_month: input.linksThisMonth,
          links_per_month: quota,
          links_remaining: Math.max(0, quota - input.linksThisMonth),
          period_resets_at: monthWindow(services.now()).next.toISOString(),
        }
  if (input.linksThisMonth !== undefined && quota - input.linksThisMonth < quota * LOW_QUOTA_SHARE) {
    notices.push({ type: 'quota', message: `${Math.max(0, quota - input.linksThisMonth)} of ${quota} links left this month.` })
  }
  const usage = { ...links, ...(input.requestsRemaining !== undefined && { requests_remaining: input.requestsRemaining }), ...input.usage }
  const free = plan === 'free'
  const hint = input.hint ?? (free ? freePlanHint(services.config.limits) : undefined)
  return {
    account_type: plan,
    ...(hint && { hint }),
    ...(Object.keys(usage).length > 0 && { usage }),
    notices,
    limitations: free ? freeLimitations(services.config.limits) : [],
    ...(free && { upgrade: proUpgrade(services) }),
  }
}

export type AccountMeta = ReturnType<typeof accountMeta>

/** meta for a response that did not count the links itself. */
export async function currentAccountMeta(
  services: Pick<Services, 'config' | 'now' | 'db'>,
  account: Pick<AccountPrincipal, 'id' | 'plan'>,
  extra: Omit<MetaInput, 'plan' | 'linksThisMonth'> = {},
): Promise<AccountMeta> {
  return accountMeta(services, { ...extra, plan: account.plan, linksThisMonth: await linksCreatedThisMonth(services, account.id) })
}
