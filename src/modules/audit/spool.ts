// The audit spool's format on disk (AUDIT_SPOOL_DIR): segment files of JSON lines (core/spool-files.ts),
// one future ClickHouse batch each, named `….jsonl` with tokens `aud-…`. The durable mechanics (group
// commit, sealing, the bound, shipping under the token) are core/spool.ts and spool-shipper.ts.
//
// A crash in the middle of a write leaves a partial last line; reading stops at the last newline. A line
// that is not a JSON object (a disk error in the middle of a file) is skipped and counted.
import { readFileSync } from 'node:fs'
import * as files from '../../../core/spool-files'
import type { FlushLabel, SpoolKind } from '../../../core/spool-files'
import type { SpoolWords } from '../../../core/spool-words'
import type { AuditEventInput } from './model'
import type { AuditEncoder } from './row'

export type { FlushLabel } from '../../../core/spool-files'
export const AUDIT_LABELS: readonly FlushLabel[] = ['size', 'interval', 'flush', 'shutdown', 'replay']

export const AUDIT_SPOOL: SpoolKind = { suffix: '.jsonl', tokenPrefix: 'aud-' }

/** How the recorder and the shipper speak of audit events to the operator. */
export const AUDIT_WORDS: SpoolWords = {
  prefix: 'audit',
  rows: 'audit events',
  batches: 'audit batches',
  bound: 'AUDIT_SPOOL_MAX_BYTES',
  counter: 'audit.dropped',
  goesOn: 'calls go on',
}

export const tokenOf = (file: string) => files.tokenOf(file, AUDIT_SPOOL)

/** An event as recorded: the input, and when (its own `at`, or the clock at record()). */
export interface PendingEvent {
  input: AuditEventInput
  at: number
}

/**
 * One group commit's events as lines; an input no row can be built from (no Agent, a getter that throws)
 * is left out, and the log counts it as dropped: the call is unaffected.
 */
export function auditLines(encoder: AuditEncoder) {
  return (events: PendingEvent[]): { frame: string; rows: number } => {
    let frame = ''
    let rows = 0
    for (const { input, at } of events) {
      try {
        frame += encoder.line(input, at)
        rows++
      } catch {
        // counted by the log
      }
    }
    return { frame, rows }
  }
}

/** The rows of a segment file, up to its last complete line; `skipped` counts lines that are not JSON objects. */
export function readSegment(file: string): { rows: object[]; skipped: number } {
  const text = readFileSync(file, 'utf8')
  const rows: object[] = []
  let skipped = 0
  const end = text.lastIndexOf('\n')
  for (const line of end < 0 ? [] : text.slice(0, end).split('\n')) {
    if (line === '') continue
    try {
      const row: unknown = JSON.parse(line)
      if (typeof row === 'object' && row !== null && !Array.isArray(row)) rows.push(row)
      else skipped++
    } catch {
      skipped++
    }
  }
  return { rows, skipped }
}
