// Reading an Agent's trail: the cursor is opaque and checked, the limit bounded, the account enforced,
// and a store that does not answer is a 503, never a bare 500.
import { beforeAll, describe, expect, test } from 'bun:test'
import type { ClickHouseClient } from '@clickhouse/client'
import { testClickHouse } from '../../../test/support/clickhouse'
import { ApiError } from '../../plugins/errors'
import { decodeAuditCursor, encodeAuditCursor, readAudit } from './reader'
import { createAuditRecorder } from './recorder'
import { auditEvent, auditTestConfig } from '../../../test/support/audit-fixtures'

let ch: ClickHouseClient
const account = `acct_reader_${Date.now()}`
const agent = `agt_reader_${Date.now()}`

/** The ApiError a call rejects with, as "CODE status: hint". */
async function apiError(call: Promise<unknown>): Promise<string> {
  try {
    await call
  } catch (error) {
    if (error instanceof ApiError) return `${error.code} ${error.status}: ${error.hint}`
    throw error
  }
  throw new Error('expected an ApiError')
}

beforeAll(async () => {
  ch = await testClickHouse()
  const recorder = createAuditRecorder({ clickhouse: ch, config: auditTestConfig() })
  for (let i = 0; i < 3; i++) recorder.record(auditEvent(account, agent, { at: Date.UTC(2026, 1, 1) + i }))
  await recorder.flush()
  await recorder.close()
}, 60_000)

describe('readAudit', () => {
  test('the default page is 20; a page that holds the rest has no next_cursor', async () => {
    const page = await readAudit(ch, { accountId: account, agentId: agent })
    expect(page.events.length).toBe(3)
    expect(page.next_cursor).toBeNull()
    const first = await readAudit(ch, { accountId: account, agentId: agent, limit: 2 })
    expect(first.events.map((e) => e.at)).toEqual(['2026-02-01T00:00:00.002Z', '2026-02-01T00:00:00.001Z'])
    const rest = await readAudit(ch, { accountId: account, agentId: agent, limit: 2, cursor: first.next_cursor! })
    expect(rest).toMatchObject({ events: [{ at: '2026-02-01T00:00:00.000Z' }], next_cursor: null })
  })

  test("another account never sees the Agent's events, even with its id", async () => {
    const page = await readAudit(ch, { accountId: 'acct_someone_else', agentId: agent })
    expect(page).toEqual({ events: [], next_cursor: null })
  })

  test('a cursor it did not make, or a limit out of 1-100, is 400 VALIDATION_FAILED', async () => {
    const forged = [
      'not-base64-json',
      Buffer.from('{"t":"1","i":"x\' OR 1=1"}').toString('base64url'),
      Buffer.from('{"t":"-5","i":"aud_0123456789abcdefghijkl"}').toString('base64url'),
      '',
      'a'.repeat(300),
    ]
    for (const cursor of forged) {
      expect(await apiError(readAudit(ch, { accountId: account, agentId: agent, cursor }))).toStartWith('VALIDATION_FAILED 400: query.cursor')
    }
    for (const limit of [0, 101, 1.5, Number.NaN]) {
      expect(await apiError(readAudit(ch, { accountId: account, agentId: agent, limit }))).toStartWith('VALIDATION_FAILED 400: query.limit')
    }
    const position = { atMs: 1767225600123, id: 'aud_0123456789abcdefghijkl' }
    expect(decodeAuditCursor(encodeAuditCursor(position))).toEqual(position)
  })

  test('ClickHouse not answering is 503 SERVICE_UNAVAILABLE', async () => {
    const down = { query: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:8123')) } as unknown as ClickHouseClient
    expect(await apiError(readAudit(down, { accountId: account, agentId: agent }))).toStartWith('SERVICE_UNAVAILABLE 503')
  })
})
