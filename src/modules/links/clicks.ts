// Click counts on link records (`clicks`, `last_clicked_at`): human clicks of all time, read from
// ClickHouse in one query per response (clickCounts), never one per link. ClickHouse is not needed to
// manage links: when it fails or is slower than CLICK_COUNTS_BUDGET_MS the records are answered without
// the two fields (both are optional in the schema; 0 would be a wrong number) and meta.notices says why.
// Responses asking for the same links at once share one query (lib/single-flight.ts).
import { clickCounts } from '../../analytics/stats'
import type { Services } from '../../services'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import { singleFlightPer } from '../../lib/single-flight'

/** Longest a link response waits for its click counts. */
export const CLICK_COUNTS_BUDGET_MS = 1500

export const CLICKS_UNAVAILABLE_NOTICE = {
  field: 'clicks',
  message: 'click counts are temporarily unavailable; clicks and last_clicked_at are left out of these link records',
} as const

export type ClickTotals = Map<string, { clicks: number; last_clicked_at: string | null }>

const sharedCounts = singleFlightPer<ClickTotals>()

/** Counts for the links, or null when ClickHouse does not answer in time (logged, never thrown). */
export async function clickTotals(services: Pick<Services, 'clickhouse'>, linkIds: readonly string[]): Promise<ClickTotals | null> {
  if (linkIds.length === 0) return new Map()
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    return await Promise.race([
      sharedCounts(services.clickhouse, [...linkIds].sort().join(' '), () => clickCounts(services.clickhouse, linkIds)),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`click counts took over ${CLICK_COUNTS_BUDGET_MS} ms`)), CLICK_COUNTS_BUDGET_MS)
      }),
    ])
  } catch (error) {
    log.warn({ component: 'links', error: errorSummary(error) }, 'click counts unavailable')
    return null
  } finally {
    clearTimeout(timer)
  }
}

/** The record with the link's counts; without clicks/last_clicked_at when the counts are unavailable. */
export function withClicks<R extends { clicks?: number; last_clicked_at?: string | null }>(record: R, linkId: string, totals: ClickTotals | null): R {
  if (totals === null) {
    const { clicks: _c, last_clicked_at: _l, ...rest } = record
    return rest as R
  }
  const found = totals.get(linkId) ?? { clicks: 0, last_clicked_at: null }
  return { ...record, clicks: found.clicks, last_clicked_at: found.last_clicked_at }
}

/** meta.notices for a response whose records lack their counts. */
export function clickNotices(records: readonly { clicks?: number }[]): { field: string; message: string }[] {
  return records.some((r) => r.clicks === undefined) ? [{ ...CLICKS_UNAVAILABLE_NOTICE }] : []
}
