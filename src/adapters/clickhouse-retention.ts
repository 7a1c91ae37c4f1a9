// How long raw rows stay in ClickHouse (CLICK_RETENTION_DAYS, AUDIT_RETENTION_DAYS): a table TTL, set at
// start when it differs from the configured one and removed when the setting is unset. Statistics read
// only the hourly rollup (clicks_hourly_v1), which has no TTL, so every period (ALL included, and a Free
// account's all-time total) keeps working whatever the raw clicks' retention; the raw clicks are what a
// conversion is attributed to, hence at least the 30-day attribution window and a day.
//
// The TTL is changed without rewriting existing parts (materialize_ttl_after_modify = 0): expired rows
// go as ClickHouse merges, and a whole monthly part goes once every row in it has expired.
//
// On a cluster (CLICKHOUSE_CLUSTER) the rows live in the replicated <table>_local tables, so the TTL is
// set there, ON CLUSTER; the Distributed table in front holds no rows and takes no TTL.
import type { ClickHouseClient } from '@clickhouse/client'
import { localName } from './clickhouse-cluster'

export interface RetentionDays {
  /** clicks_v1; 0: for ever. */
  clicks: number
  /** agent_audit_v1; 0: for ever. */
  audit: number
}

const TABLES = [
  { table: 'clicks_v1', column: 'timestamp', setting: 'clicks' },
  { table: 'agent_audit_v1', column: 'at', setting: 'audit' },
] as const

/** The TTL clause ClickHouse shows for a table (engine_full), or '' without one. */
async function currentTtl(client: ClickHouseClient, table: string): Promise<string> {
  const result = await client.query({
    query: 'SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = {table:String}',
    query_params: { table },
    format: 'JSONEachRow',
  })
  const [row] = await result.json<{ engine_full: string }>()
  const match = /\bTTL\s+(.*?)(?:\s+SETTINGS\b|$)/.exec(row?.engine_full ?? '')
  return match?.[1]?.trim() ?? ''
}

/**
 * Sets or removes each table's TTL where it differs; what it changed, for the start log. With a cluster,
 * the TTL this node's replica shows is taken for the cluster's: ON CLUSTER sets it on every replica.
 */
export async function applyRetention(client: ClickHouseClient, days: RetentionDays, cluster?: string): Promise<string[]> {
  const changed: string[] = []
  for (const { table, column, setting } of TABLES) {
    const wanted = days[setting]
    const stored = cluster ? localName(table) : table
    const target = cluster ? `${stored} ON CLUSTER ${cluster}` : table
    const ttl = await currentTtl(client, stored)
    if (wanted > 0) {
      // The comparison is on the day count ClickHouse shows back (toIntervalDay(N)).
      if (ttl.includes(`toIntervalDay(${wanted})`)) continue
      await client.command({
        query: `ALTER TABLE ${target} MODIFY TTL toDateTime(${column}) + toIntervalDay(${wanted})`,
        clickhouse_settings: { materialize_ttl_after_modify: 0 },
      })
      changed.push(`${table}: rows older than ${wanted} days are deleted`)
    } else if (ttl !== '') {
      await client.command({ query: `ALTER TABLE ${target} REMOVE TTL` })
      changed.push(`${table}: kept for ever`)
    }
  }
  return changed
}
