// Clicks and conversions of a routed link by route (rule:<id>, ab:<id>, default), from ClickHouse: the
// clicks of the window, bots left out, and the conversions attributed to those clicks (joined on the
// click id, so a conversion counts for the route its click took). clicks_v1 is sorted by link, then
// time: a link's window is one range of the table.
import type { ClickHouseClient } from '@clickhouse/client'

export interface RouteCounts {
  clicks: number
  /** signup and lead conversions. */
  leads: number
  /** purchase and sale conversions. */
  sales: number
  /** every conversion but refunds. */
  conversions: number
}

const QUERY = `
SELECT c.route AS route, c.clicks AS clicks,
       ifNull(v.leads, 0) AS leads, ifNull(v.sales, 0) AS sales, ifNull(v.conversions, 0) AS conversions
FROM (
  SELECT route, count() AS clicks FROM clicks_v1
  WHERE link_id = {linkId:String} AND timestamp >= fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC')
    AND timestamp < fromUnixTimestamp64Milli({toMs:Int64}, 'UTC') AND is_bot = 0
  GROUP BY route
) AS c
LEFT JOIN (
  SELECT k.route AS route,
         countIf(cv.conversion_type IN ('signup', 'lead')) AS leads,
         countIf(cv.conversion_type IN ('purchase', 'sale')) AS sales,
         countIf(cv.conversion_type != 'refund') AS conversions
  FROM (
    SELECT conversion_id, any(click_id) AS click_id, any(conversion_type) AS conversion_type
    FROM conversions_v1 WHERE link_id = {linkId:String} GROUP BY conversion_id
  ) AS cv
  INNER JOIN (
    SELECT click_id, any(route) AS route FROM clicks_v1
    WHERE link_id = {linkId:String} AND timestamp >= fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC')
      AND timestamp < fromUnixTimestamp64Milli({toMs:Int64}, 'UTC') AND is_bot = 0
    GROUP BY click_id
  ) AS k ON cv.click_id = k.click_id
  GROUP BY k.route
) AS v ON v.route = c.route`

/** The counts of each route clicked in [fromMs, toMs); a route without clicks is absent. */
export async function routeCounts(client: ClickHouseClient, linkId: string, fromMs: number, toMs: number): Promise<Map<string, RouteCounts>> {
  const result = await client.query({ query: QUERY, query_params: { linkId, fromMs, toMs }, format: 'JSONEachRow' })
  const rows = await result.json<{ route: string; clicks: string | number; leads: string | number; sales: string | number; conversions: string | number }>()
  return new Map(rows.map((r) => [r.route, { clicks: Number(r.clicks), leads: Number(r.leads), sales: Number(r.sales), conversions: Number(r.conversions) }]))
}
