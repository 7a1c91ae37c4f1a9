// A durable spool's write side, on the thread that serves the calls (the click log of the redirector,
// the audit recorder of the API): a row is on disk within one event-loop turn of its append, so a process
// killed at any moment (SIGKILL, OOM) loses at most the turn it was in, and none whose caller waited.
//
// Group commit: append() adds the row to this event-loop turn's list and returns the turn's promise; one
// setImmediate later the list is encoded as one frame (the owner's format) and written with one write()
// syscall, and every waiter of the turn is released together. A plain write() lands in the page cache,
// which outlives the process; `fsync` adds an fdatasync per frame for rows that must outlive the machine
// too (a power cut), at the cost of a disk flush per turn on this thread.
//
// Frames go to the open segment (spool-files.ts), which is sealed by size (batchSize rows), by interval,
// by flushNow() or at close, and handed to `onSeal`; whoever ships it reports the freed bytes through
// trimmed(). The spool is bounded (maxBytes): at 80 % a line is logged and counted, and at the bound
// rows are dropped and counted while the calls go on without waiting.
import { closeSync, fdatasyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs'
import { leftoverSegments, newSegmentFile, syncDirectory, tokenOf, type FlushLabel, type Segment, type SpoolKind } from './spool-files'
import { spoolSays, type SpoolWords } from './spool-words'

export interface SpoolLogOptions<T> {
  dir: string
  kind: SpoolKind
  /** Rows per segment (= per insert). */
  batchSize: number
  /** A segment with rows is sealed at least this often. */
  flushIntervalMs: number
  maxBytes: number
  fsync: boolean
  /**
   * One turn's rows as one frame of the segment file, and how many it holds: a row that cannot be encoded
   * is left out and counted as dropped. With keepEvents every row must be encoded.
   */
  encode: (rows: T[]) => { frame: string | Uint8Array; rows: number }
  /** Keep the rows of a segment in memory for a shipper on this thread (saves reading the file back). */
  keepEvents: boolean
  onSeal: (segment: Segment<T>) => void
  log?: (line: string) => void
  words: SpoolWords
}

export interface SpoolLogStats {
  /** Rows on disk (this run). */
  logged: number
  /** Rows not recorded: the spool was full, the row could not be encoded, or the disk refused the write. */
  dropped: number
  spoolBytes: number
  spoolMaxBytes: number
  /** Times the spool crossed 80 % of its bound. */
  spoolNearFull: number
  writeErrors: number
}

const NEAR_FULL = 0.8
const nothing = () => {}

export class SpoolLog<T> {
  private fd = -1
  private segment: Segment<T> | null = null
  private pending: T[] = []
  private commit: Promise<void> | null = null
  private release: () => void = nothing
  private sealDue = false
  private timer: ReturnType<typeof setInterval> | null = null
  private near = false
  private full = false
  /** After close(): frames are still written, each sealed at once and left on disk for the next start. */
  private closed = false
  private seq = 0
  private readonly stats: SpoolLogStats
  private readonly says: ReturnType<typeof spoolSays>

  constructor(private readonly options: SpoolLogOptions<T>) {
    this.stats = { logged: 0, dropped: 0, spoolBytes: 0, spoolMaxBytes: options.maxBytes, spoolNearFull: 0, writeErrors: 0 }
    this.says = spoolSays(options.words, options.log)
  }

  /** What an earlier run left (to be shipped first, numbered in order), then starts sealing by interval. */
  open(): Array<Segment<T>> {
    mkdirSync(this.options.dir, { recursive: true })
    const leftovers = leftoverSegments(this.options.dir, this.options.kind).map((s) => ({ ...s, seq: this.seq++ }))
    this.resize(leftovers.reduce((n, s) => n + s.bytes, 0))
    this.timer = setInterval(() => this.sealSoon(), this.options.flushIntervalMs)
    // Sealing needs no live process: whatever is unsealed at exit is on disk and shipped by the next start.
    this.timer.unref?.()
    return leftovers
  }

  /** On the call's path: the promise the call may wait for (the write), or undefined when the row is dropped. */
  append(row: T): Promise<void> | undefined {
    if (this.full) {
      this.stats.dropped++
      return undefined
    }
    this.pending.push(row)
    if (this.commit === null) {
      this.commit = new Promise((resolve) => (this.release = resolve))
      setImmediate(this.flush)
    }
    return this.commit
  }

  snapshot(): SpoolLogStats {
    return { ...this.stats }
  }

  /** seq of the newest segment sealed (or left by an earlier run); -1 when none was. */
  get lastSeq(): number {
    return this.seq - 1
  }

  /** A shipped segment was deleted. */
  trimmed(bytes: number): void {
    this.resize(this.stats.spoolBytes - bytes)
  }

  /** Writes what is pending now and seals the segment under `label`. */
  flushNow(label: FlushLabel): void {
    if (this.commit !== null) this.flush()
    this.seal(label)
  }

  /** Writes what is pending and seals the segment (shutdown); later rows are written and left on disk. */
  close(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    this.flushNow('shutdown')
    this.closed = true
  }

  private readonly flush = (): void => {
    const { pending, release } = this
    this.pending = []
    this.commit = null
    this.release = nothing
    if (pending.length > 0) this.write(pending)
    // Released whether or not the write succeeded: a failed write drops the rows, never the calls.
    release()
    const segment = this.segment
    if (segment && this.closed) this.seal('shutdown')
    else if (segment && (segment.rows >= this.options.batchSize || this.sealDue)) this.seal(this.sealDue ? 'interval' : 'size')
  }

  private write(rows: T[]): void {
    const { frame, rows: encoded } = this.options.encode(rows)
    this.stats.dropped += rows.length - encoded
    if (encoded === 0) return
    const data = typeof frame === 'string' ? Buffer.from(frame) : frame
    let segment: Segment<T> | null = null
    let written = 0
    try {
      segment = this.segment ?? this.create()
      written = writeSync(this.fd, data)
      if (written !== data.length) throw new Error(`short write (${written} of ${data.length} bytes)`)
      if (this.options.fsync) fdatasyncSync(this.fd)
    } catch (error) {
      this.stats.dropped += encoded
      this.says.lost(encoded, error, ++this.stats.writeErrors)
      if (!segment) return
      // Whatever reached the file counts against the bound; a torn frame ends what a reader takes from the
      // segment, so nothing may follow it there.
      this.grew(segment, written)
      this.seal('size')
      return
    }
    segment.rows += encoded
    if (segment.events) for (const row of rows) segment.events.push(row)
    this.stats.logged += encoded
    this.grew(segment, written)
  }

  private grew(segment: Segment<T>, bytes: number): void {
    segment.bytes += bytes
    this.resize(this.stats.spoolBytes + bytes)
  }

  private create(): Segment<T> {
    const { dir, kind, fsync, keepEvents } = this.options
    const file = newSegmentFile(dir, kind)
    this.fd = openSync(file, 'a')
    if (fsync) syncDirectory(dir)
    this.segment = { file, token: tokenOf(file, kind), label: 'size', rows: 0, bytes: 0, seq: -1, events: keepEvents ? [] : undefined }
    return this.segment
  }

  private sealSoon(): void {
    if (this.commit !== null)
      this.sealDue = true // the flush about to run seals it
    else this.seal('interval')
  }

  private seal(label: FlushLabel): void {
    this.sealDue = false
    const segment = this.segment
    if (!segment) return
    closeSync(this.fd)
    this.fd = -1
    this.segment = null
    if (segment.rows === 0) {
      rmSync(segment.file, { force: true })
      this.resize(this.stats.spoolBytes - segment.bytes)
      return
    }
    segment.label = label
    segment.seq = this.seq++
    // After close() the shipper has stopped: a sealed segment waits on disk for the next start.
    if (!this.closed) this.options.onSeal(segment)
  }

  /** Tracks the spool's size against its bound; says so, once, when it nears it, fills it, or recovers. */
  private resize(bytes: number): void {
    this.stats.spoolBytes = bytes
    const { maxBytes } = this.options
    const full = bytes >= maxBytes
    const near = bytes >= maxBytes * NEAR_FULL
    if (near && !this.near) {
      this.stats.spoolNearFull++
      this.says.nearFull(bytes, maxBytes)
    }
    if (full && !this.full) this.says.full(bytes)
    if (!near && this.near) this.says.underNear(bytes, this.stats.dropped)
    this.near = near
    this.full = full
  }
}
