// Where sealed audit segments go: the agent_audit table, one insert each under the segment's dedup token
// (the shipping itself, in order, with retries and deletion after the acknowledgement, is
// core/spool-shipper.ts). A segment is read from its file when its turn comes, so only the one being
// shipped is in memory.
import type { ClickHouseClient } from '@clickhouse/client'
import { SpoolShipper, type SpoolSink } from '../../../core/spool-shipper'
import { clickhouseSpoolSink } from '../../../core/spool-sink'
import { AUDIT_COLUMNS, AUDIT_TABLE } from './row'
import { AUDIT_LABELS, AUDIT_WORDS, readSegment, type FlushLabel, type PendingEvent } from './spool'

export type AuditSink = SpoolSink<object[], FlushLabel>

/** Writes a batch with its dedup token, so a retried or replayed batch is stored once. */
export function clickhouseAuditSink(client: ClickHouseClient): AuditSink {
  return clickhouseSpoolSink(client, { table: AUDIT_TABLE, columns: AUDIT_COLUMNS, format: 'JSONEachRow', values: (rows) => rows, name: 'agent_audit' })
}

export interface AuditShipperOptions {
  retryDelayMs: number
  maxRetryDelayMs: number
  log?: (line: string) => void
  trimmed: (bytes: number) => void
}

/** The shipper of the audit spool, and the lines it skipped as not JSON (a disk error). */
export function auditShipper(sink: AuditSink, options: AuditShipperOptions) {
  const read = { skippedLines: 0 }
  const shipper = new SpoolShipper<PendingEvent, object[], FlushLabel>(sink, {
    ...options,
    labels: AUDIT_LABELS,
    maxMemoryRows: 0, // the recorder keeps no events: every segment is read from its file
    words: AUDIT_WORDS,
    load(segment) {
      const { rows, skipped } = readSegment(segment.file)
      read.skippedLines += skipped
      return { batch: rows, rows: rows.length }
    },
  })
  return { shipper, read }
}
