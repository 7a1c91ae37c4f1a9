// Retention on the ClickHouse engine behind its HTTP interface (the chDB stand-in, a process of its own
// with its own data, as a server would be): the TTL is set, left alone when unchanged, removed when
// unset; expired raw clicks go at the next merge while the hourly rollup, which statistics read, keeps
// their counts. A store of its own: a TTL here can never touch another test's rows.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createClient, type ClickHouseClient } from '@clickhouse/client'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { clickTimestamp } from '../../core/clicks'
import { spawnChdbHttp, type ChdbHttpProcess } from '../../test/support/chdb-http-process'
import { migrateClickHouse } from './clickhouse'
import { applyRetention } from './clickhouse-retention'

let server: ChdbHttpProcess
let client: ClickHouseClient

beforeAll(async () => {
  server = await spawnChdbHttp({ path: join(mkdtempSync(join(tmpdir(), 'retention-')), 'chdb') })
  client = createClient({ url: server.url, request_timeout: 10_000 })
  await migrateClickHouse(client)
}, 60_000)

afterAll(async () => {
  await client?.close()
  await server?.stop()
})

const count = async (query: string, linkId: string) => {
  const result = await client.query({ query, query_params: { linkId }, format: 'JSONEachRow' })
  return Number((await result.json<{ n: string }>())[0]?.n ?? 0)
}

describe('ClickHouse retention', () => {
  test('set once (a second start changes nothing), changed, and removed', async () => {
    try {
      expect(await applyRetention(client, { clicks: 40, audit: 365 })).toEqual(['clicks_v1: rows older than 40 days are deleted', 'agent_audit_v1: rows older than 365 days are deleted'])
      expect(await applyRetention(client, { clicks: 40, audit: 365 })).toEqual([])
      expect(await applyRetention(client, { clicks: 90, audit: 365 })).toEqual(['clicks_v1: rows older than 90 days are deleted'])
    } finally {
      expect(await applyRetention(client, { clicks: 0, audit: 0 })).toEqual(['clicks_v1: kept for ever', 'agent_audit_v1: kept for ever'])
    }
    expect(await applyRetention(client, { clicks: 0, audit: 0 })).toEqual([])
  })

  test('expired raw clicks go at the next merge; recent ones stay; the rollup statistics read keeps them all', async () => {
    const linkId = `link_retention_${crypto.randomUUID().slice(0, 8)}`
    const day = 86_400_000
    const rows = [400, 200, 45, 10, 1].map((daysAgo, i) => ({
      click_id: `${linkId}-${i}`,
      link_id: linkId,
      domain: 'sho.rt',
      alias: 'keep',
      timestamp: clickTimestamp(Date.now() - daysAgo * day),
      referrer: '',
      user_agent: '',
      ip_hash: '',
      country: '',
    }))
    await client.insert({ table: 'clicks_v1', values: rows, format: 'JSONEachRow' })
    const rollup = "SELECT sum(clicks) AS n FROM clicks_hourly_v1 WHERE link_id = {linkId:String} AND dim = 'total'"
    const raw = 'SELECT count() AS n FROM clicks_v1 WHERE link_id = {linkId:String}'
    expect(await count(raw, linkId)).toBe(5)
    try {
      await applyRetention(client, { clicks: 31, audit: 0 })
      await client.command({ query: 'OPTIMIZE TABLE clicks_v1 FINAL' })
      expect(await count(raw, linkId)).toBe(2)
      expect(await count(rollup, linkId)).toBe(5)
    } finally {
      await applyRetention(client, { clicks: 0, audit: 0 })
    }
  })
})
