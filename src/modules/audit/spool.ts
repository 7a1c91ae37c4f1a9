// The audit spool on disk (AUDIT_SPOOL_DIR): append-only segment files of JSON lines, one future
// ClickHouse batch each, the same idea as the click log (redirect/click-log.ts, redirect/segment.ts).
//
// The recorder appends each event-loop turn's events to the open segment with one write() (a group
// commit); the segment is sealed by size (AUDIT_BATCH_SIZE events), by the flush interval, by flush() or
// at shutdown, and never changes after that. It is deleted only once ClickHouse has taken it. Its dedup
// token is derived from its name alone, so a segment inserted but not yet deleted when the process died
// is inserted again after the restart under the same token, and ClickHouse drops the copy. Names are
// unique across processes and restarts (a random part): two segments sharing a token would make
// ClickHouse drop the second one's events.
//
// A crash in the middle of a write leaves a partial last line; reading stops at the last newline. A line
// that is not a JSON object (a disk error in the middle of a file) is skipped and counted. One spool
// directory belongs to one process: a second process would ship the first one's open segment.
import { closeSync, fdatasyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs'
import { basename, join } from 'node:path'

/** Why a batch was sealed; shows in system.query_log (log_comment) and in the counters. */
export type FlushLabel = 'size' | 'interval' | 'flush' | 'shutdown' | 'replay'

export interface Segment {
  file: string
  token: string
  label: FlushLabel
  /** Events in the file; -1 for a segment left by an earlier run until it is read. */
  events: number
  bytes: number
  /** Order of sealing in this process; flush() waits for every segment up to its own. */
  seq: number
}

const SUFFIX = '.jsonl'
let sequence = 0

export function newSegmentFile(dir: string): string {
  const random = crypto.getRandomValues(new Uint32Array(2)).reduce((s, n) => s + n.toString(16).padStart(8, '0'), '')
  return join(dir, `${Date.now().toString().padStart(15, '0')}-${(sequence++).toString().padStart(6, '0')}-${random}${SUFFIX}`)
}

export function tokenOf(file: string): string {
  return `aud-${basename(file, SUFFIX)}`
}

/** What an earlier run left, oldest first: sealed or not, none of them grows any more. */
export function leftoverSegments(dir: string): Array<Omit<Segment, 'seq'>> {
  return readdirSync(dir)
    .filter((n) => n.endsWith(SUFFIX))
    .sort()
    .map((n) => {
      const file = join(dir, n)
      return { file, token: tokenOf(file), label: 'replay' as const, events: -1, bytes: statSync(file).size }
    })
}

/** The rows of a segment file, up to its last complete line; `skipped` counts lines that are not JSON objects. */
export function readSegment(file: string): { rows: object[]; skipped: number } {
  const text = readFileSync(file, 'utf8')
  const rows: object[] = []
  let skipped = 0
  const end = text.lastIndexOf('\n')
  for (const line of end < 0 ? [] : text.slice(0, end).split('\n')) {
    if (line === '') continue
    try {
      const row: unknown = JSON.parse(line)
      if (typeof row === 'object' && row !== null && !Array.isArray(row)) rows.push(row)
      else skipped++
    } catch {
      skipped++
    }
  }
  return { rows, skipped }
}

/** Moves an unreadable file aside (kept for a person to inspect) so the shipper never loops on it. */
export function setAside(file: string): void {
  try {
    renameSync(file, `${file}.corrupt`)
  } catch {
    rmSync(file, { force: true })
  }
}

/** The open segment: appended to by group commits until sealed. */
export class SegmentWriter {
  private fd = -1
  private current: { file: string; events: number; bytes: number } | null = null

  constructor(private readonly dir: string, private readonly fsync: boolean) {
    mkdirSync(dir, { recursive: true })
  }

  get events(): number {
    return this.current?.events ?? 0
  }

  /** Appends a frame of whole lines with one write(); throws when the disk refuses it. */
  append(payload: string, events: number): number {
    const data = Buffer.from(payload)
    if (!this.current) {
      const file = newSegmentFile(this.dir)
      this.fd = openSync(file, 'a')
      if (this.fsync) syncDirectory(this.dir)
      this.current = { file, events: 0, bytes: 0 }
    }
    const written = writeSync(this.fd, data)
    // Whatever reached the file counts against the bound, even a torn frame.
    this.current.bytes += written
    if (written !== data.length) throw new Error(`short write (${written} of ${data.length} bytes)`)
    if (this.fsync) fdatasyncSync(this.fd)
    this.current.events += events
    return data.length
  }

  /** Closes the open segment; an empty one is deleted (its bytes are returned as freed). */
  seal(label: FlushLabel, seq: () => number): { segment: Segment | null; freed: number } {
    const current = this.current
    if (!current) return { segment: null, freed: 0 }
    closeSync(this.fd)
    this.fd = -1
    this.current = null
    if (current.events === 0) {
      rmSync(current.file, { force: true })
      return { segment: null, freed: current.bytes }
    }
    return { segment: { ...current, token: tokenOf(current.file), label, seq: seq() }, freed: 0 }
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
