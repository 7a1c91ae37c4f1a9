// Reads one Agent's audit trail, newest first, a page at a time (GET /api/v1/agents/{agentId}/audit).
//
// The cursor is the position (at in milliseconds, id) of the last event of a page, as base64url JSON:
// the next page is every event strictly before it in (at, id) order, which is the table's sort order
// within an Agent, so pages neither skip nor repeat events, also when several share a millisecond and
// when new ones arrive between pages (those are newer and land on page one).
//
// Freshness: an event reaches ClickHouse within about AUDIT_FLUSH_MS (1 s) of its call. This reads
// what is there and never waits for the recorder; a caller that must see this process's latest events
// calls recorder.flush() first (tests do). Events of other API processes show within their own interval.
import type { ClickHouseClient } from '@clickhouse/client'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import { isId } from '../../lib/ids'
import { ApiError } from '../../plugins/errors'
import { AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT, type AuditEvent, type AuditOutcome, type AuditPage, type AuditVia } from './model'
import { AUDIT_TABLE } from './row'

export interface AuditPosition {
  atMs: number
  id: string
}

export interface AuditReadQuery {
  accountId: string
  agentId: string
  /** 1-100, default 20. */
  limit?: number
  cursor?: string
}

const DIGITS = /^\d{1,15}$/

export function encodeAuditCursor(position: AuditPosition): string {
  return Buffer.from(JSON.stringify({ t: String(position.atMs), i: position.id })).toString('base64url')
}

/** The position of a cursor this API returned; anything else is 400 VALIDATION_FAILED, never a query. */
export function decodeAuditCursor(cursor: string): AuditPosition {
  let value: unknown = null
  if (/^[A-Za-z0-9_-]{1,256}$/.test(cursor)) {
    try {
      value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    } catch {
      value = null
    }
  }
  const { t, i } = (typeof value === 'object' && value !== null ? value : {}) as { t?: unknown; i?: unknown }
  if (typeof t !== 'string' || typeof i !== 'string' || !DIGITS.test(t) || !isId('audit', i)) {
    throw new ApiError('VALIDATION_FAILED', 'query.cursor: not a cursor this API returned; pass data.next_cursor as it is, or leave it out for the newest events.')
  }
  return { atMs: Number(t), id: i }
}

interface StoredRow {
  id: string
  at_ms: number | string
  agent_id: string
  via: string
  operation: string
  method: string
  path: string
  status: number
  outcome: string
  scopes_used: string[]
  approval_id: string
  dry_run: number
  duration_ms: number
  ip_hash: string
}

function event(row: StoredRow): AuditEvent {
  return {
    id: row.id,
    at: new Date(Number(row.at_ms)).toISOString(),
    agent_id: row.agent_id,
    via: row.via as AuditVia,
    operation: row.operation,
    method: row.method,
    path: row.path,
    status: Number(row.status),
    outcome: row.outcome as AuditOutcome,
    scopes_used: row.scopes_used,
    approval_id: row.approval_id === '' ? null : row.approval_id,
    dry_run: Number(row.dry_run) === 1,
    duration_ms: Number(row.duration_ms),
    ip_hash: row.ip_hash,
  }
}

/**
 * One page of an Agent's events, newest first. The caller has checked the Agent is the account's (a
 * foreign Agent is 404 there); the account filter here keeps a mistake from ever showing another
 * account's events. ClickHouse not answering is 503 SERVICE_UNAVAILABLE.
 */
export async function readAudit(clickhouse: ClickHouseClient, query: AuditReadQuery): Promise<AuditPage> {
  const limit = query.limit ?? AUDIT_DEFAULT_LIMIT
  if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_MAX_LIMIT) {
    throw new ApiError('VALIDATION_FAILED', `query.limit: a whole number from 1 to ${AUDIT_MAX_LIMIT}.`)
  }
  const after = query.cursor === undefined ? null : decodeAuditCursor(query.cursor)
  let rows: StoredRow[]
  try {
    const result = await clickhouse.query({
      // LIMIT 1 BY id: one row per event even before a copy that slipped past the dedup window is merged away.
      query: `SELECT id, toUnixTimestamp64Milli(at) AS at_ms, agent_id, via, operation, method, path, status, outcome,
                     scopes_used, approval_id, dry_run, duration_ms, ip_hash
              FROM ${AUDIT_TABLE}
              WHERE account_id = {accountId:String} AND agent_id = {agentId:String}
              ${after ? "AND (at, id) < (fromUnixTimestamp64Milli({atMs:Int64}, 'UTC'), {id:String})" : ''}
              ORDER BY at DESC, id DESC
              LIMIT 1 BY id
              LIMIT {take:UInt32}`,
      query_params: { accountId: query.accountId, agentId: query.agentId, take: limit + 1, ...(after ? { atMs: after.atMs, id: after.id } : {}) },
      format: 'JSONEachRow',
    })
    rows = await result.json<StoredRow>()
  } catch (error) {
    log.warn({ component: 'audit', error: errorSummary(error) }, 'audit read failed')
    throw new ApiError('SERVICE_UNAVAILABLE', 'The audit store (ClickHouse) does not answer; retry shortly.')
  }
  const page = rows.slice(0, limit).map(event)
  const last = page.at(-1)
  const more = rows.length > limit && last !== undefined
  return { events: page, next_cursor: more ? encodeAuditCursor({ atMs: Date.parse(last.at), id: last.id }) : null }
}
