// The chDB HTTP shim (tests and bench only) must look like a ClickHouse server to @clickhouse/client:
// migrations, deduplicated inserts, typed parameters, errors, persistence and a fast failure when down.
import { ClickHouseError, ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrateClickHouse } from '../../src/adapters/clickhouse'
import { spawnChdbHttp, type ChdbHttpProcess } from './chdb-http-process'
import { ANSWER_DEADLINE_MS, within } from './wait'

const dataDir = mkdtempSync(join(tmpdir(), 'chdb-http-test-'))
let shim: ChdbHttpProcess
let client: ClickHouseClient
/** The failures below are expected; the client would log each one as an error. */
const quiet = { log: { level: ClickHouseLogLevel.OFF } }

function clickRow(clickId: string, linkId: string) {
  return {
    click_id: clickId,
    link_id: linkId,
    domain: 'sho.rt',
    alias: 'abc',
    timestamp: '2026-01-02 03:04:05.678',
    referrer: '',
    user_agent: 'test',
    ip_hash: '',
    country: '',
  }
}

async function countClicks(c: ClickHouseClient, linkId: string): Promise<number> {
  const result = await c.query({
    query: 'SELECT count() AS n FROM clicks_v1 WHERE link_id = {link:String}',
    query_params: { link: linkId },
    format: 'JSONEachRow',
  })
  const rows = await result.json<{ n: string | number }>()
  return Number(rows[0]?.n)
}

beforeAll(async () => {
  shim = await spawnChdbHttp({ path: dataDir })
  client = createClient({ url: shim.url, request_timeout: 5_000, ...quiet })
})

afterAll(async () => {
  await client?.close()
  await shim?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('chdb-http shim', () => {
  test('answers ping and applies the ClickHouse migrations', async () => {
    const ping = await client.ping()
    expect(ping.success, JSON.stringify(ping)).toBe(true)
    const ran = await migrateClickHouse(client)
    expect(ran).toContain('0001_clicks_v1.sql')
    expect(await migrateClickHouse(client)).toEqual([])
  })

  test('the same insert_deduplication_token stores a batch once', async () => {
    const values = [clickRow('c1', 'link_dedup'), clickRow('c2', 'link_dedup')]
    const settings = { insert_deduplication_token: 'batch-1', insert_deduplicate: 1 as const, log_comment: 'clicks:size' }
    await client.insert({ table: 'clicks_v1', values, format: 'JSONEachRow', clickhouse_settings: settings })
    await client.insert({ table: 'clicks_v1', values, format: 'JSONEachRow', clickhouse_settings: settings })
    expect(await countClicks(client, 'link_dedup')).toBe(2)

    // The token, not the content, names the batch: other rows under the same token are dropped too...
    const other = [clickRow('c3', 'link_dedup')]
    await client.insert({ table: 'clicks_v1', values: other, format: 'JSONEachRow', clickhouse_settings: settings })
    expect(await countClicks(client, 'link_dedup')).toBe(2)

    // ...and another token is another batch, even with the same rows.
    await client.insert({
      table: 'clicks_v1',
      values,
      format: 'JSONEachRow',
      clickhouse_settings: { ...settings, insert_deduplication_token: 'batch-2' },
    })
    expect(await countClicks(client, 'link_dedup')).toBe(4)
  })

  test('binds {name:Type} parameters as the server does, strings with tabs and quotes included', async () => {
    const awkward = "it's\ta \\ test\nline"
    const result = await client.query({
      query: `SELECT {s:String} AS s, {n:UInt32} * 2 AS n, {list:Array(String)} AS list,
                     {at:DateTime64(3, 'UTC')} AS at`,
      query_params: { s: awkward, n: 21, list: ['a', "b'c"], at: '2026-01-02 03:04:05.678' },
      format: 'JSONEachRow',
    })
    const rows = await result.json<{ s: string; n: number; list: string[]; at: string }>()
    expect(rows, JSON.stringify(rows)).toEqual([{ s: awkward, n: 42, list: ['a', "b'c"], at: '2026-01-02 03:04:05.678' }])
  })

  test('settings of one request do not leak into the next', async () => {
    const read = async (settings?: { log_comment: string }) => {
      const r = await client.query({ query: "SELECT getSetting('log_comment') AS c", format: 'JSONEachRow', clickhouse_settings: settings })
      return (await r.json<{ c: string }>())[0]?.c
    }
    expect(await read({ log_comment: 'first' })).toBe('first')
    expect(await read()).toBe('')
  })

  test('gzip in both directions works', async () => {
    const gz = createClient({ url: shim.url, request_timeout: 5_000, compression: { request: true, response: true }, ...quiet })
    try {
      await gz.insert({ table: 'clicks_v1', values: [clickRow('gz1', 'link_gzip')], format: 'JSONEachRow' })
      expect(await countClicks(gz, 'link_gzip')).toBe(1)
    } finally {
      await gz.close()
    }
  })

  test('a bad query is answered with a ClickHouseError with the code and type', async () => {
    // Answered: a ClickHouseError carries the server's code, where the client's request timeout would
    // raise a plain Error (a wall-clock bound on this flaked at 2.08 s on a loaded 2-core CI machine).
    const error = await client.query({ query: 'SELECT * FROM no_such_table', format: 'JSONEachRow' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ClickHouseError)
    expect((error as ClickHouseError).code).toBe('60')
    expect((error as ClickHouseError).type).toBe('UNKNOWN_TABLE')
    const syntax = await client.command({ query: 'SELEC 1' }).catch((e: unknown) => e)
    expect(syntax).toBeInstanceOf(ClickHouseError)
    expect((syntax as ClickHouseError).type).toBe('SYNTAX_ERROR')
  })

  test('an insert fails fast while the shim is down, and a restart on the same path keeps the data', async () => {
    const before = await countClicks(client, 'link_dedup')
    expect(await shim.stop()).toBe(0)

    // Fast: the connection is refused, not left to the client's request timeout (longer than the deadline).
    const down = createClient({ url: shim.url, request_timeout: 2 * ANSWER_DEADLINE_MS, ...quiet })
    const error = await within(
      down.insert({ table: 'clicks_v1', values: [clickRow('lost', 'link_down')], format: 'JSONEachRow' }).catch((e: unknown) => e),
      'an insert while the shim is down',
    )
    await down.close()
    expect(error).toMatchObject({ code: 'ECONNREFUSED' })

    shim = await spawnChdbHttp({ path: dataDir })
    await client.close()
    client = createClient({ url: shim.url, request_timeout: 5_000, ...quiet })
    expect(await countClicks(client, 'link_dedup')).toBe(before)
    expect(await countClicks(client, 'link_down')).toBe(0)
    expect(await migrateClickHouse(client)).toEqual([])
  })
})
