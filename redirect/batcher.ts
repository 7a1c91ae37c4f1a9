// Ships the click log's sealed segments (segment.ts) to ClickHouse, oldest first, one insert each.
//
// A segment is encoded to TabSeparated rows just before its insert, in small slices between which the
// event loop serves requests, so a large batch never stalls redirects. Encoding is also where a click is
// enriched (device, browser, OS, bot flag, referrer host, UTM snapshot, country by IP): src/core/clicks.ts.
// The insert carries the segment's dedup token, which is derived from its file name: a retry after a lost
// answer, or a replay after a crash between the insert and the file's deletion, is dropped by ClickHouse
// instead of doubling the clicks. Only after ClickHouse acknowledged it is the file deleted.
// While ClickHouse is unreachable segments wait, all of them on disk already; the clicks of the first
// maxPendingRows rows also stay in memory, the rest are read back from their files when their turn
// comes. Nothing here drops a click; the log bounds the spool (click-log.ts).
import { readFileSync, rmSync } from 'node:fs'
import { CLICK_COLUMNS, ClickEncoder, type ClickEvent } from '../src/core/clicks'
import { LEGACY_SUFFIX, readSegment, setAside, type FlushLabel, type Segment } from './segment'

export type { FlushLabel } from './segment'

/**
 * A batch ready to write: `rows` TabSeparated rows in CLICK_COLUMNS order, in chunks of at most
 * ENCODE_SLICE rows, so the insert streams them without one large write stalling the event loop.
 */
export interface EncodedBatch {
  chunks: string[]
  rows: number
}

export interface ClickSink {
  insert(batch: EncodedBatch, dedupToken: string, label: FlushLabel): Promise<void>
}

export interface BatcherOptions {
  maxPendingRows: number
  ipHashSecret: string
  /** Country from the client IP when the CDN header gave none (default true; see src/core/enrich-geo.ts). */
  geoByIp?: boolean
  /** First retry delay after a failed insert; doubles up to maxRetryDelayMs (default 1 s, so the backlog
   * starts flowing within a second of ClickHouse returning). */
  retryDelayMs?: number
  maxRetryDelayMs?: number
  /** Told when ClickHouse stops taking batches and when it takes them again; never per click. */
  log?: (line: string) => void
  /** Told the size of each segment deleted after its insert (the log's bound). */
  trimmed?: (bytes: number) => void
}

/** Events encoded per slice before yielding to the event loop: about a millisecond of work. */
const ENCODE_SLICE = 1000

export interface BatcherStats {
  written: number
  batchesWritten: number
  failedAttempts: number
  /** Rows of the sealed segments waiting (those left by an earlier run count once read). */
  pendingRows: number
  /** Sealed segments waiting on disk. */
  spooledFiles: number
  /** Clicks read back from a file: replayed after a restart, or dropped from memory during an outage. */
  replayedRows: number
  flushes: Record<FlushLabel, number>
}

/** Columns of a row spooled before the enrichment columns existed (spool files then had no count). */
const LEGACY_COLUMNS = 9

/**
 * Rows spooled by an older version have fewer columns than CLICK_COLUMNS: the missing trailing ones get
 * their table defaults (is_bot 0, the rest empty), so an upgrade never leaves a spool file it cannot write.
 */
export function upgradeRows(chunks: string[], columns: number): string[] {
  if (columns >= CLICK_COLUMNS.length) return chunks
  const pad = CLICK_COLUMNS.slice(columns).map((c) => (c === 'is_bot' ? '\t0' : '\t')).join('')
  return chunks.map((chunk) => chunk.replaceAll('\n', `${pad}\n`))
}

export class ClickBatcher {
  private readonly encoder: ClickEncoder
  private readonly queue: Segment[] = []
  private memoryRows = 0
  /** The head segment, encoded: kept across its retries. */
  private head: { segment: Segment; batch: EncodedBatch } | null = null
  private writer: Promise<void> | null = null
  private writing = false
  private stopping = false
  private retryDelay: number
  private wake: (() => void) | null = null
  private failing = false
  private readonly stats = {
    written: 0, batchesWritten: 0, failedAttempts: 0, replayedRows: 0,
    flushes: { size: 0, interval: 0, shutdown: 0, replay: 0 } as Record<FlushLabel, number>,
  }

  constructor(private readonly sink: ClickSink, private readonly options: BatcherOptions) {
    this.retryDelay = options.retryDelayMs ?? 100
    this.encoder = new ClickEncoder(options.ipHashSecret, { geoByIp: options.geoByIp })
  }

  /** A sealed segment to ship; its events, if any, are kept only while the memory budget allows. */
  add(segment: Segment): void {
    if (segment.events && this.memoryRows + segment.rows > this.options.maxPendingRows) segment.events = undefined
    if (segment.events) this.memoryRows += segment.rows
    this.queue.push(segment)
    this.stats.flushes[segment.label]++
    this.kick()
  }

  snapshot(): BatcherStats {
    const pendingRows = this.queue.reduce((n, s) => n + Math.max(0, s.rows), 0)
    return { ...this.stats, flushes: { ...this.stats.flushes }, pendingRows, spooledFiles: this.queue.length }
  }

  /**
   * Writes what is waiting, for at most timeoutMs; whatever ClickHouse does not take in time stays in the
   * spool for the next start. Resolves when safe to exit.
   */
  async drain(timeoutMs: number): Promise<BatcherStats> {
    this.stopping = true
    this.wake?.()
    let timer: ReturnType<typeof setTimeout> | undefined
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))
    await Promise.race([this.writer ?? Promise.resolve(), deadline])
    clearTimeout(timer)
    return this.snapshot()
  }

  private kick(): void {
    if (this.writing || this.stopping) return
    this.writing = true
    this.writer = this.writeAll()
  }

  /**
   * Writes waiting segments in order until none is left. `writing` is cleared in the same tick as the
   * last "nothing left" check (no await between them), so a segment sealed right after always finds the
   * writer idle and starts a new one.
   */
  private async writeAll(): Promise<void> {
    for (;;) {
      const segment = this.queue[0]
      if (!segment) break
      const batch = await this.encoded(segment)
      if (batch && batch.rows > 0) {
        try {
          await this.sink.insert(batch, segment.token, segment.label)
        } catch (error) {
          this.failed(error)
          if (this.stopping) break // what is left stays in the spool
          await this.sleep(this.retryDelay)
          this.retryDelay = Math.min(this.retryDelay * 2, this.options.maxRetryDelayMs ?? 1000)
          continue
        }
        this.recovered()
        this.stats.written += batch.rows
        this.stats.batchesWritten++
      }
      this.forget(segment)
    }
    this.writing = false
  }

  /** The head segment as TabSeparated chunks, encoded once; null when its file cannot be read. */
  private async encoded(segment: Segment): Promise<EncodedBatch | null> {
    if (this.head?.segment === segment) return this.head.batch
    const batch = segment.file.endsWith(LEGACY_SUFFIX) ? this.legacy(segment) : await this.encode(segment)
    this.head = batch ? { segment, batch } : null
    return batch
  }

  private async encode(segment: Segment): Promise<EncodedBatch | null> {
    let events = segment.events
    if (!events) {
      try {
        events = readSegment(segment.file).events
      } catch {
        setAside(segment.file)
        return null
      }
      segment.rows = events.length
      this.stats.replayedRows += events.length
    }
    return { chunks: await this.encodeEvents(events), rows: events.length }
  }

  private async encodeEvents(events: ClickEvent[]): Promise<string[]> {
    // The first batch waits for the IP-to-country table (loaded once per thread, in slices).
    await this.encoder.prepare(this.options.log)
    const chunks: string[] = []
    for (let start = 0; start < events.length; start += ENCODE_SLICE) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve))
      const end = Math.min(start + ENCODE_SLICE, events.length)
      let chunk = ''
      for (let i = start; i < end; i++) chunk += this.encoder.encode(events[i]!)
      chunks.push(chunk)
    }
    return chunks
  }

  /** A batch spooled as JSON by the version before the log, under its own token. */
  private legacy(segment: Segment): EncodedBatch | null {
    try {
      const saved = JSON.parse(readFileSync(segment.file, 'utf8')) as { token: string; rows: number; columns?: number; chunks: string[] }
      segment.token = saved.token
      segment.rows = saved.rows
      return { rows: saved.rows, chunks: upgradeRows(saved.chunks, saved.columns ?? LEGACY_COLUMNS) }
    } catch {
      setAside(segment.file)
      return null
    }
  }

  /** Deletes a written (or unreadable, already set aside) segment and frees its budget. */
  private forget(segment: Segment): void {
    rmSync(segment.file, { force: true })
    this.queue.shift()
    this.head = null
    if (segment.events) this.memoryRows -= segment.rows
    this.options.trimmed?.(segment.bytes)
  }

  private failed(error: unknown): void {
    this.stats.failedAttempts++
    if (this.failing) return
    this.failing = true
    this.options.log?.(`clicks: ClickHouse insert failed (${error instanceof Error ? error.message : error}); clicks wait in the spool`)
  }

  private recovered(): void {
    this.retryDelay = this.options.retryDelayMs ?? 100
    if (!this.failing) return
    this.failing = false
    this.options.log?.('clicks: ClickHouse takes batches again')
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms)
      this.wake = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }
}
