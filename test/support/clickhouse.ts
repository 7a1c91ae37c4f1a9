// One chDB-backed ClickHouse client per test process: chDB binds a single data directory per process,
// so every test file shares this in-memory one and keeps its rows apart by unique link ids.
import type { ClickHouseClient } from '@clickhouse/client'
import { createClickHouse, migrateClickHouse } from '../../src/adapters/clickhouse'

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
