// The click log's format on disk: segment files (src/core/spool-files.ts) in the spool directory
// (CLICK_SPOOL_DIR), one future ClickHouse batch each, named `….log` with tokens `clk-…`.
//
// A segment is a run of frames, one per group commit (one write() syscall):
//   <payload length in UTF-16 code units>\n<payload>\n
// The payload is wire rows (click-wire.ts: length-prefixed, so no escaping is needed). A frame cut short
// by a crash in the middle of its write fails the length or terminator check and is ignored with anything
// after it: its clicks were never acknowledged, since a 302 waits for the write to return.
import { readFileSync } from 'node:fs'
import type { ClickEvent } from '../src/core/clicks'
import * as files from '../src/core/spool-files'
import type { Segment as SpoolSegment, SpoolKind } from '../src/core/spool-files'
import type { SpoolWords } from '../src/core/spool-words'
import { readWire, wireRow } from './click-wire'

/** Why a batch was sealed; shows in system.query_log (log_comment) and in the counters. */
export type FlushLabel = 'size' | 'interval' | 'shutdown' | 'replay'
export const FLUSH_LABELS: readonly FlushLabel[] = ['size', 'interval', 'shutdown', 'replay']

export type Segment = SpoolSegment<ClickEvent>

/** Batches spooled as JSON by the version before the log; still written on start, then deleted. */
export const LEGACY_SUFFIX = '.json'
export const CLICK_SPOOL: SpoolKind = { suffix: '.log', tokenPrefix: 'clk-', legacySuffix: LEGACY_SUFFIX }

/** How the log and the batcher speak of clicks to the operator. */
export const CLICK_WORDS: SpoolWords = {
  prefix: 'clicks', rows: 'clicks', batches: 'batches', bound: 'CLICK_SPOOL_MAX_BYTES', counter: 'clicks.dropped', goesOn: 'redirects go on',
}

export const tokenOf = (file: string) => files.tokenOf(file, CLICK_SPOOL)

export function frame(payload: string): string {
  return `${payload.length}\n${payload}\n`
}

/** One group commit's clicks as one frame. */
export function clickFrame(events: ClickEvent[]): { frame: string; rows: number } {
  let payload = ''
  for (const event of events) payload += wireRow(event)
  return { frame: frame(payload), rows: events.length }
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
