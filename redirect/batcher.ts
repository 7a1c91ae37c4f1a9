// Ships the click log's sealed segments to ClickHouse (core/spool-shipper.ts: oldest first, one
// insert each under the segment's dedup token, deleted once acknowledged, retried with backoff while
// ClickHouse is away). What is the clicks' own is here: how a segment becomes an insert.
//
// It runs on the click worker thread (recorder.ts). A segment is read back from its file (the page cache)
// and encoded to TabSeparated rows byte to byte just before its insert (click-bytes.ts), in slices of
// about ENCODE_SLICE rows. Encoding is also where a click is enriched (device, browser, OS, bot flag,
// referrer host, UTM snapshot, country by IP: core/clicks.ts). While ClickHouse is away only the head
// batch is kept in memory (for its retries); the others wait in their files, read when their turn comes.
// Nothing here drops a click; the log bounds the spool (click-log.ts).
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs'
import { CLICK_COLUMNS, ClickEncoder, DEFAULT_ROUTE, type ClickEvent } from '../core/clicks'
import { SpoolShipper, type ShipperStats, type SpoolSink } from '../core/spool-shipper'
import { ClickBytesEncoder, RowOutput } from './click-bytes'
import { CLICK_WORDS, FLUSH_LABELS, frameRanges, LEGACY_SUFFIX, readSegment, WIRE_SUFFIX, type FlushLabel, type Segment } from './segment'

export type { FlushLabel } from './segment'

/**
 * A batch ready to write: `rows` TabSeparated rows in CLICK_COLUMNS order, in chunks of at most
 * ENCODE_SLICE rows, so the insert streams them without one large write stalling the event loop. The
 * chunks of a segment read from its file are views of the batcher's reused output buffer: valid until the
 * insert's promise settles, so a sink that keeps them longer copies them.
 */
export interface EncodedBatch {
  chunks: Array<string | Uint8Array>
  rows: number
}

export type ClickSink = SpoolSink<EncodedBatch, FlushLabel>

/** A batch's chunks as one buffer (the chunk itself when there is only one). */
export function batchBytes(batch: EncodedBatch): Uint8Array {
  const [only] = batch.chunks
  if (batch.chunks.length === 1 && typeof only !== 'string') return only!
  return Buffer.concat(batch.chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)))
}

export interface BatcherOptions {
  ipHashSecret: string
  /** Country from the client IP when the CDN header gave none (default true; see core/enrich-geo.ts). */
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

export type BatcherStats = Omit<ShipperStats<FlushLabel>, 'setAside'> & {
  /** Clicks read back from a file: replayed after a restart, or dropped from memory during an outage. */
  replayedRows: number
}

/** Columns of a row spooled before the enrichment columns existed (spool files then had no count). */
const LEGACY_COLUMNS = 9

/**
 * Rows spooled by an older version have fewer columns than CLICK_COLUMNS: the missing trailing ones get
 * their table defaults (is_bot 0, route default, the rest empty), so an upgrade never leaves a spool file it cannot write.
 */
export function upgradeRows(chunks: string[], columns: number): string[] {
  if (columns >= CLICK_COLUMNS.length) return chunks
  const pad = CLICK_COLUMNS.slice(columns)
    .map((c) => (c === 'is_bot' ? '\t0' : c === 'route' ? `\t${DEFAULT_ROUTE}` : '\t'))
    .join('')
  return chunks.map((chunk) => chunk.replaceAll('\n', `${pad}\n`))
}

export class ClickBatcher {
  private readonly encoder: ClickEncoder
  private readonly bytes: ClickBytesEncoder
  private readonly shipper: SpoolShipper<ClickEvent, EncodedBatch, FlushLabel>
  private replayedRows = 0
  /**
   * The head segment's bytes and its rows, in buffers kept from segment to segment (see RowOutput): the
   * shipper loads the next segment only once the one before is written, so one of each is enough.
   */
  private input = Buffer.allocUnsafe(1 << 16)
  private readonly out = new RowOutput()

  constructor(
    sink: ClickSink,
    private readonly options: BatcherOptions,
  ) {
    this.encoder = new ClickEncoder(options.ipHashSecret, { geoByIp: options.geoByIp })
    this.bytes = new ClickBytesEncoder(this.encoder)
    const { retryDelayMs = 100, maxRetryDelayMs = 1000, log, trimmed } = options
    this.shipper = new SpoolShipper(sink, { load: (s) => this.load(s), labels: FLUSH_LABELS, maxMemoryRows: 0, retryDelayMs, maxRetryDelayMs, log, words: CLICK_WORDS, trimmed })
  }

  /** A sealed segment to ship. */
  add(segment: Segment): void {
    this.shipper.add(segment)
  }

  snapshot(): BatcherStats {
    const { setAside: _setAside, ...stats } = this.shipper.snapshot()
    return { ...stats, replayedRows: this.replayedRows }
  }

  /**
   * Writes what is waiting, for at most timeoutMs; whatever ClickHouse does not take in time stays in the
   * spool for the next start. Resolves when safe to exit.
   */
  async drain(timeoutMs: number): Promise<BatcherStats> {
    await this.shipper.drain(timeoutMs)
    return this.snapshot()
  }

  /** A segment as TabSeparated chunks; throws when its file cannot be read. */
  private async load(segment: Segment): Promise<{ batch: EncodedBatch; rows: number }> {
    if (segment.file.endsWith(LEGACY_SUFFIX)) return legacy(segment)
    const batch = segment.file.endsWith(WIRE_SUFFIX) ? await this.encodeWireFile(segment.file) : await this.encodeFile(segment.file)
    segment.rows = batch.rows
    this.replayedRows += batch.rows
    return { batch, rows: batch.rows }
  }

  /**
   * A segment read back from its file (the click worker's every segment; on the serving thread, after a
   * restart or an outage), encoded from its bytes (click-bytes.ts) in slices of about ENCODE_SLICE rows
   * between which the event loop runs. A frame that does not read (a crash cut it short) ends the segment
   * there, as readSegment does.
   */
  private async encodeFile(file: string): Promise<EncodedBatch> {
    await this.encoder.prepare(this.options.log)
    const bytes = this.read(file)
    const out = this.out
    out.reset()
    let rows = 0
    let inSlice = 0
    for (const [start, end] of frameRanges(bytes).ranges) {
      let count: number
      try {
        count = this.bytes.encodeLines(bytes, start, end, out)
      } catch {
        break
      }
      rows += count
      inSlice += count
      if (inSlice >= ENCODE_SLICE) {
        out.cut()
        inSlice = 0
        await new Promise((resolve) => setImmediate(resolve))
      }
    }
    return { chunks: out.take(), rows }
  }

  /** A file's bytes, read into the input buffer (grown when the file is larger): valid until the next read. */
  private read(file: string): Buffer {
    const fd = openSync(file, 'r')
    try {
      const size = fstatSync(fd).size
      if (size > this.input.length) this.input = Buffer.allocUnsafe(Math.max(size, this.input.length * 2))
      let got = 0
      while (got < size) {
        const n = readSync(fd, this.input, got, size - got, got)
        if (n === 0) break
        got += n
      }
      return this.input.subarray(0, got)
    } finally {
      closeSync(fd)
    }
  }

  /** A segment of the version before (wire rows), through events. */
  private async encodeWireFile(file: string): Promise<EncodedBatch> {
    const { events } = readSegment(file)
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
}

/** A batch spooled as JSON by the version before the log, under its own token. */
function legacy(segment: Segment): { batch: EncodedBatch; rows: number } {
  const saved = JSON.parse(readFileSync(segment.file, 'utf8')) as { token: string; rows: number; columns?: number; chunks: string[] }
  segment.token = saved.token
  segment.rows = saved.rows
  return { batch: { rows: saved.rows, chunks: upgradeRows(saved.chunks, saved.columns ?? LEGACY_COLUMNS) }, rows: saved.rows }
}
