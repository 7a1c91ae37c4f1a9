// An audit event as it is stored: one JSON line in the spool, one row of agent_audit_v1. Built field by
// field from the recorded input, so nothing else on the caller's object (a body, a token, a header) can
// reach the disk or the table; the client address is replaced by its keyed hash here, before the disk.
// Runs in the recorder's group commit, after the audited call has answered, never inside record().
import { IpHasher } from '../../../core/ip-hash'
import { newId } from '../../lib/ids'
import { AUDIT_OUTCOMES, AUDIT_VIA, outcomeOf, type AuditEventInput, type AuditOutcome, type AuditVia } from './model'

/** Versioned table name: a breaking change makes agent_audit_v2 rather than an in-place ALTER. */
export const AUDIT_TABLE = 'agent_audit_v1'

export const AUDIT_COLUMNS = [
  'id',
  'account_id',
  'agent_id',
  'at',
  'via',
  'operation',
  'method',
  'path',
  'status',
  'outcome',
  'scopes_used',
  'approval_id',
  'dry_run',
  'duration_ms',
  'ip_hash',
] as const

export interface AuditRow {
  id: string
  account_id: string
  agent_id: string
  /** 'YYYY-MM-DD hh:mm:ss.sss', UTC: the DateTime64(3) text ClickHouse parses without settings. */
  at: string
  via: AuditVia
  operation: string
  method: string
  path: string
  status: number
  outcome: AuditOutcome
  scopes_used: string[]
  approval_id: string
  dry_run: 0 | 1
  duration_ms: number
  ip_hash: string
}

// Bounds on what one event may store: the path and the operation come from the request.
const MAX_PATH = 1024
const MAX_SHORT = 64
const MAX_SCOPES = 32
/** Distinct client addresses whose hash is remembered; the memo is dropped whole when it fills. */
const IP_MEMO_SIZE = 10_000

const VIA = new Set<string>(AUDIT_VIA)
const OUTCOMES = new Set<string>(AUDIT_OUTCOMES)

/** 'YYYY-MM-DD hh:mm:ss.sss' in UTC. */
export function auditTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '')
}

function short(value: unknown): string {
  return typeof value === 'string' ? value.slice(0, MAX_SHORT) : ''
}

/** The path alone: a query string or fragment may carry codes or tokens, so it is cut off, always. */
export function auditPath(value: unknown): string {
  if (typeof value !== 'string') return ''
  const end = value.search(/[?#]/)
  return (end < 0 ? value : value.slice(0, end)).slice(0, MAX_PATH)
}

export class AuditEncoder {
  private readonly ipHasher: IpHasher

  constructor(ipHashSecret: string) {
    this.ipHasher = new IpHasher(ipHashSecret, IP_MEMO_SIZE)
  }

  /** Keyed SHA-256 of an address, as clicks hash theirs (core/ip-hash.ts); empty for no address. */
  hashIp(ip: string): string {
    return this.ipHasher.hash(ip)
  }

  /**
   * The stored row of an input recorded at `at`. Fields of the wrong type become empty; an input without
   * its account and Agent is refused (the recorder counts it as dropped): no trail could show it.
   */
  row(input: AuditEventInput, at: number): AuditRow {
    if (typeof input?.accountId !== 'string' || typeof input.agentId !== 'string' || !input.accountId || !input.agentId) {
      throw new TypeError('an audit event needs accountId and agentId')
    }
    const status = Number.isInteger(input.status) && input.status >= 0 && input.status <= 999 ? input.status : 0
    const approvalId = short(input.approvalId)
    const outcome = typeof input.outcome === 'string' && OUTCOMES.has(input.outcome) ? input.outcome : outcomeOf(status, approvalId)
    const duration = typeof input.durationMs === 'number' && Number.isFinite(input.durationMs) && input.durationMs > 0 ? input.durationMs : 0
    return {
      id: newId('audit'),
      account_id: short(input.accountId),
      agent_id: short(input.agentId),
      at: auditTimestamp(Number.isFinite(at) ? at : Date.now()),
      via: VIA.has(input.via) ? input.via : 'rest',
      operation: short(input.operation),
      method: short(input.method).toUpperCase(),
      path: auditPath(input.path),
      status,
      outcome,
      scopes_used: Array.isArray(input.scopesUsed) ? input.scopesUsed.slice(0, MAX_SCOPES).map(short) : [],
      approval_id: approvalId,
      dry_run: input.dryRun === true ? 1 : 0,
      duration_ms: Math.round(duration * 1000) / 1000,
      ip_hash: typeof input.ip === 'string' ? this.hashIp(input.ip) : '',
    }
  }

  /** One spool line (JSON, no raw newline inside, since JSON.stringify escapes them) ending in '\n'. */
  line(input: AuditEventInput, at: number): string {
    return `${JSON.stringify(this.row(input, at))}\n`
  }
}
