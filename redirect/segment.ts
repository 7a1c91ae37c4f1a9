// The click log's format on disk: segment files (core/spool-files.ts) in the spool directory
// (CLICK_SPOOL_DIR), one future ClickHouse batch each, named `….clk` with tokens `clk-…`.
//
// A segment is a run of frames, one per group commit (one write() syscall):
//   <payload length in bytes>\n<payload>\n
// The payload is one line per click, ten tab-separated fields, those a client controls escaped as
// ClickHouse's TabSeparated escapes them (so no value can break a line or a field): click id, link id, domain, alias, time (unix
// ms), referrer, user agent, client address, country header, destination; and an eleventh, the route,
// only when a routed link chose it (`rule:<id>`, `ab:<id>`: ids are [A-Za-z0-9_-]). The reader ships them without
// decoding them into strings (click-bytes.ts). A frame cut short by a crash in the middle of its write
// fails the length or terminator check and is ignored with anything after it: its clicks were never
// acknowledged, since a 302 waits for the write to return.
//
// Segments of the version before (`….log`: wire rows, click-wire.ts, frames counted in UTF-16 code
// units) and before that (`….json` batches) are still read and shipped after an upgrade.
import { readFileSync } from 'node:fs'
import { DEFAULT_ROUTE, tsvField, type ClickEvent } from '../core/clicks'
import * as files from '../core/spool-files'
import type { Segment as SpoolSegment, SpoolKind } from '../core/spool-files'
import type { SpoolWords } from '../core/spool-words'
import { readWire } from './click-wire'

/** Why a batch was sealed; shows in system.query_log (log_comment) and in the counters. */
export type FlushLabel = 'size' | 'interval' | 'shutdown' | 'replay'
export const FLUSH_LABELS: readonly FlushLabel[] = ['size', 'interval', 'shutdown', 'replay']

export type Segment = SpoolSegment<ClickEvent>

/** Batches spooled as JSON by the version before the log; still written on start, then deleted. */
export const LEGACY_SUFFIX = '.json'
/** Segments of wire rows (click-wire.ts) written by the version before this format. */
export const WIRE_SUFFIX = '.log'
export const CLICK_SPOOL: SpoolKind = { suffix: '.clk', tokenPrefix: 'clk-', legacySuffixes: [WIRE_SUFFIX, LEGACY_SUFFIX] }

/** Fields of a line: click id, link id, domain, alias, time, referrer, user agent, address, country, destination. */
export const LINE_FIELDS = 10
/** …and the route of a routed click, when it is not the default. */
export const MAX_LINE_FIELDS = 11
const ROUTE = /^(rule|ab):[A-Za-z0-9_-]{1,32}$/

/** How the log and the batcher speak of clicks to the operator. */
export const CLICK_WORDS: SpoolWords = {
  prefix: 'clicks',
  rows: 'clicks',
  batches: 'batches',
  bound: 'CLICK_SPOOL_MAX_BYTES',
  counter: 'clicks.dropped',
  goesOn: 'redirects go on',
}

export const tokenOf = (file: string) => files.tokenOf(file, CLICK_SPOOL)

/** A frame of this format around a payload of lines. */
export function frame(payload: string): string {
  return `${Buffer.byteLength(payload)}\n${payload}\n`
}

/**
 * One click as a line of a segment. What a request brings (referrer, user agent, an address from a
 * forwarding header, a country header) and the destination are escaped; the click id (ours), the link id
 * (the API's), the domain (the default one or a verified one) and the alias (ALIAS_PATTERN) are checked
 * before a click exists and hold no character TabSeparated escapes; the time is a number.
 */
export function clickLine(e: ClickEvent): string {
  const route = e.route === undefined || e.route === DEFAULT_ROUTE ? '' : `\t${e.route}`
  return `${e.clickId}\t${e.linkId}\t${e.domain}\t${e.alias}\t${e.at}\t${tsvField(e.referrer)}\t${tsvField(e.userAgent)}\t${tsvField(e.ip)}\t${tsvField(e.country)}\t${tsvField(e.url)}${route}\n`
}

/** Where frames are encoded: reused, since the log writes each frame synchronously before the next. */
let scratch = Buffer.allocUnsafe(1 << 16)
/** Bytes left before the payload for its length line (up to 15 digits and the newline). */
const HEADER_ROOM = 16

/**
 * One group commit's clicks as one frame, encoded once into a reused buffer (no allocation per turn on
 * the serving thread). The payload is written first, after room for its length line, so its UTF-8 length
 * is what the write returns rather than a second pass over it. The returned bytes are valid until the
 * next call: the log writes them at once.
 */
export function clickFrame(events: ClickEvent[]): { frame: Uint8Array; rows: number } {
  let payload = ''
  for (const event of events) payload += clickLine(event)
  // At most 3 UTF-8 bytes per UTF-16 code unit (a surrogate pair: 4 bytes for 2 units).
  const most = HEADER_ROOM + payload.length * 3 + 1
  if (most > scratch.length) scratch = Buffer.allocUnsafe(Math.max(most, scratch.length * 2))
  const length = scratch.write(payload, HEADER_ROOM, 'utf8')
  const header = `${length}\n`
  const start = HEADER_ROOM - header.length
  scratch.write(header, start, 'latin1')
  scratch[HEADER_ROOM + length] = 10
  return { frame: scratch.subarray(start, HEADER_ROOM + length + 1), rows: events.length }
}

/**
 * The payloads of a segment's frames (byte ranges of `bytes`), in order, up to its first incomplete frame
 * (which `torn` reports): a frame whose length or terminator does not check out was cut short by a crash.
 */
export function frameRanges(bytes: Uint8Array): { ranges: Array<[start: number, end: number]>; torn: boolean } {
  const ranges: Array<[number, number]> = []
  let at = 0
  while (at < bytes.length) {
    let length = 0
    let digits = at
    while (digits < bytes.length && bytes[digits]! >= 48 && bytes[digits]! <= 57 && digits - at < 12) length = length * 10 + bytes[digits++]! - 48
    const end = digits + 1 + length
    if (digits === at || bytes[digits] !== 10 || end >= bytes.length || bytes[end] !== 10) return { ranges, torn: true }
    ranges.push([digits + 1, end])
    at = end + 1
  }
  return { ranges, torn: false }
}

const UNESCAPES: Record<string, string> = { '\\': '\\', t: '\t', n: '\n', r: '\r', '0': '\0' }

/** A field as it was before tsvField escaped it. */
export function tsvUnescape(field: string): string {
  return field.includes('\\') ? field.replace(/\\(.)/g, (_, c: string) => UNESCAPES[c] ?? c) : field
}

/** The click of one line (without its newline); throws when it does not have its ten or eleven fields. */
export function parseLine(line: string): ClickEvent {
  const f = line.split('\t')
  if ((f.length !== LINE_FIELDS && !(f.length === MAX_LINE_FIELDS && ROUTE.test(f[10]!))) || !/^\d+$/.test(f[4]!)) throw new Error('click segment: malformed line')
  const [clickId, linkId, domain, alias, at, referrer, userAgent, ip, country, url, route] = f.map(tsvUnescape) as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string | undefined,
  ]
  return { clickId, linkId, domain, alias, at: Number(at), referrer, userAgent, ip, country, url, ...(route !== undefined && { route }) }
}

/**
 * The clicks of a segment file of any version the log wrote (this one or the wire rows before it), up to
 * its first incomplete frame (which `torn` reports). For tests, tools and the rare reader that needs
 * events: shipping reads this format as bytes (click-bytes.ts).
 */
export function readSegment(file: string): { events: ClickEvent[]; torn: boolean } {
  if (file.endsWith(WIRE_SUFFIX)) return readWireSegment(file)
  const bytes = readFileSync(file)
  const { ranges, torn } = frameRanges(bytes)
  const events: ClickEvent[] = []
  for (const [start, end] of ranges) {
    let frameEvents: ClickEvent[]
    try {
      frameEvents = bytes.toString('utf8', start, end).split('\n').slice(0, -1).map(parseLine)
    } catch {
      return { events, torn: true }
    }
    for (const event of frameEvents) events.push(event)
  }
  return { events, torn }
}

/** The payloads of a wire-row segment's frames (the version before: lengths in UTF-16 code units). */
export function wireFramePayloads(text: string): { payloads: string[]; torn: boolean } {
  const payloads: string[] = []
  let at = 0
  while (at < text.length) {
    const newline = text.indexOf('\n', at)
    const length = newline < 0 ? '' : text.slice(at, newline)
    const end = newline + 1 + Number(length)
    if (!/^\d+$/.test(length) || end >= text.length || text[end] !== '\n') return { payloads, torn: true }
    payloads.push(text.slice(newline + 1, end))
    at = end + 1
  }
  return { payloads, torn: false }
}

function readWireSegment(file: string): { events: ClickEvent[]; torn: boolean } {
  const { payloads, torn } = wireFramePayloads(readFileSync(file, 'utf8'))
  const events: ClickEvent[] = []
  for (const payload of payloads) {
    const frameEvents: ClickEvent[] = []
    try {
      readWire(payload, (event) => frameEvents.push(event))
    } catch {
      return { events, torn: true }
    }
    for (const event of frameEvents) events.push(event)
  }
  return { events, torn }
}
