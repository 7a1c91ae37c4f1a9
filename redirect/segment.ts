// The click log on disk: append-only segment files in the spool directory (CLICK_SPOOL_DIR).
//
// A segment is one future ClickHouse batch. The log appends to it until it is sealed (by size, by the
// flush interval or at shutdown); after that it never changes, and it is deleted once ClickHouse has
// taken it. Its dedup token is derived from its name alone, so a segment inserted but not yet deleted
// when the process died is inserted again after the restart under the same token, and ClickHouse drops
// it (insert_deduplication_token). The name is unique across processes and restarts (a random part),
// because two redirectors reusing a token would make ClickHouse drop the second one's clicks.
//
// A segment is a run of frames, one per group commit (one write() syscall):
//   <payload length in UTF-16 code units>\n<payload>\n
// The payload is wire rows (click-wire.ts: length-prefixed, so no escaping is needed). A frame cut short
// by a crash in the middle of its write fails the length or terminator check and is ignored with anything
// after it: its clicks were never acknowledged, since a 302 waits for the write to return.
import { readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { basename, join } from 'node:path'
import type { ClickEvent } from '../src/core/clicks'
import { readWire } from './click-wire'

/** Why a batch was sealed; shows in system.query_log (log_comment) and in the counters. */
export type FlushLabel = 'size' | 'interval' | 'shutdown' | 'replay'

export interface Segment {
  file: string
  token: string
  label: FlushLabel
  /** Rows in the file; unknown (-1) for a segment left by an earlier run until it is read. */
  rows: number
  bytes: number
  /** The clicks themselves when the writing thread kept them, so the file need not be read back. */
  events?: ClickEvent[]
}

const SUFFIX = '.log'
/** Batches spooled as JSON by the version before the log; still written on start, then deleted. */
export const LEGACY_SUFFIX = '.json'
let sequence = 0

/** A new segment's path: sortable by creation time, unique by its random part. */
export function newSegmentFile(dir: string): string {
  const random = crypto.getRandomValues(new Uint32Array(2)).reduce((s, n) => s + n.toString(16).padStart(8, '0'), '')
  return join(dir, `${Date.now().toString().padStart(15, '0')}-${(sequence++).toString().padStart(6, '0')}-${random}${SUFFIX}`)
}

export function tokenOf(file: string): string {
  return `clk-${basename(file, SUFFIX)}`
}

export function frame(payload: string): string {
  return `${payload.length}\n${payload}\n`
}

/**
 * What an earlier run left, oldest first: segments (sealed or not: the process is gone, so none grows
 * any more) and legacy batches. Half-written legacy files (.tmp) are removed.
 */
export function leftoverSegments(dir: string): Segment[] {
  const names = readdirSync(dir).sort()
  for (const stale of names.filter((n) => n.endsWith('.tmp'))) rmSync(join(dir, stale), { force: true })
  return names
    .filter((n) => n.endsWith(SUFFIX) || n.endsWith(LEGACY_SUFFIX))
    .map((n) => {
      const file = join(dir, n)
      return { file, token: tokenOf(file), label: 'replay' as const, rows: -1, bytes: statSync(file).size }
    })
}

/** The clicks of a segment file, up to its first incomplete frame (which `torn` reports). */
export function readSegment(file: string): { events: ClickEvent[]; torn: boolean } {
  const text = readFileSync(file, 'utf8')
  const events: ClickEvent[] = []
  let at = 0
  while (at < text.length) {
    const newline = text.indexOf('\n', at)
    const length = newline < 0 ? '' : text.slice(at, newline)
    const end = newline + 1 + Number(length)
    if (!/^\d+$/.test(length) || end >= text.length || text[end] !== '\n') return { events, torn: true }
    const frameEvents: ClickEvent[] = []
    try {
      readWire(text.slice(newline + 1, end), (event) => frameEvents.push(event))
    } catch {
      return { events, torn: true }
    }
    for (const event of frameEvents) events.push(event)
    at = end + 1
  }
  return { events, torn: false }
}

/** Moves an unreadable file aside (kept for a person to inspect) so the log never loops on it. */
export function setAside(file: string): void {
  try {
    renameSync(file, `${file}.corrupt`)
  } catch {
    rmSync(file, { force: true })
  }
}
