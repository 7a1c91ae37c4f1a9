// Click batching between the redirect hot path and ClickHouse.
//
// push() is synchronous and never waits. Events collect in a buffer that is frozen into a batch when it
// reaches batchSize ("size"), when the flush interval ticks ("interval") or at shutdown ("shutdown").
// A frozen batch is encoded to TabSeparated rows in small slices between which the event loop serves
// requests, so encoding a large batch never stalls redirects. Encoding is also where a click is enriched
// (device, browser, OS, bot flag, referrer host, UTM snapshot, country by IP): src/core/clicks.ts.
// A frozen batch gets its own dedup token before its first insert attempt, and keeps it through every
// retry and across restarts (it is written to the spool with it), so a retry after a lost response is
// dropped by ClickHouse instead of doubling the clicks. While ClickHouse is unreachable batches wait in
// memory, up to maxPendingRows; beyond that they go to the spool directory, and everything is written
// once ClickHouse is back. Nothing is dropped.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CLICK_COLUMNS, ClickEncoder, type ClickEvent } from '../src/core/clicks'

export type FlushLabel = 'size' | 'interval' | 'shutdown'

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
  batchSize: number
  flushIntervalMs: number
  maxPendingRows: number
  spoolDir: string
  ipHashSecret: string
  /** Country from the client IP when the CDN header gave none (default true; see src/core/enrich-geo.ts). */
  geoByIp?: boolean
  /** First retry delay after a failed insert; doubles up to maxRetryDelayMs (default 1 s, so the backlog
   * starts flowing within a second of ClickHouse returning). */
  retryDelayMs?: number
  maxRetryDelayMs?: number
  /** Told when ClickHouse stops taking batches and when it takes them again; never per click. */
  log?: (line: string) => void
}

interface Batch extends EncodedBatch {
  token: string
  label: FlushLabel
  /** Set when the batch lives in the spool rather than in memory. */
  file?: string
}

/** Events encoded per slice before yielding to the event loop: about a millisecond of work. */
const ENCODE_SLICE = 1000

export interface BatcherStats {
  pushed: number
  written: number
  batchesWritten: number
  failedAttempts: number
  spooledBatches: number
  pendingRows: number
  spooledFiles: number
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
  private buffer: ClickEvent[] = []
  private readonly encoder: ClickEncoder
  /** Frozen batches still being encoded, in order. */
  private encoding: Promise<void> = Promise.resolve()
  private encodingRows = 0
  private readonly memory: Batch[] = []
  private memoryRows = 0
  private spool: string[] = []
  private writer: Promise<void> | null = null
  private writing = false
  private timer: ReturnType<typeof setInterval> | null = null
  private stopping = false
  private retryDelay: number
  private wake: (() => void) | null = null
  private failing = false
  private readonly stats: Omit<BatcherStats, 'pendingRows' | 'spooledFiles'> = {
    pushed: 0, written: 0, batchesWritten: 0, failedAttempts: 0, spooledBatches: 0,
    flushes: { size: 0, interval: 0, shutdown: 0 },
  }

  constructor(private readonly sink: ClickSink, private readonly options: BatcherOptions) {
    this.retryDelay = options.retryDelayMs ?? 100
    this.encoder = new ClickEncoder(options.ipHashSecret, { geoByIp: options.geoByIp })
    mkdirSync(options.spoolDir, { recursive: true })
    // Batches spooled by an earlier run (ClickHouse down at shutdown, or a crash while spooling) go first.
    this.spool = readdirSync(options.spoolDir).filter((f) => f.endsWith('.json')).sort().map((f) => join(options.spoolDir, f))
    for (const stale of readdirSync(options.spoolDir).filter((f) => f.endsWith('.tmp'))) rmSync(join(options.spoolDir, stale))
  }

  start(): this {
    this.timer ??= setInterval(() => this.freeze('interval'), this.options.flushIntervalMs)
    this.kick()
    return this
  }

  push(event: ClickEvent): void {
    this.stats.pushed++
    this.buffer.push(event)
    if (this.buffer.length >= this.options.batchSize) this.freeze('size')
  }

  snapshot(): BatcherStats {
    return { ...this.stats, flushes: { ...this.stats.flushes }, pendingRows: this.buffer.length + this.encodingRows + this.memoryRows, spooledFiles: this.spool.length }
  }

  /**
   * Freezes what is buffered and writes everything pending. Waits at most timeoutMs for ClickHouse;
   * whatever is still unwritten then is spooled to disk for the next start. Resolves when safe to exit.
   */
  async drain(timeoutMs: number): Promise<BatcherStats> {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    this.freeze('shutdown')
    await this.encoding
    this.stopping = true
    const deadline = new Promise<'timeout'>((resolve) => setTimeout(resolve, timeoutMs, 'timeout'))
    this.wake?.()
    await Promise.race([this.writer ?? Promise.resolve(), deadline])
    // Whatever ClickHouse did not take in time goes to disk for the next start. The writer may still be
    // mid-insert with the head batch; spooling it too is safe because its token makes a second write a no-op.
    for (const batch of this.memory.splice(0)) this.writeSpool(batch)
    this.memoryRows = 0
    return this.snapshot()
  }

  private freeze(label: FlushLabel): void {
    if (this.buffer.length === 0) return
    const events = this.buffer
    this.buffer = []
    this.stats.flushes[label]++
    const token = `clk-${crypto.randomUUID()}`
    this.encodingRows += events.length
    this.encoding = this.encoding.then(() => this.encode(events, token, label))
  }

  private async encode(events: ClickEvent[], token: string, label: FlushLabel): Promise<void> {
    // The first batch waits for the IP-to-country table (loaded once per thread, in slices); later ones
    // find it ready.
    await this.encoder.prepare(this.options.log)
    const chunks: string[] = []
    for (let start = 0; start < events.length; start += ENCODE_SLICE) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve))
      const end = Math.min(start + ENCODE_SLICE, events.length)
      let chunk = ''
      for (let i = start; i < end; i++) chunk += this.encoder.encode(events[i]!)
      chunks.push(chunk)
    }
    this.encodingRows -= events.length
    const batch: Batch = { token, label, chunks, rows: events.length }
    if (this.memoryRows + batch.rows > this.options.maxPendingRows) {
      this.writeSpool(batch)
    } else {
      this.memory.push(batch)
      this.memoryRows += batch.rows
    }
    this.kick()
  }

  private writeSpool(batch: Batch): void {
    // Name sorts by time so the spool drains oldest first; write then rename so a crash never leaves
    // a half-written batch under a name the loader would read.
    const name = `${Date.now().toString().padStart(15, '0')}-${batch.token}.json`
    const file = join(this.options.spoolDir, name)
    writeFileSync(`${file}.tmp`, JSON.stringify({ token: batch.token, label: batch.label, rows: batch.rows, columns: CLICK_COLUMNS.length, chunks: batch.chunks }))
    renameSync(`${file}.tmp`, file)
    this.spool.push(file)
    this.stats.spooledBatches++
  }

  private kick(): void {
    if (this.writing) return
    this.writing = true
    this.writer = this.writeAll()
  }

  private next(): Batch | null {
    const head = this.memory[0]
    if (head) return head
    const file = this.spool[0]
    if (!file) return null
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as Omit<Batch, 'file'> & { columns?: number }
      return { ...saved, chunks: upgradeRows(saved.chunks, saved.columns ?? LEGACY_COLUMNS), file }
    } catch {
      // Unreadable spool file: move it aside rather than loop on it, and keep it for a person to inspect.
      try {
        renameSync(file, `${file}.corrupt`)
      } catch {
        // already gone: nothing to keep
      }
      this.spool.shift()
      return this.next()
    }
  }

  /**
   * Writes pending batches in order until none is left. `writing` is cleared in the same tick as the
   * last "nothing left" check (no await between them), so a batch frozen right after always finds the
   * writer idle and starts a new one.
   */
  private async writeAll(): Promise<void> {
    for (;;) {
      const batch = this.next()
      if (!batch) break
      try {
        await this.sink.insert(batch, batch.token, batch.label)
      } catch (error) {
        this.stats.failedAttempts++
        if (!this.failing) {
          this.failing = true
          this.options.log?.(`clicks: ClickHouse insert failed (${error instanceof Error ? error.message : error}); batches wait in memory, then in ${this.options.spoolDir}`)
        }
        if (this.stopping) break // drain() spools what is left
        await this.sleep(this.retryDelay)
        this.retryDelay = Math.min(this.retryDelay * 2, this.options.maxRetryDelayMs ?? 1000)
        continue
      }
      this.retryDelay = this.options.retryDelayMs ?? 100
      if (this.failing) {
        this.failing = false
        this.options.log?.('clicks: ClickHouse takes batches again')
      }
      this.stats.written += batch.rows
      this.stats.batchesWritten++
      this.forget(batch)
    }
    this.writing = false
  }

  /** Removes a written batch by identity: drain() may have moved it to the spool meanwhile. */
  private forget(batch: Batch): void {
    if (batch.file) {
      rmSync(batch.file, { force: true })
      this.spool = this.spool.filter((f) => f !== batch.file)
      return
    }
    const at = this.memory.indexOf(batch)
    if (at >= 0) {
      this.memory.splice(at, 1)
      this.memoryRows -= batch.rows
    }
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
