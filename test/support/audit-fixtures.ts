// FOR TESTS AND THE BENCHMARK ONLY (nothing else imports it): audit settings on a temporary spool, a
// realistic event, a sink that can be switched off, and counts straight from ClickHouse.
import type { ClickHouseClient } from '@clickhouse/client'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Config } from '../../core/config'
import type { AuditEventInput } from '../../src/modules/audit/model'
import { AUDIT_TABLE } from '../../src/modules/audit/row'
import type { AuditSink } from '../../src/modules/audit/shipper'

export const TEST_IP_HASH_SECRET = 'audit-test-ip-hash-secret-0123456789'

export function auditTestConfig(overrides: Partial<Config['audit']> = {}): Pick<Config, 'audit' | 'ipHashSecret'> {
  return {
    ipHashSecret: TEST_IP_HASH_SECRET,
    audit: {
      spoolDir: overrides.spoolDir ?? mkdtempSync(join(tmpdir(), 'audit-spool-')),
      batchSize: 1000,
      flushIntervalMs: 1000,
      maxSpoolBytes: 64 * 1024 * 1024,
      fsync: false,
      ...overrides,
    },
  }
}

/** An at_ call as the request path would describe it. */
export function auditEvent(accountId: string, agentId: string, overrides: Partial<AuditEventInput> = {}): AuditEventInput {
  return {
    accountId,
    agentId,
    via: 'rest',
    operation: 'links.create',
    method: 'POST',
    path: '/api/v1/shorten',
    status: 201,
    scopesUsed: ['links:write'],
    approvalId: null,
    dryRun: false,
    durationMs: 3.25,
    ip: '203.0.113.9',
    ...overrides,
  }
}

/** A sink in front of another that fails while `down` is set, as a store that does not answer would. */
export function switchableSink(inner: AuditSink): AuditSink & { down: boolean; attempts: number } {
  const sink = {
    down: false,
    attempts: 0,
    async insert(rows: object[], token: string, label: Parameters<AuditSink['insert']>[2]) {
      sink.attempts++
      if (sink.down) throw new Error('connect ECONNREFUSED 127.0.0.1:8123')
      await inner.insert(rows, token, label)
    },
  }
  return sink
}

/** Rows and distinct ids stored for one Agent (every copy counted, none merged away). */
export async function storedAudit(client: ClickHouseClient, agentId: string): Promise<{ rows: number; ids: number }> {
  const result = await client.query({
    query: `SELECT count() AS rows, uniqExact(id) AS ids FROM ${AUDIT_TABLE} WHERE agent_id = {agentId:String}`,
    query_params: { agentId },
    format: 'JSONEachRow',
  })
  const [row] = await result.json<{ rows: number | string; ids: number | string }>()
  return { rows: Number(row?.rows ?? 0), ids: Number(row?.ids ?? 0) }
}

/** Lets this event-loop turn end, so the recorder's group commit runs. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
