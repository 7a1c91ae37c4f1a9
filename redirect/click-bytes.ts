// A click segment (segment.ts) to ClickHouse's TabSeparated rows, byte to byte: the lines are never
// decoded into strings or events. What the log already holds escaped goes through as it is (click id,
// link id, domain, alias); what enrichment derives from a field (the referrer's host, a user agent's
// device, browser, OS and bot flag, an address's hash and country, a destination's UTM values) is
// computed once per distinct value by the ClickEncoder (core/clicks.ts) and kept here already
// encoded, keyed by the field's bytes. A row then costs one pass over its bytes, four hashed lookups and copies:
// this is the click worker's whole per-click work, on the core that also serves redirects.
//
// The rows are those ClickEncoder.encode gives the same clicks (click-bytes.test.ts holds them equal).
import type { ClickEncoder } from '../core/clicks'
import { DEFAULT_ROUTE } from '../core/clicks'
import { LINE_FIELDS, MAX_LINE_FIELDS, tsvUnescape } from './segment'

const TAB = 9
const NEWLINE = 10
const DEFAULT_ROUTE_BYTES = new TextEncoder().encode(DEFAULT_ROUTE)
/** Distinct values of each memo; a memo is emptied whole when it fills. */
const MEMO_SIZE = 20_000

interface Referrer {
  text: Uint8Array
  host: Uint8Array
}
interface Agent {
  text: Uint8Array
  columns: Uint8Array
}

/**
 * The output of a segment's rows: one buffer, kept from batch to batch and grown when a segment needs
 * more, handed out as chunks that are views of it, so a large segment streams in pieces. Reused because
 * fresh buffers of a few megabytes a second cost the core that serves redirects more than their encoding:
 * each new page is a fault, and each one the allocator gives back a TLB flush for every thread of the
 * process (measured on the bench machine: docs/decisions/0032-click-worker-encoding.md). The chunks of a batch stay valid until
 * the next reset(): the shipper has one batch at a time and resets only once it is written.
 */
export class RowOutput {
  private buffer = Buffer.allocUnsafe(1 << 16)
  at = 0
  /** Where each chunk ends, in order. */
  private readonly ends: number[] = []

  room(bytes: number): Buffer {
    if (this.at + bytes > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.at + bytes))
      this.buffer.copy(grown, 0, 0, this.at)
      this.buffer = grown
    }
    return this.buffer
  }

  /** Ends the current chunk (when it holds anything) and starts a new one. */
  cut(): void {
    const start = this.ends.at(-1) ?? 0
    if (this.at > start) this.ends.push(this.at)
  }

  /** The chunks written since the last reset, as views of the buffer (valid until the next reset). */
  take(): Buffer[] {
    this.cut()
    let start = 0
    return this.ends.map((end) => {
      const chunk = this.buffer.subarray(start, end)
      start = end
      return chunk
    })
  }

  /** Starts a new batch in the same buffer: the chunks handed out before are overwritten from here on. */
  reset(): void {
    this.at = 0
    this.ends.length = 0
  }
}

export class ClickBytesEncoder {
  private readonly referrers = new ByteMemo<Referrer>()
  private readonly agents = new ByteMemo<Agent>()
  /** By the bytes of `address<TAB>country` (adjacent in a line): `ip_hash<TAB>country`. */
  private readonly places = new ByteMemo<Uint8Array>()
  private readonly utms = new ByteMemo<Uint8Array>()
  private readonly tabs = new Int32Array(MAX_LINE_FIELDS - 1)
  private lastAt = -1
  private lastTimestamp: Uint8Array = new Uint8Array(0)

  constructor(private readonly encoder: ClickEncoder) {}

  /**
   * The rows of the lines in bytes[start, end), appended to `out`; returns how many. Throws, having
   * appended nothing, when a line does not have its ten or eleven fields (a bug, since only the log
   * writes them).
   */
  encodeLines(bytes: Uint8Array, start: number, end: number, out: RowOutput): number {
    const mark = out.at
    const tabs = this.tabs
    let rows = 0
    let at = start
    try {
      while (at < end) {
        // One pass over the line for its nine (or ten) tabs and its end: a JS loop, cheaper than a native search a field.
        const line = at
        let found = 0
        let byte = bytes[at]!
        while (byte !== NEWLINE) {
          if (byte === TAB) {
            if (found === MAX_LINE_FIELDS - 1) throw new Error('click segment: malformed line')
            tabs[found++] = at
          }
          if (++at >= end) throw new Error('click segment: unterminated line')
          byte = bytes[at]!
        }
        if (found !== LINE_FIELDS - 1 && (found !== MAX_LINE_FIELDS - 1 || !isRoute(bytes, tabs[9]! + 1, at))) throw new Error('click segment: malformed line')
        this.row(bytes, line, tabs, found, at, out)
        rows++
        at++
      }
    } catch (error) {
      out.at = mark
      throw error
    }
    return rows
  }

  private row(bytes: Uint8Array, line: number, tabs: Int32Array, found: number, newline: number, out: RowOutput): void {
    // click id … alias with their tabs, as the log holds them (escaped there already).
    const headEnd = tabs[3]! + 1
    const timestamp = this.timestamp(bytes, headEnd, tabs[4]!)
    const referrer = this.referrers.get(bytes, tabs[4]! + 1, tabs[5]!, this.newReferrer)
    const agent = this.agents.get(bytes, tabs[5]! + 1, tabs[6]!, this.newAgent)
    // [address, country] with the tab between them: one key.
    const place = this.places.get(bytes, tabs[6]! + 1, tabs[8]!, this.newPlace)
    // The route, when the line has one, follows the destination; ids need no escaping.
    const routed = found === MAX_LINE_FIELDS - 1
    const urlEnd = routed ? tabs[9]! : newline
    const utm = this.utms.get(bytes, tabs[8]! + 1, urlEnd, this.newUtm)
    const route = routed ? bytes : DEFAULT_ROUTE_BYTES
    const routeStart = routed ? urlEnd + 1 : 0
    const routeEnd = routed ? newline : DEFAULT_ROUTE_BYTES.length
    const size = headEnd - line + timestamp.length + referrer.text.length + agent.text.length + place.length + agent.columns.length + referrer.host.length + utm.length + (routeEnd - routeStart) + 8
    const target = out.room(size)
    let at = copy(target, out.at, bytes, line, headEnd)
    at = copy(target, at, timestamp, 0, timestamp.length)
    target[at++] = TAB
    at = copy(target, at, referrer.text, 0, referrer.text.length)
    target[at++] = TAB
    at = copy(target, at, agent.text, 0, agent.text.length)
    target[at++] = TAB
    at = copy(target, at, place, 0, place.length)
    target[at++] = TAB
    at = copy(target, at, agent.columns, 0, agent.columns.length)
    target[at++] = TAB
    at = copy(target, at, referrer.host, 0, referrer.host.length)
    target[at++] = TAB
    at = copy(target, at, utm, 0, utm.length)
    target[at++] = TAB
    at = copy(target, at, route, routeStart, routeEnd)
    target[at++] = NEWLINE
    out.at = at
  }

  private timestamp(bytes: Uint8Array, start: number, end: number): Uint8Array {
    let ms = 0
    for (let i = start; i < end; i++) {
      const digit = bytes[i]! - 48
      if (digit < 0 || digit > 9) throw new Error('click segment: malformed time')
      ms = ms * 10 + digit
    }
    if (start === end) throw new Error('click segment: malformed time')
    if (ms !== this.lastAt) {
      this.lastAt = ms
      this.lastTimestamp = utf8.encode(this.encoder.timestamp(ms))
    }
    return this.lastTimestamp
  }

  // What a memo computes for a value it has not seen, from the field's bytes.
  private readonly newReferrer = (bytes: Uint8Array, start: number, end: number): Referrer => {
    const { text, host } = this.encoder.referrer(field(bytes, start, end))
    return { text: utf8.encode(text), host: utf8.encode(host) }
  }

  private readonly newAgent = (bytes: Uint8Array, start: number, end: number): Agent => {
    const { text, columns } = this.encoder.userAgent(field(bytes, start, end))
    return { text: utf8.encode(text), columns: utf8.encode(columns) }
  }

  private readonly newPlace = (bytes: Uint8Array, start: number, end: number): Uint8Array => {
    let tab = start
    while (bytes[tab] !== TAB) tab++
    return utf8.encode(this.encoder.placeOnce(field(bytes, start, tab), field(bytes, tab + 1, end)))
  }

  private readonly newUtm = (bytes: Uint8Array, start: number, end: number): Uint8Array => utf8.encode(this.encoder.utm(field(bytes, start, end)))
}

/**
 * Values computed once per distinct field, keyed by the field's bytes without making a string of them:
 * a 32-bit FNV-1a hash finds the entry and a byte comparison confirms it (two values sharing a hash take
 * turns in the slot: recomputed, never confused). Emptied whole when it holds MEMO_SIZE values.
 */
export class ByteMemo<V> {
  private readonly entries = new Map<number, { key: Uint8Array; value: V }>()

  get(bytes: Uint8Array, start: number, end: number, compute: (bytes: Uint8Array, start: number, end: number) => V): V {
    const hash = byteHash(bytes, start, end)
    const entry = this.entries.get(hash)
    if (entry !== undefined && sameBytes(entry.key, bytes, start, end)) return entry.value
    const value = compute(bytes, start, end)
    if (this.entries.size >= MEMO_SIZE) this.entries.clear()
    // A copy: `bytes` is the batcher's input buffer, reused for the next segment (a Buffer's slice() is a
    // view of it, whose bytes would change under the key).
    this.entries.set(hash, { key: new Uint8Array(bytes.subarray(start, end)), value })
    return value
  }
}

/** `rule:<id>` or `ab:<id>` (id: 1-32 of A-Z a-z 0-9 _ -), as the log writes a route. */
function isRoute(bytes: Uint8Array, start: number, end: number): boolean {
  const prefix = bytes[start] === 114 ? RULE : bytes[start] === 97 ? AB : null
  if (prefix === null || end - start - prefix.length < 1 || end - start - prefix.length > 32) return false
  for (let i = 0; i < prefix.length; i++) if (bytes[start + i] !== prefix[i]) return false
  for (let i = start + prefix.length; i < end; i++) {
    const b = bytes[i]!
    if (!((b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b === 45 || b === 95)) return false
  }
  return true
}
const RULE = new TextEncoder().encode('rule:')
const AB = new TextEncoder().encode('ab:')

/** 32-bit FNV-1a of bytes[start, end). */
export function byteHash(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193)
  return hash
}

function sameBytes(key: Uint8Array, bytes: Uint8Array, start: number, end: number): boolean {
  if (key.length !== end - start) return false
  for (let i = 0; i < key.length; i++) if (key[i] !== bytes[start + i]) return false
  return true
}

/** bytes[from, to) into target at `at` (a JS loop: the spans are short, a native copy costs more to call). */
function copy(target: Uint8Array, at: number, bytes: Uint8Array, from: number, to: number): number {
  for (let i = from; i < to; i++) target[at++] = bytes[i]!
  return at
}

// A memo's miss (every click from a new address, in real traffic most of them) decodes its field and
// encodes what it computed: with these, about 0.1 µs each way, where a Buffer view and Buffer.from cost
// 0.5-0.7 µs. ignoreBOM: a leading U+FEFF is part of the value, as Buffer's decoding keeps it.
const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true })
const utf8 = new TextEncoder()

/** A field's value as the client sent it: UTF-8 decoded, unescaped. */
function field(bytes: Uint8Array, start: number, end: number): string {
  return tsvUnescape(utf8Decoder.decode(bytes.subarray(start, end)))
}
