// The audit recorder on chDB (the real engine, in-process): every event recorded arrives once, in pages
// newest first; a lost answer, a restart and a crash between insert and delete double nothing; the
// spool's bound drops and counts instead of growing; no event carries more than its schema.
import { beforeAll, describe, expect, test } from 'bun:test'
import type { ClickHouseClient } from '@clickhouse/client'
import { appendFileSync, copyFileSync, existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { testClickHouse } from '../../../test/support/clickhouse'
import { parseConfig } from '../../../core/config'
import { readAudit } from './reader'
import { createAuditRecorder } from './recorder'
import { AUDIT_COLUMNS, AUDIT_TABLE } from './row'
import { clickhouseAuditSink } from './shipper'
import { readSegment, tokenOf } from './spool'
import { auditEvent, auditTestConfig, nextTurn, storedAudit, switchableSink } from '../../../test/support/audit-fixtures'

let ch: ClickHouseClient
let n = 0
/** Fresh ids per test: the chDB instance is shared by every test file of the process. */
const ids = () => ({ account: `acct_audit_${Date.now()}_${++n}`, agent: `agt_audit_${Date.now()}_${n}` })

beforeAll(async () => {
  ch = await testClickHouse()
  // Background merges would fold a duplicate away (ReplacingMergeTree) and hide it from these counts.
  await ch.command({ query: `SYSTEM STOP MERGES ${AUDIT_TABLE}` })
}, 60_000)

describe('recording', () => {
  test('N events recorded are N rows, read newest first across pages with no gap or repeat', async () => {
    const { account, agent } = ids()
    const recorder = createAuditRecorder({ clickhouse: ch, config: auditTestConfig() })
    const base = Date.UTC(2026, 0, 5, 12)
    // 55 events, three to a millisecond: the id breaks ties, pages must not cut through them wrongly.
    for (let i = 0; i < 55; i++) recorder.record(auditEvent(account, agent, { at: base + Math.floor(i / 3), durationMs: i }))
    recorder.record(auditEvent(account, ids().agent)) // another Agent of the account: not in this trail
    expect(await recorder.flush()).toBe(true)
    expect(await storedAudit(ch, agent)).toEqual({ rows: 55, ids: 55 })

    const seen: Array<{ id: string; at: string; duration_ms: number }> = []
    const sizes: number[] = []
    let cursor: string | undefined
    do {
      const page = await readAudit(ch, { accountId: account, agentId: agent, limit: 20, cursor })
      sizes.push(page.events.length)
      seen.push(...page.events)
      cursor = page.next_cursor ?? undefined
    } while (cursor)
    expect(sizes).toEqual([20, 20, 15])
    expect(new Set(seen.map((e) => e.id)).size).toBe(55)
    // Newest first, ties within a millisecond by id: the order of the table, so no page boundary loses one.
    const newestFirst = [...seen].sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1))
    expect(seen.map((e) => e.id)).toEqual(newestFirst.map((e) => e.id))
    expect(seen.map((e) => e.duration_ms).sort((a, b) => a - b)).toEqual(Array.from({ length: 55 }, (_, i) => i))
    expect(seen[0]!.at).toBe(new Date(base + 18).toISOString())
    expect(await recorder.close()).toMatchObject({ recorded: 56, written: 56, dropped: 0, pendingBatches: 0, spoolBytes: 0 })
  })

  test("an event holds the schema's fields and nothing else: no body, no token, no query string, no address", async () => {
    const { account, agent } = ids()
    const config = auditTestConfig()
    const recorder = createAuditRecorder({ clickhouse: ch, config })
    const secret = 'at_SECRETtoken0123456789abcdefghijklmnopqrstuv'
    const input = {
      ...auditEvent(account, agent, {
        via: 'mcp',
        operation: 'links.delete',
        method: 'post',
        path: `/api/v1/links/x?dry_run=true&access_token=${secret}#${secret}`,
        status: 202,
        approvalId: 'apr_0123456789abcdefghijkl',
        dryRun: true,
        ip: '198.51.100.23',
      }),
      // What a careless caller might spread in: never read.
      body: { password: secret },
      authorization: `Bearer ${secret}`,
      token: secret,
      headers: { cookie: secret },
    }
    recorder.record(input)
    await nextTurn()
    const spooled = readdirSync(config.audit.spoolDir)
      .map((f) => readFileSync(join(config.audit.spoolDir, f), 'utf8'))
      .join('')
    expect(spooled).toContain('links.delete') // the event is on disk one turn after the call…
    expect(spooled).not.toContain('SECRET') // …without the token, anywhere
    expect(spooled).not.toContain('198.51.100.23')
    expect(Object.keys(JSON.parse(spooled.trim()))).toEqual([...AUDIT_COLUMNS])

    expect(await recorder.flush()).toBe(true)
    const stored = await (await ch.query({ query: `SELECT * FROM ${AUDIT_TABLE} WHERE agent_id = {agent:String}`, query_params: { agent }, format: 'JSONEachRow' })).json<Record<string, unknown>>()
    expect(stored.length).toBe(1)
    expect(Object.keys(stored[0]!).sort()).toEqual([...AUDIT_COLUMNS].sort())
    expect(JSON.stringify(stored)).not.toContain('SECRET')

    const [event] = (await readAudit(ch, { accountId: account, agentId: agent })).events
    expect(event).toMatchObject({
      agent_id: agent,
      via: 'mcp',
      operation: 'links.delete',
      method: 'POST',
      path: '/api/v1/links/x',
      status: 202,
      outcome: 'held',
      scopes_used: ['links:write'],
      approval_id: 'apr_0123456789abcdefghijkl',
      dry_run: true,
      duration_ms: 3.25,
    })
    expect(Object.keys(event!).sort()).toEqual(['agent_id', 'approval_id', 'at', 'dry_run', 'duration_ms', 'id', 'ip_hash', 'method', 'operation', 'outcome', 'path', 'scopes_used', 'status', 'via'])
    expect(event!.id).toMatch(/^aud_[A-Za-z0-9_-]{22}$/)
    expect(event!.ip_hash).toMatch(/^[0-9a-f]{32}$/)
    await recorder.close()
  })

  test('record() never throws, whatever it is given, and does no I/O itself', async () => {
    const config = auditTestConfig()
    const recorder = createAuditRecorder({ clickhouse: ch, config })
    const { account, agent } = ids()
    const bad = [
      null,
      undefined,
      42,
      {},
      { accountId: account, agentId: agent, status: Number.NaN, via: 'carrier-pigeon', scopesUsed: 'links:write', durationMs: -1 },
      Object.defineProperty({}, 'path', {
        get() {
          throw new Error('hostile getter')
        },
      }),
    ]
    for (const value of bad) expect(() => recorder.record(value as never)).not.toThrow()
    expect(readdirSync(config.audit.spoolDir)).toEqual([]) // nothing written inside record()
    expect(await recorder.flush()).toBe(true)
    const [row] = (await readAudit(ch, { accountId: account, agentId: agent })).events
    expect(row).toMatchObject({ via: 'rest', status: 0, outcome: 'error', scopes_used: [], duration_ms: 0 })
    // Without an account and an Agent no trail could show an event: dropped and counted.
    expect(recorder.counters).toMatchObject({ recorded: 1, dropped: 5 })
    await recorder.close()
  })
})

describe('exactly once, through failures', () => {
  test('an insert whose answer is lost is retried under the same token and stored once', async () => {
    const { account, agent } = ids()
    const real = clickhouseAuditSink(ch)
    let calls = 0
    const losing = {
      async insert(rows: object[], token: string, label: Parameters<typeof real.insert>[2]) {
        await real.insert(rows, token, label)
        if (++calls === 1) throw new Error('socket hang up') // ClickHouse stored it; the answer never came
      },
    }
    const log: string[] = []
    const recorder = createAuditRecorder({ clickhouse: losing, config: auditTestConfig(), log: (l) => log.push(l), retryDelayMs: 10 })
    for (let i = 0; i < 40; i++) recorder.record(auditEvent(account, agent))
    expect(await recorder.flush()).toBe(true)
    expect(calls).toBe(2)
    expect(await storedAudit(ch, agent)).toEqual({ rows: 40, ids: 40 })
    expect(recorder.counters.failedAttempts).toBe(1)
    expect(log.join('\n')).toContain('takes audit batches again')
    await recorder.close()
  })

  test('a restart ships what the last run left, once, also a segment inserted just before the crash', async () => {
    const { account, agent } = ids()
    const config = auditTestConfig()
    const sink = switchableSink(clickhouseAuditSink(ch))
    sink.down = true
    const first = createAuditRecorder({ clickhouse: sink, config, retryDelayMs: 10 })
    for (let i = 0; i < 30; i++) {
      first.record(auditEvent(account, agent, { durationMs: i }))
      if (i % 10 === 9) expect(await first.flush(50)).toBe(false) // three segments, none taken
    }
    const closed = await first.close(50)
    expect(closed).toMatchObject({ recorded: 30, written: 0, pendingBatches: 3 })
    const files = readdirSync(config.audit.spoolDir).sort()
    expect(files.length).toBe(3)

    // The first segment reached ClickHouse but the process died before deleting it: ship it by hand
    // under its own token, as the dead run would have.
    const head = join(config.audit.spoolDir, files[0]!)
    await clickhouseAuditSink(ch).insert(readSegment(head).rows, tokenOf(head), 'size')
    // The last one was being written when the process died: a torn line at its end.
    appendFileSync(join(config.audit.spoolDir, files[2]!), '{"id":"aud_torn","account_id"')
    copyFileSync(head, `${head}.bak`) // not a segment: ignored

    const second = createAuditRecorder({ clickhouse: ch, config })
    expect(await second.flush()).toBe(true)
    expect(await storedAudit(ch, agent)).toEqual({ rows: 30, ids: 30 })
    expect(second.counters).toMatchObject({ written: 30, batchesWritten: 3, corrupt: 0, pendingBatches: 0 })
    expect(second.counters.flushes.replay).toBe(3)
    expect(readdirSync(config.audit.spoolDir)).toEqual([`${files[0]}.bak`])
    await second.close()
  })

  test('at AUDIT_SPOOL_MAX_BYTES events are dropped and counted, calls go on; the rest arrive once', async () => {
    const { account, agent } = ids()
    const sink = switchableSink(clickhouseAuditSink(ch))
    sink.down = true
    const log: string[] = []
    // The smallest bound (1 MiB) and ~1.3 KB an event (a path at its 1,024 characters): full after ~800.
    const recorder = createAuditRecorder({ clickhouse: sink, config: auditTestConfig({ maxSpoolBytes: 1024 * 1024, batchSize: 100 }), log: (l) => log.push(l), retryDelayMs: 10, maxRetryDelayMs: 50 })
    const path = `/api/v1/links/${'x'.repeat(1000)}`
    for (let i = 0; i < 1200; i++) {
      recorder.record(auditEvent(account, agent, { path: `${i}${path}` }))
      if (i % 50 === 49) await nextTurn()
    }
    await nextTurn()
    const { recorded, dropped, spoolNearFull } = recorder.counters
    expect(recorded + dropped).toBe(1200)
    expect(dropped).toBeGreaterThan(100)
    expect(spoolNearFull).toBe(1)
    expect(log.join('\n')).toContain('AUDIT_SPOOL_MAX_BYTES')
    expect(log.join('\n')).toContain('the spool is FULL')

    sink.down = false
    expect(await recorder.flush()).toBe(true)
    expect(await storedAudit(ch, agent)).toEqual({ rows: recorded, ids: recorded })
    expect(log.join('\n')).toContain('back under 80 %')
    expect(recorder.counters.spoolBytes).toBe(0)
    await recorder.close()
  })

  test('close() leaves what the store did not take on disk, and events recorded after it too', async () => {
    const { account, agent } = ids()
    const config = auditTestConfig()
    const sink = switchableSink(clickhouseAuditSink(ch))
    sink.down = true
    const recorder = createAuditRecorder({ clickhouse: sink, config, retryDelayMs: 10 })
    recorder.record(auditEvent(account, agent))
    await recorder.close(30)
    recorder.record(auditEvent(account, agent)) // a call still finishing during shutdown
    await nextTurn()
    expect(readdirSync(config.audit.spoolDir).length).toBe(2)
    const next = createAuditRecorder({ clickhouse: ch, config })
    expect(await next.flush()).toBe(true)
    expect(await storedAudit(ch, agent)).toEqual({ rows: 2, ids: 2 })
    await next.close()
  })
})

describe('where the spool lives', () => {
  test('with DATA_DIR=:memory: (the test default) it is a temporary directory, never ":memory:" here', async () => {
    const { account, agent } = ids()
    const recorder = createAuditRecorder({ clickhouse: ch, config: { ipHashSecret: 'x'.repeat(32), audit: parseConfig({ DATA_DIR: ':memory:' }).audit } })
    recorder.record(auditEvent(account, agent))
    expect(await recorder.flush()).toBe(true)
    expect(existsSync(':memory:')).toBe(false)
    expect(await storedAudit(ch, agent)).toEqual({ rows: 1, ids: 1 })
    await recorder.close()
  })
})

describe('sealing', () => {
  test('a full segment ships at once, a partial one by the interval, each labelled', async () => {
    const { account, agent } = ids()
    const recorder = createAuditRecorder({ clickhouse: ch, config: auditTestConfig({ batchSize: 10, flushIntervalMs: 50 }) })
    // Ten a turn, as calls arrive: two turns fill a segment each, the last five wait for the interval.
    for (let i = 0; i < 25; i++) {
      recorder.record(auditEvent(account, agent))
      if (i % 10 === 9) await nextTurn()
    }
    const deadline = Date.now() + 5000
    while ((await storedAudit(ch, agent)).rows < 25 && Date.now() < deadline) await Bun.sleep(20)
    expect(await storedAudit(ch, agent)).toEqual({ rows: 25, ids: 25 })
    expect(recorder.counters.flushes).toMatchObject({ size: 2, interval: 1 })
    await recorder.close()
  })
})
