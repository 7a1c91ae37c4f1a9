// The audit event of an at_ call (docs/agents-and-mcp.md#audit): what a caller hands to record(), what
// is stored (migrations/clickhouse/0005_agent_audit_v1.sql) and what GET /api/v1/agents/{agentId}/audit
// answers. Written once here with `t`; the types are derived from the schemas.
import { t, type Static } from 'elysia'
import { Int } from '../../plugins/errors'

export const AUDIT_VIA = ['rest', 'mcp'] as const
export type AuditVia = (typeof AUDIT_VIA)[number]

/**
 * What became of the call:
 * - `ok`: it ran and answered 1xx-3xx (a dry run that validated is `ok` with dry_run true);
 * - `held`: the Agent's policy held it for a human (202 with an approval id); nothing ran yet;
 * - `refused`: it was not run because of who asked: 401 (unknown, expired, revoked token, killed Agent),
 *   403 (missing scope, human-only route, another plan's feature) or 429 (rate limit, quota);
 * - `error`: every other answer: 4xx (invalid input, not found, conflict), 5xx (our side), and no
 *   status at all (0: the call ended without an answer).
 * The status is stored beside it, so the outcome is a summary, never the only record.
 */
export const AUDIT_OUTCOMES = ['ok', 'held', 'refused', 'error'] as const
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number]

/** The outcome a status stands for (see AUDIT_OUTCOMES); the caller may say `held` or `refused` itself. */
export function outcomeOf(status: number, approvalId?: string | null): AuditOutcome {
  if (status === 202 && approvalId) return 'held'
  if (status >= 100 && status < 400) return 'ok'
  if (status === 401 || status === 403 || status === 429) return 'refused'
  return 'error'
}

export type { AuditEventInput } from '../../adapters/ports'

export const AuditEvent = t.Object({
  id: t.String({ description: 'aud_… id of the event' }),
  at: t.String({ format: 'date-time', description: 'When the call arrived (UTC, milliseconds)' }),
  agent_id: t.String(),
  via: t.Union([t.Literal('rest'), t.Literal('mcp')], { description: 'rest or mcp' }),
  operation: t.String({ description: 'Operation named for policy (links.create, …); empty when none applies' }),
  method: t.String(),
  path: t.String({ description: 'Path of the call, never its query string' }),
  status: Int({ description: 'HTTP status answered' }),
  outcome: t.Union([t.Literal('ok'), t.Literal('held'), t.Literal('refused'), t.Literal('error')], {
    description: "ok (ran), held (waiting for a human's approval), refused (401, 403 or 429: not run because of who asked), error (any other 4xx or 5xx)",
  }),
  scopes_used: t.Array(t.String(), { description: 'Scopes the route requires: used by the call, or lacked when refused' }),
  approval_id: t.Union([t.String(), t.Null()], { description: 'apr_… id when the call was held for approval' }),
  dry_run: t.Boolean(),
  duration_ms: t.Number({ description: 'From arrival to the answer' }),
  ip_hash: t.String({ description: 'Keyed hash of the client address (never the address)' }),
})
export type AuditEvent = Static<typeof AuditEvent>

/** Largest page; the default is 20. */
export const AUDIT_MAX_LIMIT = 100
export const AUDIT_DEFAULT_LIMIT = 20

export const AuditQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: AUDIT_MAX_LIMIT, default: AUDIT_DEFAULT_LIMIT, description: `Events per page, 1-${AUDIT_MAX_LIMIT}` })),
  cursor: t.Optional(t.String({ pattern: '^[A-Za-z0-9_-]+$', maxLength: 256, description: 'next_cursor of the previous page' })),
})

export const AuditPage = t.Object({
  events: t.Array(AuditEvent, { description: 'Newest first' }),
  next_cursor: t.Union([t.String(), t.Null()], { description: 'Pass as ?cursor= for older events; null on the last page' }),
})
export type AuditPage = Static<typeof AuditPage>
