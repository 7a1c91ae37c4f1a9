// A click segment (segment.ts) to ClickHouse's TabSeparated rows, byte to byte: the lines are never
// decoded into strings or events. What the log already holds escaped goes through as it is (click id,
// link id, domain, alias); what enrichment derives from a field (the referrer's host, a user agent's
// device, browser, OS and bot flag, an address's hash and country, a destination's UTM values) is
// computed once per distinct value by the ClickEncoder (src/core/clicks.ts) and kept here already
// encoded, keyed by the field's bytes. A row then costs a few byte searches, map lookups and copies:
// this is the click worker's whole per-click work, on the core that also serves redirects.
//
// The rows are those ClickEncoder.encode gives the same clicks (click-bytes.test.ts holds them equal).
import type { ClickEncoder } from '../src/core/clicks'
import { LINE_FIELDS, tsvUnescape } from './segment'

const TAB = 9
const NEWLINE = 10
/** Distinct values of each memo; a memo is emptied whole when it fills. */
const MEMO_SIZE = 20_000

interface Referrer { text: Buffer; host: Buffer }
interface Agent { text: Buffer; columns: Buffer }

/** A growing output buffer, handed out in chunks so a large segment streams in pieces. */
export class RowOutput {
  private buffer = Buffer.allocUnsafe(1 << 16)
  at = 0
  private readonly chunks: Buffer[] = []

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
    if (this.at === 0) return
    this.chunks.push(this.buffer.subarray(0, this.at))
    this.buffer = Buffer.allocUnsafe(Math.max(1 << 16, this.at))
    this.at = 0
  }

  take(): Buffer[] {
    this.cut()
    return this.chunks.splice(0)
  }
}

export class ClickBytesEncoder {
  private readonly referrers = new Map<string, Referrer>()
  private readonly agents = new Map<string, Agent>()
  /** By the bytes of `address<TAB>country` (adjacent in a line): `ip_hash<TAB>country`. */
  private readonly places = new Map<string, Buffer>()
  private readonly utms = new Map<string, Buffer>()
  private lastAt = -1
  private lastTimestamp = Buffer.alloc(0)

  constructor(private readonly encoder: ClickEncoder) {}

  /**
   * The rows of the lines in bytes[start, end), appended to `out`; returns how many. Throws, having
   * appended nothing, when a line does not have its ten fields (a bug, since only the log writes them).
   */
  encodeLines(bytes: Buffer, start: number, end: number, out: RowOutput): number {
    const mark = out.at
    let rows = 0
    const tabs = new Array<number>(LINE_FIELDS - 1)
    let line = start
    try {
      while (line < end) {
        const newline = bytes.indexOf(NEWLINE, line)
        if (newline < 0 || newline >= end) throw new Error('click segment: unterminated line')
        let from = line
        for (let i = 0; i < LINE_FIELDS - 1; i++) {
          const tab = bytes.indexOf(TAB, from)
          if (tab < 0 || tab > newline) throw new Error('click segment: malformed line')
          tabs[i] = tab
          from = tab + 1
        }
        const lastTab = bytes.indexOf(TAB, from)
        if (lastTab >= 0 && lastTab < newline) throw new Error('click segment: malformed line')
        this.row(bytes, line, tabs, newline, out)
        rows++
        line = newline + 1
      }
    } catch (error) {
      out.at = mark
      throw error
    }
    return rows
  }

  private row(bytes: Buffer, line: number, tabs: number[], newline: number, out: RowOutput): void {
    // click id … alias with their tabs, as the log holds them (escaped there already).
    const headEnd = tabs[3]! + 1
    const timestamp = this.timestamp(bytes, headEnd, tabs[4]!)
    const referrer = this.referrer(bytes, tabs[4]! + 1, tabs[5]!)
    const agent = this.agent(bytes, tabs[5]! + 1, tabs[6]!)
    const place = this.place(bytes, tabs[6]! + 1, tabs[8]!)
    const utm = this.utm(bytes, tabs[8]! + 1, newline)
    const size = headEnd - line + timestamp.length + referrer.text.length + agent.text.length + place.length + agent.columns.length + referrer.host.length + utm.length + 7
    const target = out.room(size)
    let at = out.at
    at += bytes.copy(target, at, line, headEnd)
    at += timestamp.copy(target, at)
    target[at++] = TAB
    at += referrer.text.copy(target, at)
    target[at++] = TAB
    at += agent.text.copy(target, at)
    target[at++] = TAB
    at += place.copy(target, at)
    target[at++] = TAB
    at += agent.columns.copy(target, at)
    target[at++] = TAB
    at += referrer.host.copy(target, at)
    target[at++] = TAB
    at += utm.copy(target, at)
    target[at++] = NEWLINE
    out.at = at
  }

  private timestamp(bytes: Buffer, start: number, end: number): Buffer {
    let ms = 0
    for (let i = start; i < end; i++) {
      const digit = bytes[i]! - 48
      if (digit < 0 || digit > 9) throw new Error('click segment: malformed time')
      ms = ms * 10 + digit
    }
    if (start === end) throw new Error('click segment: malformed time')
    if (ms !== this.lastAt) {
      this.lastAt = ms
      this.lastTimestamp = Buffer.from(this.encoder.timestamp(ms))
    }
    return this.lastTimestamp
  }

  private referrer(bytes: Buffer, start: number, end: number): Referrer {
    return memoised(this.referrers, bytes, start, end, this.newReferrer)
  }

  private agent(bytes: Buffer, start: number, end: number): Agent {
    return memoised(this.agents, bytes, start, end, this.newAgent)
  }

  /** [start, end) spans the address, a tab and the country header. */
  private place(bytes: Buffer, start: number, end: number): Buffer {
    return memoised(this.places, bytes, start, end, this.newPlace)
  }

  private utm(bytes: Buffer, start: number, end: number): Buffer {
    return memoised(this.utms, bytes, start, end, this.newUtm)
  }

  // What a memo computes for a value it has not seen, from the field's bytes.
  private readonly newReferrer = (bytes: Buffer, start: number, end: number): Referrer => {
    const { text, host } = this.encoder.referrer(field(bytes, start, end))
    return { text: Buffer.from(text), host: Buffer.from(host) }
  }

  private readonly newAgent = (bytes: Buffer, start: number, end: number): Agent => {
    const { text, columns } = this.encoder.userAgent(field(bytes, start, end))
    return { text: Buffer.from(text), columns: Buffer.from(columns) }
  }

  private readonly newPlace = (bytes: Buffer, start: number, end: number): Buffer => {
    const tab = bytes.indexOf(TAB, start)
    return Buffer.from(this.encoder.place(field(bytes, start, tab), field(bytes, tab + 1, end)))
  }

  private readonly newUtm = (bytes: Buffer, start: number, end: number): Buffer => Buffer.from(this.encoder.utm(field(bytes, start, end)))
}

/** The memo's value for the bytes [start, end) (keyed by them, one byte a character), computed once. */
function memoised<V>(memo: Map<string, V>, bytes: Buffer, start: number, end: number, compute: (bytes: Buffer, start: number, end: number) => V): V {
  const key = bytes.toString('latin1', start, end)
  let value = memo.get(key)
  if (value === undefined) {
    value = compute(bytes, start, end)
    if (memo.size >= MEMO_SIZE) memo.clear()
    memo.set(key, value)
  }
  return value
}

/** A field's value as the client sent it: UTF-8 decoded, unescaped. */
function field(bytes: Buffer, start: number, end: number): string {
  return tsvUnescape(bytes.toString('utf8', start, end))
}
