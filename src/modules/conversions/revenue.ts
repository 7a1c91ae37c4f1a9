// Conversions and revenue of one link, for its statistics (refunds are positive values
// subtracted from revenue). Sums run in Postgres numeric and come back as numbers.
import { and, eq, gte, sql, type SQL } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { conversions } from '../../db/schema'

export interface ConversionCount {
  type: string
  /** null for conversions reported without a value. */
  currency: string | null
  count: number
  value: number
}

export interface RevenueLine {
  currency: string
  gross: number
  refunds: number
  net: number
}

export interface LinkRevenue {
  conversions: ConversionCount[]
  revenue: RevenueLine[]
}

const REFUND = 'refund'

/** Conversions of `linkId` by type and currency, and revenue per currency net of refunds (since `sinceMs` when given). */
export async function revenueForLink(db: Pick<Db, 'select'>, linkId: string, sinceMs?: number): Promise<LinkRevenue> {
  const where: SQL[] = [eq(conversions.linkId, linkId)]
  if (sinceMs !== undefined) where.push(gte(conversions.occurredAt, new Date(sinceMs)))
  const rows = await db
    .select({
      type: conversions.conversionType,
      currency: conversions.currency,
      count: sql<string>`count(*)`,
      value: sql<string | null>`sum(${conversions.value})`,
    })
    .from(conversions)
    .where(and(...where))
    .groupBy(conversions.conversionType, conversions.currency)
    .orderBy(conversions.conversionType, conversions.currency)
  const list: ConversionCount[] = rows.map((r) => ({ type: r.type, currency: r.currency, count: Number(r.count), value: Number(r.value ?? 0) }))
  const byCurrency = new Map<string, RevenueLine>()
  for (const row of list) {
    if (row.currency === null) continue
    const line = byCurrency.get(row.currency) ?? { currency: row.currency, gross: 0, refunds: 0, net: 0 }
    if (row.type === REFUND) line.refunds += row.value
    else line.gross += row.value
    byCurrency.set(row.currency, line)
  }
  const revenue = [...byCurrency.values()].map((line) => ({ ...line, net: round(line.gross - line.refunds) })).sort((a, b) => (a.currency < b.currency ? -1 : 1))
  return { conversions: list, revenue }
}

/** numeric(24, 6) sums read as doubles: round the difference back to 6 decimals. */
function round(value: number): number {
  return Math.round(value * 1e6) / 1e6
}
