// The audit recorder: an event per at_ call, recorded without slowing or failing the call (STYLE "The
// hot path never waits on analytics", Unkey's batch processor).
//
// record() is synchronous, O(1) and never throws: it appends the input to the audit spool, the same
// durable spool as the click log's (core/spool.ts), whose group commit builds each stored row one
// setImmediate later (row.ts: id, keyed IP hash, bounded fields, no query string) and writes the turn's
// lines to the open segment with one write() (spool.ts here: the format). Segments are sealed by size
// (AUDIT_BATCH_SIZE), by interval (AUDIT_FLUSH_MS), by flush() or at shutdown, and shipped to ClickHouse
// in order under their dedup token (core/spool-shipper.ts, into the sink of shipper.ts). So an event
// is on disk within one event-loop turn of its call and in ClickHouse within about AUDIT_FLUSH_MS; while
// ClickHouse is down the segments wait on disk and are retried with backoff, and a restart ships what an
// earlier run left.
//
// What can be lost, and is counted (counters.dropped): events of the turn in which the process is
// killed (before their write), events while the spool is at AUDIT_SPOOL_MAX_BYTES (ClickHouse away for
// long: at ~300 bytes an event the default 256 MiB holds ~900,000 events), and events the disk refused.
// A power cut can also take writes still in the page cache unless AUDIT_FSYNC=true.
import type { ClickHouseClient } from '@clickhouse/client'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Config } from '../../../core/config'
import { SpoolLog, type SpoolLogStats } from '../../../core/spool'
import type { ShipperStats } from '../../../core/spool-shipper'
import type { AuditEventInput } from './model'
import { AuditEncoder } from './row'
import { auditShipper, clickhouseAuditSink, type AuditSink } from './shipper'
import { AUDIT_SPOOL, AUDIT_WORDS, auditLines, type FlushLabel, type PendingEvent } from './spool'

export interface AuditRecorderDeps {
  /** Where batches go: the ClickHouse client, or a sink (tests). */
  clickhouse: ClickHouseClient | AuditSink
  config: Pick<Config, 'audit' | 'ipHashSecret'>
  /** Unix milliseconds; the default time of an event. */
  now?: () => number
  /** Told when the store fails and recovers, and when the spool nears or reaches its bound; never per event. */
  log?: (line: string) => void
  /** First retry delay after a failed insert (default 100 ms), doubling up to maxRetryDelayMs (1 s). */
  retryDelayMs?: number
  maxRetryDelayMs?: number
}

export interface AuditCounters {
  /** Events on disk (this run). */
  recorded: number
  /** Events not recorded: the spool was full, no row could be built from the input, or the disk refused the write. */
  dropped: number
  spoolBytes: number
  spoolMaxBytes: number
  /** Times the spool crossed 80 % of its bound. */
  spoolNearFull: number
  writeErrors: number
  /** Events ClickHouse acknowledged (a replayed batch it dropped as a duplicate counts again). */
  written: number
  batchesWritten: number
  failedAttempts: number
  /** Sealed segments waiting on disk. */
  pendingBatches: number
  /** Lines of a segment that were not JSON (a disk error) and files that could not be read: skipped. */
  corrupt: number
  flushes: Record<FlushLabel, number>
}

export interface AuditRecorder {
  /** On the request path: synchronous, O(1), never throws. The input must not be changed afterwards. */
  record(event: AuditEventInput): void
  /**
   * Writes and seals what is pending and resolves true once every event recorded before the call is in
   * ClickHouse, or false when timeoutMs passed first (the events stay on disk and keep being retried).
   */
  flush(timeoutMs?: number): Promise<boolean>
  /**
   * Writes what is pending, ships for at most timeoutMs; the rest stays in the spool for the next start.
   * Events recorded after close() (calls still finishing) are written and left there too.
   */
  close(timeoutMs?: number): Promise<AuditCounters>
  /** The counters now (a copy, for a health or metrics endpoint; never per request). */
  readonly counters: AuditCounters
}

export function createAuditRecorder(deps: AuditRecorderDeps): AuditRecorder {
  const { audit } = deps.config
  const now = deps.now ?? Date.now
  const { shipper, read } = auditShipper(sinkOf(deps.clickhouse), {
    retryDelayMs: deps.retryDelayMs ?? 100,
    maxRetryDelayMs: deps.maxRetryDelayMs ?? 1000,
    log: deps.log,
    trimmed: (bytes) => log.trimmed(bytes), // called only once a segment shipped, long after `log` exists
  })
  const log = new SpoolLog<PendingEvent>({
    dir: spoolDirOf(audit.spoolDir),
    kind: AUDIT_SPOOL,
    batchSize: audit.batchSize,
    flushIntervalMs: audit.flushIntervalMs,
    maxBytes: audit.maxSpoolBytes,
    fsync: audit.fsync,
    encode: auditLines(new AuditEncoder(deps.config.ipHashSecret)),
    keepEvents: false,
    onSeal: (segment) => shipper.add(segment),
    log: deps.log,
    words: AUDIT_WORDS,
  })
  // What an earlier run left goes first, then sealing by interval.
  for (const leftover of log.open()) shipper.add(leftover)

  return {
    record: (input) => void log.append({ input, at: timeOf(input, now) }),
    get counters() {
      return counters(log.snapshot(), shipper.snapshot(), read.skippedLines)
    },
    async flush(timeoutMs = 30_000) {
      log.flushNow('flush')
      shipper.retryNow()
      return within(shipper.shipped(log.lastSeq), timeoutMs)
    },
    async close(timeoutMs = 5000) {
      log.close()
      await shipper.drain(timeoutMs)
      return counters(log.snapshot(), shipper.snapshot(), read.skippedLines)
    },
  }
}

function sinkOf(clickhouse: ClickHouseClient | AuditSink): AuditSink {
  return 'insert' in clickhouse && !('query' in clickhouse) ? (clickhouse as AuditSink) : clickhouseAuditSink(clickhouse as ClickHouseClient)
}

/**
 * DATA_DIR=:memory: (tests, in-memory engines): a temporary spool of this process's own, never a
 * directory named ":memory:" in the working directory.
 */
function spoolDirOf(configured: string): string {
  return configured.startsWith(':memory:') ? mkdtempSync(join(tmpdir(), 'audit-spool-')) : configured
}

/** The event's own time, or now; never throws (not an object, or a hostile getter: the commit drops it and counts it). */
function timeOf(input: AuditEventInput, now: () => number): number {
  try {
    return input.at ?? now()
  } catch {
    return now()
  }
}

/** True once `shipped` resolved, false when timeoutMs passed first. */
async function within(shipped: Promise<void>, timeoutMs: number): Promise<boolean> {
  let timeout: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<boolean>((resolve) => (timeout = setTimeout(resolve, timeoutMs, false)))
  const result = await Promise.race([shipped.then(() => true), expired])
  clearTimeout(timeout)
  return result
}

function counters(spool: SpoolLogStats, shipped: ShipperStats<FlushLabel>, skippedLines: number): AuditCounters {
  const { logged: recorded, ...own } = spool
  const { written, batchesWritten, failedAttempts, spooledFiles: pendingBatches, setAside, flushes } = shipped
  return { recorded, ...own, written, batchesWritten, failedAttempts, pendingBatches, corrupt: skippedLines + setAside, flushes }
}
