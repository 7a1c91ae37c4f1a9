// The monthly link quota of a plan (PLAN_LIMITS.linksPerMonth) and the `meta` every API-key response
// carries. A month is a calendar month in UTC. The count is of the account's links created this month,
// taken under a transaction-scoped advisory lock on the account: concurrent creates of one account
// queue on it, so the quota is exact across processes; other accounts never wait.
import { and, count, eq, gte, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { links, type Plan } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import type { AccountPrincipal } from '../account/keys'
import { PLAN_LIMITS } from '../account/plans'

/** First key of the two-key advisory lock; next to the migration lock (7_311_001) in src/db/client.ts. */
const QUOTA_LOCK_NAMESPACE = 7_311_002

export function monthWindow(nowMs: number): { start: Date; next: Date } {
  const now = new Date(nowMs)
  return {
    start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
    next: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  }
}

/** Holds the account's quota lock until the caller's transaction ends. */
export async function lockQuota(tx: Pick<Db, 'execute'>, accountId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${QUOTA_LOCK_NAMESPACE}, hashtext(${accountId}))`)
}

export async function linksCreatedSince(db: Pick<Db, 'select'>, accountId: string, start: Date): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(links)
    .where(and(eq(links.accountId, accountId), gte(links.createdAt, start)))
  return Number(row?.n ?? 0)
}

export function upgradeUrl(services: Pick<Services, 'config'>): string {
  return `${services.config.publicApiUrl}/api/v1/account/upgrade`
}

export type Notice = { field?: string; message: string }

/** meta of an API-key response: plan, this month's links against the quota, and for Free how to upgrade. */
export function accountMeta(services: Pick<Services, 'config'>, plan: Plan, used: number, nowMs: number, notices: Notice[] = []) {
  const limits = PLAN_LIMITS[plan]
  const meta = {
    account_type: plan,
    usage: {
      links_this_month: used,
      links_per_month: limits.linksPerMonth,
      links_remaining: Math.max(0, limits.linksPerMonth - used),
      period_resets_at: monthWindow(nowMs).next.toISOString(),
    },
    notices,
  }
  if (plan !== 'free') return meta
  const pro = PLAN_LIMITS.pro
  return {
    ...meta,
    hint: `Free plan: ${limits.linksPerMonth} links a month, ${limits.requestsPerMinute} requests a minute, ${limits.customDomains} custom domain. Pro: ${pro.linksPerMonth} links a month, ${pro.requestsPerMinute} requests a minute, statistics and conversion attribution.`,
    limitations: ['no link statistics', 'no conversion attribution'],
    upgrade: { plan: 'pro', url: upgradeUrl(services), method: 'POST' },
  }
}

export type AccountMeta = ReturnType<typeof accountMeta>

/** meta for a response that did not count the links itself. */
export async function currentAccountMeta(services: Services, account: AccountPrincipal, notices: Notice[] = []): Promise<AccountMeta> {
  const now = services.now()
  const used = await linksCreatedSince(services.db, account.id, monthWindow(now).start)
  return accountMeta(services, account.plan, used, now, notices)
}

/** 429 LINK_QUOTA_EXCEEDED: retry when the next month starts, or upgrade. */
export function quotaExceeded(services: Pick<Services, 'config'>, plan: Plan, used: number, nowMs: number): ApiError {
  const limit = PLAN_LIMITS[plan].linksPerMonth
  const { next } = monthWindow(nowMs)
  return new ApiError(
    'LINK_QUOTA_EXCEEDED',
    `This account has created its ${limit} links for this month (${plan} plan); more can be created from ${next.toISOString()}${plan === 'free' ? ', or at once on Pro' : ''}.`,
    {
      limit,
      remaining: 0,
      upgrade_url: upgradeUrl(services),
      retryAfter: (next.getTime() - nowMs) / 1000,
      meta: accountMeta(services, plan, used, nowMs),
    },
  )
}
