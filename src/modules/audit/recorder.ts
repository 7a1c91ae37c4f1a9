// The audit recorder: an event per at_ call, recorded without slowing or failing the call (STYLE "The
// hot path never waits on analytics", Unkey's batch processor).
//
// record() is synchronous, O(1) and never throws: it pushes the input onto this event-loop turn's list
// and, for the first event of a turn, schedules the turn's group commit (setImmediate). The commit builds
// each stored row (row.ts: id, keyed IP hash, bounded fields, no query string) and appends the turn's
// lines to the open spool segment with one write() (spool.ts). Segments are sealed by size
// (AUDIT_BATCH_SIZE), by interval (AUDIT_FLUSH_MS), by flush() or at shutdown, and shipped to ClickHouse
// in order under their dedup token (shipper.ts). So an event is on disk within one event-loop turn of
// its call and in ClickHouse within about AUDIT_FLUSH_MS; while ClickHouse is down the segments wait on
// disk and are retried with backoff, and a restart ships what an earlier run left.
//
// What can be lost, and is counted (counters.dropped): events of the turn in which the process is
// killed (before their write), events while the spool is at AUDIT_SPOOL_MAX_BYTES (ClickHouse away for
// long: at ~300 bytes an event the default 256 MiB holds ~900,000 events), and events the disk refused.
// A power cut can also take writes still in the page cache unless AUDIT_FSYNC=true.
import type { ClickHouseClient } from '@clickhouse/client'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Config } from '../../core/config'
import type { AuditEventInput } from './model'
import { AuditEncoder } from './row'
import { AuditShipper, clickhouseAuditSink, type AuditSink, type ShipperStats } from './shipper'
import { leftoverSegments, SegmentWriter, type FlushLabel, type Segment } from './spool'

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

export interface AuditCounters extends ShipperStats {
  /** Events on disk (this run). */
  recorded: number
  /** Events not recorded: the spool was full or the disk refused the write. */
  dropped: number
  spoolBytes: number
  spoolMaxBytes: number
  /** Times the spool crossed 80 % of its bound. */
  spoolNearFull: number
  writeErrors: number
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

const NEAR_FULL = 0.8

export function createAuditRecorder(deps: AuditRecorderDeps): AuditRecorder {
  const { audit } = deps.config
  const now = deps.now ?? Date.now
  const log = deps.log
  const sink = 'insert' in deps.clickhouse && !('query' in deps.clickhouse) ? (deps.clickhouse as AuditSink) : clickhouseAuditSink(deps.clickhouse as ClickHouseClient)
  const encoder = new AuditEncoder(deps.config.ipHashSecret)
  // DATA_DIR=:memory: (tests, in-memory engines): a temporary spool of this process's own, never a
  // directory named ":memory:" in the working directory.
  const spoolDir = audit.spoolDir.startsWith(':memory:') ? mkdtempSync(join(tmpdir(), 'audit-spool-')) : audit.spoolDir
  const writer = new SegmentWriter(spoolDir, audit.fsync)
  let spoolBytes = 0
  let near = false
  let full = false
  let closed = false
  let seq = 0
  const own = { recorded: 0, dropped: 0, spoolNearFull: 0, writeErrors: 0 }
  const shipper = new AuditShipper(sink, {
    retryDelayMs: deps.retryDelayMs ?? 100,
    maxRetryDelayMs: deps.maxRetryDelayMs ?? 1000,
    log,
    trimmed: (bytes) => resize(spoolBytes - bytes),
  })

  // This turn's events; `at` is kept apart so record() allocates nothing but the array slots.
  let pending: AuditEventInput[] = []
  let pendingAt: number[] = []
  let scheduled = false

  function snapshot(): AuditCounters {
    const stats = shipper.stats
    return { ...own, ...stats, flushes: { ...stats.flushes }, spoolBytes, spoolMaxBytes: audit.maxSpoolBytes }
  }

  function resize(bytes: number): void {
    spoolBytes = bytes
    const mb = (n: number) => `${Math.round(n / 1048576)} MB`
    const isFull = bytes >= audit.maxSpoolBytes
    const isNear = bytes >= audit.maxSpoolBytes * NEAR_FULL
    if (isNear && !near) {
      own.spoolNearFull++
      log?.(`audit: the spool holds ${mb(bytes)}, over 80 % of AUDIT_SPOOL_MAX_BYTES (${mb(audit.maxSpoolBytes)}): ClickHouse is not taking audit batches; at the bound events are dropped and counted`)
    }
    if (isFull && !full) log?.(`audit: the spool is FULL (${mb(bytes)}): audit events are now DROPPED and counted (audit.dropped) until ClickHouse takes the backlog`)
    if (!isNear && near) log?.(`audit: the spool is back under 80 % (${mb(bytes)}); ${own.dropped} audit events dropped so far`)
    near = isNear
    full = isFull
  }

  /** The group commit: this turn's events as lines, one write(); then seal by size. */
  function commit(): void {
    scheduled = false
    const events = pending
    const ats = pendingAt
    pending = []
    pendingAt = []
    if (events.length === 0) return
    let payload = ''
    let lines = 0
    for (let i = 0; i < events.length; i++) {
      try {
        payload += encoder.line(events[i]!, ats[i]!)
        lines++
      } catch {
        own.dropped++ // an input no row can be built from (no Agent, a getter that throws): the call is unaffected
      }
    }
    if (lines === 0) return
    try {
      resize(spoolBytes + writer.append(payload, lines))
      own.recorded += lines
    } catch (error) {
      own.dropped += lines
      if (own.writeErrors++ === 0 || own.writeErrors % 1000 === 0) {
        log?.(`audit: LOST ${lines} audit events: the spool write failed (${error instanceof Error ? error.message : error}); calls go on (${own.writeErrors} failed writes so far)`)
      }
      // A torn line would swallow the next frame's first line: nothing may follow it in this segment.
      seal('size')
      return
    }
    if (closed) seal('shutdown')
    else if (writer.events >= audit.batchSize) seal('size')
  }

  function seal(label: FlushLabel): Segment | null {
    const { segment, freed } = writer.seal(label, () => seq++)
    if (freed > 0) resize(spoolBytes - freed)
    // After close() the shipper has stopped: a sealed segment waits on disk for the next start.
    if (segment && !closed) shipper.add(segment)
    return segment
  }

  function record(event: AuditEventInput): void {
    if (full) {
      own.dropped++
      return
    }
    let at: number
    try {
      at = event.at ?? now()
    } catch {
      at = now() // not an object, or a hostile getter: the commit drops it and counts it
    }
    pending.push(event)
    pendingAt.push(at)
    if (!scheduled) {
      scheduled = true
      setImmediate(commit)
    }
  }

  // Start: what an earlier run left goes first, then sealing by interval.
  const leftovers = leftoverSegments(spoolDir)
  resize(leftovers.reduce((n, s) => n + s.bytes, 0))
  for (const leftover of leftovers) shipper.add({ ...leftover, seq: seq++ })
  const timer = setInterval(() => {
    commit()
    seal('interval')
  }, audit.flushIntervalMs)
  // Sealing needs no live process: whatever is unsealed at exit is on disk and shipped by the next start.
  timer.unref?.()

  return {
    record,
    get counters() {
      return snapshot()
    },
    async flush(timeoutMs = 30_000) {
      commit()
      seal('flush')
      const last = seq - 1
      shipper.retryNow()
      let timeout: ReturnType<typeof setTimeout> | undefined
      const expired = new Promise<boolean>((resolve) => (timeout = setTimeout(resolve, timeoutMs, false)))
      const result = await Promise.race([shipper.shipped(last).then(() => true), expired])
      clearTimeout(timeout)
      return result
    },
    async close(timeoutMs = 5000) {
      clearInterval(timer)
      commit()
      seal('shutdown')
      closed = true
      await shipper.drain(timeoutMs)
      return snapshot()
    },
  }
}
