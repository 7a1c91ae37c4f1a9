// Ships sealed audit segments (spool.ts) to ClickHouse, oldest first, one insert each, under the
// segment's dedup token: a retry after a lost answer, or a replay after a crash between the insert and
// the file's deletion, is dropped by ClickHouse instead of doubling the events. The file is deleted only
// after ClickHouse acknowledged it. While ClickHouse is away every segment waits on disk (only the one
// being shipped is in memory) and the head is retried with backoff; nothing here drops an event, the
// recorder bounds the spool.
import type { ClickHouseClient } from '@clickhouse/client'
import { rmSync } from 'node:fs'
import { AUDIT_COLUMNS, AUDIT_TABLE } from './row'
import { readSegment, setAside, type FlushLabel, type Segment } from './spool'

export interface AuditSink {
  insert(rows: object[], dedupToken: string, label: FlushLabel): Promise<void>
}

/** Writes a batch with its dedup token, so a retried or replayed batch is stored once. */
export function clickhouseAuditSink(client: ClickHouseClient): AuditSink {
  return {
    async insert(rows, dedupToken, label) {
      await client.insert({
        table: AUDIT_TABLE,
        columns: [...AUDIT_COLUMNS],
        values: rows,
        format: 'JSONEachRow',
        clickhouse_settings: {
          insert_deduplicate: 1,
          insert_deduplication_token: dedupToken,
          // Shows in system.query_log which trigger flushed the batch.
          log_comment: `agent_audit flush=${label}`,
        },
      })
    },
  }
}

export interface ShipperStats {
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

export interface ShipperOptions {
  /** First retry delay after a failed insert; doubles up to maxRetryDelayMs. */
  retryDelayMs: number
  maxRetryDelayMs: number
  log?: (line: string) => void
  /** Told the size of each segment deleted (the spool's bound). */
  trimmed: (bytes: number) => void
}

export class AuditShipper {
  private readonly queue: Segment[] = []
  private writer: Promise<void> | null = null
  private stopping = false
  private retryDelay: number
  private wake: (() => void) | null = null
  private failing = false
  /** seq of the newest segment dealt with (shipped or set aside): segments go in order. */
  private done = -1
  private waiters: Array<{ seq: number; resolve: () => void }> = []
  readonly stats: ShipperStats = {
    written: 0, batchesWritten: 0, failedAttempts: 0, pendingBatches: 0, corrupt: 0,
    flushes: { size: 0, interval: 0, flush: 0, shutdown: 0, replay: 0 },
  }

  constructor(private readonly sink: AuditSink, private readonly options: ShipperOptions) {
    this.retryDelay = options.retryDelayMs
  }

  add(segment: Segment): void {
    this.queue.push(segment)
    this.stats.pendingBatches = this.queue.length
    this.stats.flushes[segment.label]++
    if (!this.writer && !this.stopping) this.writer = this.writeAll()
  }

  /** Resolves once every segment up to `seq` is in ClickHouse (or set aside as unreadable). */
  shipped(seq: number): Promise<void> {
    if (seq <= this.done) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push({ seq, resolve }))
  }

  /** Retries now instead of after the backoff (a flush() is waiting). */
  retryNow(): void {
    this.wake?.()
  }

  /** Ships what is waiting for at most timeoutMs; what ClickHouse does not take stays for the next start. */
  async drain(timeoutMs: number): Promise<void> {
    this.stopping = true
    this.wake?.()
    let timer: ReturnType<typeof setTimeout> | undefined
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))
    await Promise.race([this.writer ?? Promise.resolve(), deadline])
    clearTimeout(timer)
  }

  /**
   * Writes waiting segments in order until none is left. `writer` is cleared in the same tick as the
   * last "nothing left" check, so a segment added right after always starts a new writer.
   */
  private async writeAll(): Promise<void> {
    for (;;) {
      const segment = this.queue[0]
      if (!segment) break
      let rows: object[]
      try {
        const read = readSegment(segment.file)
        rows = read.rows
        this.stats.corrupt += read.skipped
      } catch {
        setAside(segment.file)
        this.stats.corrupt++
        this.forget(segment)
        continue
      }
      if (rows.length > 0) {
        try {
          await this.sink.insert(rows, segment.token, segment.label)
        } catch (error) {
          this.failed(error)
          if (this.stopping) break // what is left stays in the spool
          await this.sleep(this.retryDelay)
          this.retryDelay = Math.min(this.retryDelay * 2, this.options.maxRetryDelayMs)
          continue
        }
        this.recovered()
        this.stats.written += rows.length
        this.stats.batchesWritten++
      }
      rmSync(segment.file, { force: true })
      this.forget(segment)
    }
    this.writer = null
  }

  private forget(segment: Segment): void {
    this.queue.shift()
    this.stats.pendingBatches = this.queue.length
    this.options.trimmed(segment.bytes)
    this.done = segment.seq
    const ready = this.waiters.filter((w) => w.seq <= this.done)
    this.waiters = this.waiters.filter((w) => w.seq > this.done)
    for (const waiter of ready) waiter.resolve()
  }

  private failed(error: unknown): void {
    this.stats.failedAttempts++
    if (this.failing) return
    this.failing = true
    this.options.log?.(`audit: ClickHouse insert failed (${error instanceof Error ? error.message : error}); audit events wait in the spool`)
  }

  private recovered(): void {
    this.retryDelay = this.options.retryDelayMs
    if (!this.failing) return
    this.failing = false
    this.options.log?.('audit: ClickHouse takes audit batches again')
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      timer.unref?.()
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.wake = () => {
        this.wake = null
        done()
      }
    })
  }
}
