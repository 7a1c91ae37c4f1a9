// The test: audit recording loses no event across a 10 s outage of its store. ClickHouse is the
// chDB stand-in behind ClickHouse's HTTP interface (test/support/chdb-http.ts) in its own process, reached
// with @clickhouse/client as in production, really stopped for 10 s and started again on the same port
// and data. Calls are recorded throughout (one every 20 ms, as a busy Agent would make them); the
// recorder is timed on each, so the test also shows recording does not wait on the store while it is
// away (the 0.1 ms median that the issue asks of record() is measured in bench/audit.ts, not on a loaded
// test machine). Costs about 15 s.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ClickHouseClient } from '@clickhouse/client'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnChdbHttp, type ChdbHttpProcess } from '../../../test/support/chdb-http-process'
import { createClickHouse, migrateClickHouse } from '../../adapters/clickhouse'
import { readAudit } from './reader'
import { createAuditRecorder } from './recorder'
import { AUDIT_TABLE } from './row'
import { auditEvent, auditTestConfig, storedAudit } from '../../../test/support/audit-fixtures'

const OUTAGE_MS = 10_000
/**
 * A median cost of record() that only waiting on the store (its insert timeout) or the disk could reach:
 * generous, so a loaded machine cannot fail it. The 0.1 ms target is bench/audit.ts's.
 */
const RECORD_WAITED_MS = 5

let dir: string
let chdb: ChdbHttpProcess | undefined
let ch: ClickHouseClient

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'audit-outage-'))
  chdb = await spawnChdbHttp({ path: join(dir, 'chdb') })
  ch = await createClickHouse({ clickhouseUrl: chdb.url, dataDir: dir })
  await migrateClickHouse(ch)
  await stopMerges()
}, 60_000)

/** Background merges would fold a duplicate away (ReplacingMergeTree) and hide it from the counts. */
async function stopMerges(): Promise<void> {
  await ch.command({ query: `SYSTEM STOP MERGES ${AUDIT_TABLE}` })
}

afterAll(async () => {
  await ch?.close()
  await chdb?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('a 10 s outage of ClickHouse', () => {
  test('every event recorded before, during and after it is stored exactly once; record() stays cheap', async () => {
    const account = 'acct_outage'
    const agent = `agt_outage_${Date.now()}`
    const config = auditTestConfig({ spoolDir: join(dir, 'audit-spool'), flushIntervalMs: 200 })
    const log: string[] = []
    const recorder = createAuditRecorder({ clickhouse: ch, config, log: (l) => log.push(l) })
    const costs: number[] = []
    let calls = 0
    const load = setInterval(() => {
      const started = performance.now()
      recorder.record(auditEvent(account, agent, { durationMs: calls++ }))
      costs.push(performance.now() - started)
    }, 20)
    try {
      await Bun.sleep(1000)
      const port = chdb!.port
      await chdb!.stop()
      chdb = undefined
      await Bun.sleep(OUTAGE_MS)
      expect(recorder.counters.failedAttempts, 'inserts tried while ClickHouse was away').toBeGreaterThan(0)
      expect(recorder.counters.pendingBatches, 'segments waiting on disk').toBeGreaterThan(OUTAGE_MS / 200 / 2)
      expect(readdirSync(config.audit.spoolDir).length).toBeGreaterThan(OUTAGE_MS / 200 / 2)
      chdb = await spawnChdbHttp({ path: join(dir, 'chdb'), port })
      await stopMerges() // a new process: merges run again until told (the backlog's first insert may precede this)
      await Bun.sleep(1000)
    } finally {
      clearInterval(load)
    }
    expect(await recorder.flush(30_000), 'the backlog shipped after the restart').toBe(true)
    expect(recorder.counters).toMatchObject({ recorded: calls, dropped: 0, written: calls, pendingBatches: 0, spoolBytes: 0 })
    expect(await storedAudit(ch, agent)).toEqual({ rows: calls, ids: calls })
    expect(calls).toBeGreaterThan(400)
    const durations = new Set<number>()
    for (let cursor: string | undefined, page; (page = await readAudit(ch, { accountId: account, agentId: agent, limit: 100, cursor })); cursor = page.next_cursor ?? undefined) {
      for (const event of page.events) durations.add(event.duration_ms)
      if (!page.next_cursor) break
    }
    expect(durations.size, 'every call, none missing, none twice').toBe(calls)
    expect(log.join('\n')).toContain('audit events wait in the spool')
    expect(log.join('\n')).toContain('ClickHouse takes audit batches again')
    expect(readdirSync(config.audit.spoolDir)).toEqual([])
    const sorted = [...costs].sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)]!
    console.info(`record() during the outage: median ${(median * 1000).toFixed(1)} µs over ${costs.length} calls`)
    expect(median, 'median cost of record() on the call').toBeLessThan(RECORD_WAITED_MS)
    await recorder.close()
  }, 60_000)
})
