// The formats a block list comes in, recognised from its lines (a file's name or a response's type says
// nothing reliable):
//
//   hosts       a host per line: `evil.example`, `xn--bcher-kva.example`, `203.0.113.7`, `2001:db8::7`
//   hosts-file  an address and one or more hosts a line: `0.0.0.0 evil.example other.example`
//               (`localhost`, `broadcasthost`, `ip6-…` and the like, which every hosts file has, are not entries)
//   urls        a URL or URL prefix per line: `https://evil.example/phish/`, `evil.example/phish/`
//               (a bare host among them is a host entry)
//   csv         a header naming a `url` column, then rows; the header may sit in a `#` comment line, as
//               in URLhaus's dump, whose banner is comments and whose fields are quoted
//
// In every format `#` starts a comment (at the start of a line, or after a space: a URL's fragment is
// no comment), blank lines are skipped, CRLF and a leading BOM are accepted. The first SNIFF_LINES
// lines that are not comments decide the format: the one in which most of them parse, if at least half
// do; otherwise the list is refused (an HTML error page is no list). Then every line is read in that
// format, and a line that does not fit it is skipped and counted.
//
// Entries: a host matches itself and its subdomains; an IP address matches that address; a URL prefix
// matches the URLs of that exact host whose path and query start with it (scheme and port aside).
import { isIP } from 'node:net'
import { isPlainName, listHost, matchKey, parseUrl } from './normalize'
import { Slices } from './slices'

export type ListFormat = 'hosts' | 'hosts-file' | 'urls' | 'csv'

/** Where the entries of a list go. */
export interface ListSink {
  host(host: string): void
  /** A host entry read in place: text[start, end) is a canonical name (isPlainName). Without it, host(). */
  hostAt?(text: string, start: number, end: number): void
  prefix(host: string, path: string): void
}

export interface ParseSummary {
  format: ListFormat
  /** Lines that were not comments or blank. */
  lines: number
  /** Those that did not fit the format (or named no valid host or URL). */
  skipped: number
  /** Line number (from 1) of the first skipped line, for the operator's log. */
  firstSkipped: number | undefined
}

export class ListFormatError extends Error {}

/** Enough lines to tell the formats apart, few enough that a list starts loading at once. */
const SNIFF_LINES = 100

/** Names every hosts file maps to itself: not block entries. */
const HOSTS_FILE_OWN_NAMES = new Set(['localhost', 'localhost.localdomain', 'local', 'broadcasthost', '0.0.0.0'])

type Entry = { host: string; path?: string }

/** A host entry, or a URL prefix entry for anything with a `/` (with or without a scheme); null when neither. */
export function entryOf(token: string): Entry | null {
  if (!token.includes('/')) {
    const host = listHost(token)
    return host === null ? null : { host }
  }
  const url = parseUrl(token.includes('://') ? token : `http://${token}`)
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return null
  const key = matchKey(url)
  return key.host === '' ? null : { host: key.host, path: key.path }
}

/** The text before a comment: `#` at the start or after whitespace. */
function withoutComment(line: string): string {
  if (line.startsWith('#')) return ''
  const at = line.search(/\s#/)
  return at < 0 ? line : line.slice(0, at)
}

/** The fields of one CSV line (RFC 4180 quoting, on one line), or null when its quotes do not close. */
export function csvFields(line: string): string[] | null {
  const fields: string[] = []
  let at = 0
  for (;;) {
    if (line.charCodeAt(at) === 34) {
      let value = ''
      let from = at + 1
      for (;;) {
        const quote = line.indexOf('"', from)
        if (quote < 0) return null
        value += line.slice(from, quote)
        if (line.charCodeAt(quote + 1) !== 34) {
          at = quote + 1
          break
        }
        value += '"'
        from = quote + 2
      }
      fields.push(value)
      if (at >= line.length) return fields
      if (line.charCodeAt(at) !== 44) return null
      at++
    } else {
      const comma = line.indexOf(',', at)
      fields.push(line.slice(at, comma < 0 ? line.length : comma).trim())
      if (comma < 0) return fields
      at = comma + 1
    }
  }
}

/** The index of the `url` column if `text` is a CSV header with one (and at least one other column). */
function urlColumn(text: string): number {
  const fields = csvFields(text.trim())
  if (!fields || fields.length < 2) return -1
  return fields.findIndex((field) => field.trim().toLowerCase() === 'url')
}

/** Reads one line (without its comment) in a format: the entries it holds, or null when it does not fit. */
function readLine(format: ListFormat, line: string, urlIndex: number): Entry[] | null {
  if (format === 'csv') {
    const fields = csvFields(line)
    const value = fields?.[urlIndex]?.trim()
    const entry = value ? entryOf(value) : null
    return entry ? [entry] : null
  }
  const tokens = line.split(/\s+/)
  if (format === 'hosts-file') {
    const address = tokens[0]!.replace(/%.*$/, '')
    if (tokens.length < 2 || isIP(address) === 0) return null
    const entries: Entry[] = []
    for (const name of tokens.slice(1)) {
      const lower = name.toLowerCase()
      if (HOSTS_FILE_OWN_NAMES.has(lower) || lower.startsWith('ip6-')) continue
      const host = listHost(name)
      if (host === null) return null
      entries.push({ host })
    }
    return entries
  }
  if (tokens.length !== 1) return null
  const entry = entryOf(tokens[0]!)
  return entry ? [entry] : null
}

/**
 * Parses a list given in pieces of text (a file or a response body as it streams), writing its entries
 * to `sink`. Long work yields to the event loop (slices.ts).
 */
export class ListParser {
  private pending = ''
  private lineNumber = 0
  /** Lines (numbered) held until the format is known. */
  private sample: [number, string][] = []
  /** The `url` column of the last comment line that was a CSV header, before any data line. */
  private commentHeader = -1
  /** The `url` column of a CSV header that was the first data line. */
  private firstLineHeader = -1
  private format: ListFormat | undefined
  private urlIndex = -1
  private lines = 0
  private skipped = 0
  private firstSkipped: number | undefined
  private readonly slices: Slices

  constructor(
    private readonly sink: ListSink,
    slices?: Slices,
  ) {
    this.slices = slices ?? new Slices()
  }

  async push(text: string): Promise<void> {
    const chunk = this.pending + text
    const end = chunk.lastIndexOf('\n') + 1
    this.pending = chunk.slice(end)
    await this.slices.run(end, (from) => this.readLines(chunk, from, end))
  }

  async end(): Promise<ParseSummary> {
    if (this.pending !== '') this.line(this.pending)
    this.pending = ''
    if (this.format === undefined) this.decide()
    return { format: this.format!, lines: this.lines, skipped: this.skipped, firstSkipped: this.firstSkipped }
  }

  /**
   * The whole lines of chunk[from, end) until the slice is used up; returns where it stopped. A line of a
   * host or URL list that is a canonical host name (most lines of a large list) goes to the sink in
   * place, without a string made for it: a million of those would be a million objects for the
   * collector to sweep while requests wait.
   */
  private readLines(chunk: string, from: number, end: number): number {
    const canTakeRanges = this.sink.hostAt !== undefined
    let inPlace = canTakeRanges && (this.format === 'hosts' || this.format === 'urls')
    for (let at = from; at < end; ) {
      if (this.slices.due()) return at
      const eol = chunk.indexOf('\n', at)
      const lineEnd = chunk.charCodeAt(eol - 1) === 13 ? eol - 1 : eol
      if (inPlace && lineEnd > at && isPlainName(chunk, at, lineEnd)) {
        this.lineNumber++
        this.lines++
        this.sink.hostAt!(chunk, at, lineEnd)
      } else {
        this.line(chunk.slice(at, eol))
        // The format may have been decided on this line.
        inPlace = canTakeRanges && (this.format === 'hosts' || this.format === 'urls')
      }
      at = eol + 1
    }
    return end
  }

  private line(raw: string): void {
    const number = ++this.lineNumber
    let line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (number === 1 && line.charCodeAt(0) === 0xfeff) line = line.slice(1)
    line = line.trim()
    if (this.format !== undefined) {
      this.read(number, line)
      return
    }
    if (line.startsWith('#')) {
      // A CSV header inside a comment (URLhaus), before the first data line.
      if (this.sample.length === 0) {
        const column = urlColumn(line.replace(/^#+/, ''))
        if (column >= 0) this.commentHeader = column
      }
      return
    }
    if (withoutComment(line).trim() === '') return
    if (this.sample.length === 0 && this.firstLineHeader < 0) {
      const column = urlColumn(line)
      if (column >= 0) {
        this.firstLineHeader = column
        return
      }
    }
    this.sample.push([number, line])
    if (this.sample.length >= SNIFF_LINES) this.decide()
  }

  /** Picks the format the sample parses best in, then reads the sample in it. */
  private decide(): void {
    const header = this.firstLineHeader >= 0 ? this.firstLineHeader : this.commentHeader
    const candidates: [ListFormat, number][] =
      header >= 0
        ? [
            ['csv', header],
            ['hosts-file', -1],
            ['urls', -1],
          ]
        : [
            ['hosts-file', -1],
            ['urls', -1],
          ]
    const lines = this.sample.map(([, line]) => line)
    let best: [ListFormat, number] = ['urls', -1]
    let bestCount = 0
    for (const [format, column] of candidates) {
      const count = lines.filter((line) => readLine(format, format === 'csv' ? line : withoutComment(line).trim(), column) !== null).length
      if (count > bestCount) [best, bestCount] = [[format, column], count]
    }
    if (bestCount * 2 < lines.length) {
      throw new ListFormatError(`not a list of hosts, hosts-file lines, URLs or a CSV with a url column (${bestCount} of the first ${lines.length} lines parse as any one of them)`)
    }
    this.urlIndex = best[1]
    // Host lines and URL lines are read alike; a list without any URL in its first lines (or without
    // any line) is called a host list.
    this.format = best[0] === 'urls' && !lines.some((line) => withoutComment(line).includes('/')) ? 'hosts' : best[0]
    for (const [number, line] of this.sample) this.read(number, line)
    this.sample = []
  }

  private read(number: number, line: string): void {
    const text = this.format === 'csv' ? line : withoutComment(line).trim()
    if (text === '' || text.startsWith('#')) return
    this.lines++
    const entries = readLine(this.format === 'hosts' ? 'urls' : this.format!, text, this.urlIndex)
    if (entries === null) {
      this.skipped++
      this.firstSkipped ??= number
      return
    }
    for (const entry of entries) {
      if (entry.path === undefined) this.sink.host(entry.host)
      else this.sink.prefix(entry.host, entry.path)
    }
  }
}
