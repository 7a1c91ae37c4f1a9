// GET /links/{alias}/stats (docs/statistics.md#statistics): the caller's own link, found as the links module finds
// it (readOwnLink: another account's link is 404 like an unknown one, so nothing leaks; from the read
// replica when there is one, the primary when it has not got the link yet); then Pro gets the
// statistics, Free a 403 STATS_REQUIRES_PRO carrying the basic totals. Bots are left out unless asked for.
import { linkStats, type LinkStats, type Period } from '../../analytics/stats'
import type { LinkRow } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import type { AccountPrincipal } from '../../plugins/auth'
import { PLAN_FEATURES } from '../../lib/plans'
import { readOwnLink } from '../links/manage'
import { currentAccountMeta, upgradeUrl } from '../account/meta'
import { clickTotals, CLICKS_UNAVAILABLE_NOTICE } from '../links/clicks'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import { singleFlightPer } from '../../lib/single-flight'

/** Identical statistics asked for at once (a shared dashboard, a polling client) share one query. */
const sharedStats = singleFlightPer<LinkStats>()

/**
 * Extra sections of Pro statistics from other modules (e.g. conversions and revenue):
 * each gets the link and the period and returns fields merged into `data`. Passed to statsModule.
 */
export type StatsSection = (services: Services, link: Pick<LinkRow, 'id' | 'accountId' | 'url' | 'routing'>, opts: { period: Period; now: Date }) => Promise<Record<string, unknown>>

export interface StatsRequest {
  alias: string
  domain: string | undefined
  period: Period
  includeBots: boolean
}

export async function statsFor(services: Services, account: AccountPrincipal, req: StatsRequest, sections: StatsSection[] = []) {
  const row = await readOwnLink(services, account, req.alias, req.domain)
  const head = { alias: row.alias, domain: row.domain, created_at: row.createdAt.toISOString() }

  if (!PLAN_FEATURES[account.plan].stats) {
    const totals = await clickTotals(services, [row.id])
    const found = totals?.get(row.id)
    const meta = await currentAccountMeta(services, account, { notices: totals ? [] : [{ ...CLICKS_UNAVAILABLE_NOTICE }] })
    throw new ApiError('STATS_REQUIRES_PRO', "Link statistics are a Pro feature; data has this link's total clicks. Upgrade with POST /api/v1/account/upgrade.", {
      upgrade_url: upgradeUrl(services),
      data: { ...head, total_clicks: found ? found.clicks : null, last_clicked_at: found ? found.last_clicked_at : null },
      meta,
    })
  }

  const now = new Date(services.now())
  let data: typeof head & LinkStats
  try {
    const [stats, ...parts] = await Promise.all([
      sharedStats(services.clickhouse, `${row.id} ${req.period} ${req.includeBots}`, () => linkStats(services.clickhouse, { linkId: row.id, period: req.period, includeBots: req.includeBots, now })),
      ...sections.map((section) => section(services, row, { period: req.period, now })),
    ])
    data = Object.assign({ ...head, ...stats }, ...parts)
  } catch (error) {
    if (error instanceof ApiError) throw error
    log.warn({ component: 'stats', error: errorSummary(error) }, 'statistics unavailable')
    throw new ApiError('STATS_UNAVAILABLE')
  }
  const meta = await currentAccountMeta(services, account)
  return {
    data,
    meta: { ...meta, include_bots: req.includeBots },
  }
}
