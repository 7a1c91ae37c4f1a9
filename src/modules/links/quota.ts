// The monthly link quota of a plan (config.limits: linksPerMonth), enforced. A month is a calendar month
// in UTC (account/meta.ts). The count is of the account's links created this month (the month's row of
// account_link_months, which triggers on links keep), taken under a transaction-scoped advisory lock on
// the account: concurrent creates of one account queue on it, so the quota is exact across processes;
// other accounts never wait.
import type { Db } from '../../db/client'
import type { Plan } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { accountMeta, monthWindow, upgradeUrl } from '../account/meta'
import { lockFor } from '../../db/locks'

/** Holds the account's quota lock until the caller's transaction ends. */
export async function lockQuota(tx: Pick<Db, 'execute'>, accountId: string): Promise<void> {
  await lockFor(tx, 'linkQuota', accountId)
}

/** 429 LINK_QUOTA_EXCEEDED: retry when the next month starts, or upgrade. */
export function quotaExceeded(services: Pick<Services, 'config' | 'now'>, plan: Plan, used: number, nowMs: number): ApiError {
  const limit = services.config.limits.plans[plan].linksPerMonth
  const { next } = monthWindow(nowMs)
  return new ApiError(
    'LINK_QUOTA_EXCEEDED',
    `This account has created its ${limit} links for this month (${plan} plan); more can be created from ${next.toISOString()}${plan === 'free' ? ', or at once on Pro' : ''}.`,
    {
      limit,
      remaining: 0,
      upgrade_url: upgradeUrl(services),
      retryAfter: (next.getTime() - nowMs) / 1000,
      meta: accountMeta(services, { plan, linksThisMonth: used }),
    },
  )
}
