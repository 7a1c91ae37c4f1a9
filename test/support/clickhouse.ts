// One chDB-backed ClickHouse client per test process: chDB binds a single data directory per process,
// so every test file shares this in-memory one and keeps its rows apart by unique link ids.
import type { ClickHouseClient } from '@clickhouse/client'
import { createClickHouse, migrateClickHouse } from '../../src/adapters/clickhouse'
import { clickTimestamp } from '../../core/clicks'

let shared: Promise<ClickHouseClient> | null = null

export function testClickHouse(): Promise<ClickHouseClient> {
  shared ??= (async () => {
    const client = await createClickHouse({ clickhouseUrl: undefined, dataDir: ':memory:' })
    await migrateClickHouse(client)
    return client
  })()
  return shared
}

export async function countClicks(client: ClickHouseClient, linkId: string): Promise<number> {
  const result = await client.query({
    query: 'SELECT count() AS n FROM clicks_v1 WHERE link_id = {linkId:String}',
    query_params: { linkId },
    format: 'JSONEachRow',
  })
  const [row] = await result.json<{ n: number | string }>()
  return Number(row?.n ?? 0)
}

/** A click for the statistics tests: when it happened, and the enriched columns they group by. */
export type TestClick = { at: number; country?: string; referrer_host?: string; device_type?: string; browser?: string; os?: string; is_bot?: number; route?: string; click_id?: string }

/**
 * Inserts clicks as redirect/clickhouse-sink.ts writes a batch: with a dedup token and the setting that
 * carries it into the hourly rollup. Always a token of our own: the shared chDB session keeps the
 * settings of earlier inserts (another file's token would make this batch look like a duplicate).
 */
export async function insertTestClicks(client: ClickHouseClient, linkId: string, clicks: TestClick[], dedupToken: string = crypto.randomUUID()): Promise<void> {
  await client.insert({
    table: 'clicks_v1',
    format: 'JSONEachRow',
    clickhouse_settings: { insert_deduplicate: 1, insert_deduplication_token: dedupToken, deduplicate_blocks_in_dependent_materialized_views: 1 },
    values: clicks.map((c, i) => ({
      click_id: c.click_id ?? `${linkId}_${i}`,
      link_id: linkId,
      domain: 'sho.rt',
      alias: 'a',
      timestamp: clickTimestamp(c.at),
      country: c.country ?? 'US',
      referrer_host: c.referrer_host ?? '',
      device_type: c.device_type ?? 'desktop',
      browser: c.browser ?? 'Chrome',
      os: c.os ?? 'Windows',
      is_bot: c.is_bot ?? 0,
      ...(c.route !== undefined && { route: c.route }),
    })),
  })
}
