// A durable spool's read side: ships the sealed segments (spool.ts) to the store, oldest first, one
// insert each, under the segment's dedup token. A retry after a lost answer, or a replay after a crash
// between the insert and the file's deletion, is dropped by ClickHouse instead of doubling the rows. The
// file is deleted only after the store acknowledged it.
//
// While the store is away every segment waits on disk and the head is retried with backoff (the first
// retry after retryDelayMs, doubling up to maxRetryDelayMs); rows kept in memory by the writing thread
// stay there up to maxMemoryRows, the rest are read back from their files when their turn comes. Nothing
// here drops a row: the log bounds the spool. A file that cannot be read is set aside, never looped on.
import { rmSync } from 'node:fs'
import { setAside, type FlushLabel, type Segment } from './spool-files'
import { spoolSays, type SpoolWords } from './spool-words'

export interface SpoolSink<B, L extends FlushLabel> {
  insert(batch: B, dedupToken: string, label: L): Promise<void>
}

export interface ShipperOptions<T, B, L extends FlushLabel> {
  /** The segment as the sink's batch (from segment.events, or read from its file); throws when unreadable. */
  load: (segment: Segment<T>) => Promise<{ batch: B; rows: number }> | { batch: B; rows: number }
  /** The labels this spool seals under, counted in `flushes`. */
  labels: readonly L[]
  maxMemoryRows: number
  retryDelayMs: number
  maxRetryDelayMs: number
  log?: (line: string) => void
  words: SpoolWords
  /** Told the size of each segment deleted (the log's bound). */
  trimmed?: (bytes: number) => void
}

export interface ShipperStats<L extends FlushLabel> {
  /** Rows the store acknowledged (a replayed batch it dropped as a duplicate counts again). */
  written: number
  batchesWritten: number
  failedAttempts: number
  /** Files that could not be read, set aside. */
  setAside: number
  /** Rows of the sealed segments waiting (those left by an earlier run count once read). */
  pendingRows: number
  /** Sealed segments waiting on disk. */
  spooledFiles: number
  flushes: Record<L, number>
}

export class SpoolShipper<T, B, L extends FlushLabel> {
  private readonly queue: Array<Segment<T>> = []
  private memoryRows = 0
  /** The head segment, loaded: kept across its retries. */
  private head: { segment: Segment<T>; batch: B; rows: number } | null = null
  private writer: Promise<void> | null = null
  private writing = false
  private stopping = false
  private retryDelay: number
  private wake: (() => void) | null = null
  private failing = false
  /** seq of the newest segment dealt with (shipped or set aside): segments go in order. */
  private done = -1
  private waiters: Array<{ seq: number; resolve: () => void }> = []
  private readonly says: ReturnType<typeof spoolSays>
  private readonly stats: Omit<ShipperStats<L>, 'pendingRows' | 'spooledFiles'>

  constructor(
    private readonly sink: SpoolSink<B, L>,
    private readonly options: ShipperOptions<T, B, L>,
  ) {
    this.retryDelay = options.retryDelayMs
    this.says = spoolSays(options.words, options.log)
    const flushes = Object.fromEntries(options.labels.map((l) => [l, 0])) as Record<L, number>
    this.stats = { written: 0, batchesWritten: 0, failedAttempts: 0, setAside: 0, flushes }
  }

  /** A sealed segment to ship; its rows in memory, if any, are kept only while the budget allows. */
  add(segment: Segment<T>): void {
    if (segment.events && this.memoryRows + segment.rows > this.options.maxMemoryRows) segment.events = undefined
    if (segment.events) this.memoryRows += segment.rows
    this.queue.push(segment)
    // A spool seals only under the labels its owner lists (flush only when the owner flushes).
    const label = segment.label as L
    this.stats.flushes[label] = (this.stats.flushes[label] ?? 0) + 1
    if (this.writing || this.stopping) return
    this.writing = true
    this.writer = this.shipAll()
  }

  snapshot(): ShipperStats<L> {
    const pendingRows = this.queue.reduce((n, s) => n + Math.max(0, s.rows), 0)
    return { ...this.stats, flushes: { ...this.stats.flushes }, pendingRows, spooledFiles: this.queue.length }
  }

  /** Resolves once every segment up to `seq` is in the store (or set aside as unreadable). */
  shipped(seq: number): Promise<void> {
    if (seq <= this.done) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push({ seq, resolve }))
  }

  /** Retries now instead of after the backoff (someone waits for the store). */
  retryNow(): void {
    this.wake?.()
  }

  /** Ships what is waiting for at most timeoutMs; what the store does not take stays for the next start. */
  async drain(timeoutMs: number): Promise<void> {
    this.stopping = true
    this.wake?.()
    let timer: ReturnType<typeof setTimeout> | undefined
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))
    await Promise.race([this.writer ?? Promise.resolve(), deadline])
    clearTimeout(timer)
  }

  /**
   * Ships waiting segments in order until none is left. `writing` is cleared in the same tick as the last
   * "nothing left" check (no await between them), so a segment sealed right after always starts a new one.
   */
  private async shipAll(): Promise<void> {
    for (;;) {
      const segment = this.queue[0]
      if (!segment) break
      const head = await this.loaded(segment)
      if (head && head.rows > 0) {
        try {
          await this.sink.insert(head.batch, segment.token, segment.label as L)
        } catch (error) {
          this.failed(error)
          if (this.stopping) break // what is left stays in the spool
          await this.sleep(this.retryDelay)
          this.retryDelay = Math.min(this.retryDelay * 2, this.options.maxRetryDelayMs)
          continue
        }
        this.recovered()
        this.stats.written += head.rows
        this.stats.batchesWritten++
      }
      this.forget(segment)
    }
    this.writing = false
  }

  /** The head segment as a batch, loaded once; null when its file cannot be read (it is set aside). */
  private async loaded(segment: Segment<T>): Promise<{ batch: B; rows: number } | null> {
    if (this.head?.segment === segment) return this.head
    try {
      this.head = { segment, ...(await this.options.load(segment)) }
    } catch {
      setAside(segment.file)
      this.stats.setAside++
      this.head = null
    }
    return this.head
  }

  /** Deletes a shipped (or set aside) segment, frees its budget and tells who waits for it. */
  private forget(segment: Segment<T>): void {
    rmSync(segment.file, { force: true })
    this.queue.shift()
    this.head = null
    if (segment.events) this.memoryRows -= segment.rows
    this.options.trimmed?.(segment.bytes)
    this.done = segment.seq
    const ready = this.waiters.filter((w) => w.seq <= this.done)
    this.waiters = this.waiters.filter((w) => w.seq > this.done)
    for (const waiter of ready) waiter.resolve()
  }

  private failed(error: unknown): void {
    this.stats.failedAttempts++
    if (this.failing) return
    this.failing = true
    this.says.insertFailed(error)
  }

  private recovered(): void {
    this.retryDelay = this.options.retryDelayMs
    if (!this.failing) return
    this.failing = false
    this.says.recovered()
  }

  /** The backoff: a background pause, so it keeps no process alive (drain has its own deadline). */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.wake = null
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(wake, ms)
      timer.unref?.()
      this.wake = wake
    })
  }
}
