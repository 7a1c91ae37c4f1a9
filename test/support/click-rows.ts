// The rows of one alias in ClickHouse, keyed by referrer: the crash test gives every request a referrer
// of its own, so it can tell which requests were stored, and how often.
import type { ClickHouseClient } from '@clickhouse/client'

export interface ClickRows {
  rows: number
  /** Distinct click ids. */
  ids: number
  byReferrer: Record<string, number>
}

export async function clickRowsOf(client: ClickHouseClient, alias: string): Promise<ClickRows> {
  const result = await client.query({
    query: 'SELECT referrer, count() AS n, uniqExact(click_id) AS ids FROM clicks_v1 WHERE alias = {alias:String} GROUP BY referrer',
    query_params: { alias },
    format: 'JSONEachRow',
  })
  const groups = await result.json<{ referrer: string; n: string | number; ids: string | number }>()
  const byReferrer: Record<string, number> = {}
  let rows = 0
  for (const group of groups) {
    byReferrer[group.referrer] = Number(group.n)
    rows += Number(group.n)
  }
  const distinct = await client.query({ query: 'SELECT uniqExact(click_id) AS u FROM clicks_v1 WHERE alias = {alias:String}', query_params: { alias }, format: 'JSONEachRow' })
  const [row] = await distinct.json<{ u: string | number }>()
  return { rows, ids: Number(row?.u ?? 0), byReferrer }
}
