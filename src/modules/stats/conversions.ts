// The conversions / revenue section of Pro statistics, from the conversions module's
// revenueForLink: conversions by type and currency, revenue per currency net of refunds, for the same
// window as the click statistics (ALL: every conversion). A link with none gets empty arrays.
import type { Period } from '../../analytics/stats'
import { revenueForLink } from '../conversions/revenue'
import type { StatsSection } from './service'

const HOUR = 3_600_000
const DAY = 24 * HOUR

/** Start of the period as linkStats counts it: 24 hourly or 7/30 daily buckets ending with the current one. */
export function periodStart(period: Period, now: Date): number | undefined {
  const ms = now.getTime()
  if (period === '24H') return ms - (ms % HOUR) - 23 * HOUR
  if (period === '7D') return ms - (ms % DAY) - 6 * DAY
  if (period === '30D') return ms - (ms % DAY) - 29 * DAY
  return undefined
}

export const conversionsSection: StatsSection = async (services, link, { period, now }) => {
  const { conversions, revenue } = await revenueForLink(services.db, link.id, periodStart(period, now))
  return { conversions, revenue }
}
