// The write-ahead log of clicks, on the thread that serves redirects: a click is on disk before its
// 302 leaves, so a process killed at any moment (SIGKILL, OOM) loses no click a client was answered for.
//
// Group commit: append() adds the click's wire row to this event-loop turn's frame and returns the turn's
// promise; one setImmediate later the frame is written with one write() syscall and every response of
// the turn is released together. A plain write() lands in the page cache, which outlives the process;
// CLICK_FSYNC=true adds fdatasync per frame for clicks that must outlive the machine too (a power cut),
// at the cost of a disk flush per turn on this thread.
//
// The log is bounded (CLICK_SPOOL_MAX_BYTES): while ClickHouse is away segments pile up; at 80 % of the
// bound a line is logged and counted, and at the bound redirects go on without waiting and their clicks
// are dropped and counted (a link service must keep redirecting). Segments are sealed into batches
// (segment.ts) and handed to `onSeal`; whoever ships them reports the freed bytes through trimmed().
import { closeSync, fdatasyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs'
import type { ClickEvent } from '../src/core/clicks'
import { wireRow } from './click-wire'
import { frame, leftoverSegments, newSegmentFile, tokenOf, type FlushLabel, type Segment } from './segment'

export interface ClickLogOptions {
  dir: string
  /** Rows per segment (= per ClickHouse insert). */
  batchSize: number
  /** A segment with clicks is sealed at least this often. */
  flushIntervalMs: number
  maxBytes: number
  fsync: boolean
  /** Keep the events of a segment in memory for a batcher on this thread (saves reading the file back). */
  keepEvents: boolean
  onSeal: (segment: Segment) => void
  log?: (line: string) => void
}

export interface ClickLogStats {
  /** Clicks on disk (this run). */
  logged: number
  /** Clicks redirected without being recorded: the spool was full, or the disk refused the write. */
  dropped: number
  spoolBytes: number
  spoolMaxBytes: number
  /** Times the spool crossed 80 % of its bound. */
  spoolNearFull: number
  writeErrors: number
}

const NEAR_FULL = 0.8

export class ClickLog {
  private fd = -1
  private segment: Segment | null = null
  private pending = ''
  private pendingRows = 0
  private pendingEvents: ClickEvent[] = []
  private commit: Promise<void> | null = null
  private release: () => void = () => {}
  private sealDue = false
  private timer: ReturnType<typeof setInterval> | null = null
  private near = false
  private full = false
  private readonly stats: ClickLogStats

  constructor(private readonly options: ClickLogOptions) {
    this.stats = { logged: 0, dropped: 0, spoolBytes: 0, spoolMaxBytes: options.maxBytes, spoolNearFull: 0, writeErrors: 0 }
  }

  /** What an earlier run left (to be shipped first), then starts sealing by interval. */
  open(): Segment[] {
    mkdirSync(this.options.dir, { recursive: true })
    const leftovers = leftoverSegments(this.options.dir)
    this.resize(leftovers.reduce((n, s) => n + s.bytes, 0))
    this.timer = setInterval(() => this.sealSoon(), this.options.flushIntervalMs)
    return leftovers
  }

  /** On the hot path: the promise to wait for before answering, or undefined when the click is dropped. */
  append(event: ClickEvent): Promise<void> | undefined {
    if (this.full) {
      this.stats.dropped++
      return undefined
    }
    this.pending += wireRow(event)
    this.pendingRows++
    if (this.options.keepEvents) this.pendingEvents.push(event)
    if (this.commit === null) {
      this.commit = new Promise((resolve) => (this.release = resolve))
      setImmediate(this.flush)
    }
    return this.commit
  }

  snapshot(): ClickLogStats {
    return { ...this.stats }
  }

  /** A shipped segment was deleted. */
  trimmed(bytes: number): void {
    this.resize(this.stats.spoolBytes - bytes)
  }

  /** Writes what is pending and seals the segment (shutdown). */
  close(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    if (this.commit !== null) this.flush()
    this.seal('shutdown')
  }

  private readonly flush = (): void => {
    const { pending, pendingRows, pendingEvents, release } = this
    this.pending = ''
    this.pendingRows = 0
    this.pendingEvents = []
    this.commit = null
    if (pendingRows > 0) this.write(pending, pendingRows, pendingEvents)
    // Released whether or not the write succeeded: a failed write drops the clicks, never the redirects.
    release()
    const segment = this.segment
    if (segment && (segment.rows >= this.options.batchSize || this.sealDue)) this.seal(this.sealDue ? 'interval' : 'size')
  }

  private write(payload: string, rows: number, events: ClickEvent[]): void {
    const data = Buffer.from(frame(payload))
    let segment: Segment | null = null
    try {
      segment = this.segment ?? this.create()
      const written = writeSync(this.fd, data)
      if (written !== data.length) throw new Error(`short write (${written} of ${data.length} bytes)`)
      if (this.options.fsync) fdatasyncSync(this.fd)
    } catch (error) {
      this.stats.dropped += rows
      if (this.stats.writeErrors++ === 0 || this.stats.writeErrors % 1000 === 0) {
        this.options.log?.(`clicks: LOST ${rows} clicks: the spool write failed (${error instanceof Error ? error.message : error}); redirects go on (${this.stats.writeErrors} failed writes so far)`)
      }
      // A torn frame ends what a reader takes from the segment: nothing may follow it there.
      if (segment) this.seal('size')
      return
    }
    segment.rows += rows
    segment.bytes += data.length
    if (segment.events) for (const event of events) segment.events.push(event)
    this.stats.logged += rows
    this.resize(this.stats.spoolBytes + data.length)
  }

  private create(): Segment {
    const file = newSegmentFile(this.options.dir)
    this.fd = openSync(file, 'a')
    if (this.options.fsync) syncDirectory(this.options.dir)
    this.segment = { file, token: tokenOf(file), label: 'size', rows: 0, bytes: 0, events: this.options.keepEvents ? [] : undefined }
    return this.segment
  }

  private sealSoon(): void {
    if (this.commit !== null) this.sealDue = true // the flush about to run seals it
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
    this.options.onSeal(segment)
  }

  /** Tracks the spool's size against its bound; says so, once, when it nears it, fills it, or recovers. */
  private resize(bytes: number): void {
    this.stats.spoolBytes = bytes
    const { maxBytes } = this.options
    const mb = (n: number) => `${Math.round(n / 1048576)} MB`
    const full = bytes >= maxBytes
    const near = bytes >= maxBytes * NEAR_FULL
    if (near && !this.near) {
      this.stats.spoolNearFull++
      this.options.log?.(`clicks: the spool holds ${mb(bytes)}, over 80 % of CLICK_SPOOL_MAX_BYTES (${mb(maxBytes)}): ClickHouse is not keeping up; at the bound clicks are dropped (redirects go on)`)
    }
    if (full && !this.full) this.options.log?.(`clicks: the spool is FULL (${mb(bytes)}): clicks are now DROPPED and counted (clicks.dropped) until ClickHouse takes the backlog`)
    if (!near && this.near) this.options.log?.(`clicks: the spool is back under 80 % (${mb(bytes)}); ${this.stats.dropped} clicks dropped so far`)
    this.near = near
    this.full = full
  }
}

/** A new file's name must reach the disk too for fsync to protect it. */
function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fdatasyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
