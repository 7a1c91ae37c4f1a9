// Country of a client IP, for clicks that arrive without a trusted CDN country header. The ranges come
// from the npm package @ip-location-db/geo-whois-asn-country (package CC0; its data derives from the
// NRO's delegation statistics, CC BY 4.0: attribution to nro.net). Its CSVs are read as data files, once
// per process or worker, lazily, and kept as sorted typed arrays searched by bisection: IPv4 exactly;
// IPv6 by its first 64 bits (registry allocations are /64 or wider; the rare narrower geofeed range
// answers for its whole /64). About 7 MB of arrays (334k IPv4 + 216k IPv6 ranges in the 2026-06 data),
// loaded in about 0.3 s in slices that leave the event loop free.
import { readFile } from 'node:fs/promises'

const PACKAGE = '@ip-location-db/geo-whois-asn-country'
/** Lines parsed between yields to the event loop, so loading never stalls the thread it runs on. */
const PARSE_SLICE = 5_000

export interface IpCountryTable {
  v4Start: Uint32Array
  v4End: Uint32Array
  v4Country: Uint16Array
  v6Start: BigUint64Array
  v6End: BigUint64Array
  v6Country: Uint16Array
}

const EMPTY: IpCountryTable = {
  v4Start: new Uint32Array(0),
  v4End: new Uint32Array(0),
  v4Country: new Uint16Array(0),
  v6Start: new BigUint64Array(0),
  v6End: new BigUint64Array(0),
  v6Country: new Uint16Array(0),
}

let table: IpCountryTable | null = null
let loading: Promise<IpCountryTable> | null = null

/**
 * Loads the table once per thread; later calls share it. Never rejects: without the package (or with
 * a damaged file) lookups answer '' and clicks are stored without a country, as before.
 */
export function loadIpCountries(log?: (line: string) => void): Promise<IpCountryTable> {
  loading ??= load().then(
    (loaded) => (table = loaded),
    (error) => {
      log?.(`clicks: no IP-to-country data (${error instanceof Error ? error.message : error}); country only from the CDN header`)
      return (table = EMPTY)
    },
  )
  return loading
}

async function load(): Promise<IpCountryTable> {
  const file = (name: string) => Bun.resolveSync(`${PACKAGE}/${name}`, import.meta.dir)
  const [v4, v6] = await Promise.all([readFile(file('geo-whois-asn-country-ipv4-num.csv'), 'utf8'), readFile(file('geo-whois-asn-country-ipv6-num.csv'), 'utf8')])
  const four = await parseRanges(v4, (s) => Number(s), Uint32Array)
  const six = await parseRanges(v6, (s) => BigInt(s) >> 64n, BigUint64Array)
  return { v4Start: four.start, v4End: four.end, v4Country: four.country, v6Start: six.start, v6End: six.end, v6Country: six.country }
}

type Ranges<A> = { start: A; end: A; country: Uint16Array }

/** Parses "start,end,CC" lines (sorted, as shipped), merging neighbours of one country. */
async function parseRanges<T extends number | bigint, A extends Uint32Array | BigUint64Array>(text: string, parse: (s: string) => T, Typed: { new (n: number): A }): Promise<Ranges<A>> {
  let lines = 0
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++
  const start = new Typed(lines + 1)
  const end = new Typed(lines + 1)
  const country = new Uint16Array(lines + 1)
  let n = 0
  let at = 0
  for (let line = 0; at < text.length; line++) {
    // Scanned line by line rather than split whole, so no single step holds the thread for long.
    if (line % PARSE_SLICE === PARSE_SLICE - 1) await new Promise((resolve) => setImmediate(resolve))
    let eol = text.indexOf('\n', at)
    if (eol < 0) eol = text.length
    const comma1 = text.indexOf(',', at)
    const comma2 = comma1 < 0 ? -1 : text.indexOf(',', comma1 + 1)
    const lineStart = at
    at = eol + 1
    if (comma2 < 0 || comma2 > eol || eol - comma2 < 3) continue
    const code = (text.charCodeAt(comma2 + 1) << 8) | text.charCodeAt(comma2 + 2)
    const from = parse(text.slice(lineStart, comma1))
    const to = parse(text.slice(comma1 + 1, comma2))
    const last = n > 0 ? (end[n - 1] as T) : undefined
    const adjacent = last !== undefined && (typeof last === 'bigint' ? last + 1n >= (from as bigint) : (last as number) + 1 >= (from as number))
    if (adjacent && country[n - 1] === code) {
      if (to > (end[n - 1] as T)) end[n - 1] = to
      continue
    }
    start[n] = from
    end[n] = to
    country[n] = code
    n++
  }
  return { start: start.slice(0, n) as A, end: end.slice(0, n) as A, country: country.slice(0, n) }
}

// Private, loopback, link-local, CGNAT, multicast and reserved space has no country (the data maps a
// few such blocks, e.g. 192.168/16, to the registry that holds them). [first, last] as numbers.
const SPECIAL_V4: [number, number][] = [
  [0x00000000, 0x00ffffff],
  [0x0a000000, 0x0affffff],
  [0x64400000, 0x647fffff],
  [0x7f000000, 0x7fffffff],
  [0xa9fe0000, 0xa9feffff],
  [0xac100000, 0xac1fffff],
  [0xc0a80000, 0xc0a8ffff],
  [0xe0000000, 0xffffffff],
]

/** ISO 3166 alpha-2 of an IP, or '' when unknown, unparsable, or the table is not loaded yet. */
export function countryOfIp(ip: string): string {
  if (!table || ip === '') return ''
  if (ip.includes(':')) {
    const mapped = mappedIpv4Start(ip)
    const v4 = mapped < 0 ? -1 : ipv4Number(ip, mapped)
    if (v4 >= 0) return countryOfIpv4(table, v4)
    const high = ipv6High(ip)
    // Only global unicast (2000::/3) is allocated to countries; loopback, ULA and link-local are not.
    if (high === null || high >> 61n !== 1n) return ''
    return find(table.v6Start, table.v6End, table.v6Country, high)
  }
  const v4 = ipv4Number(ip)
  return v4 < 0 ? '' : countryOfIpv4(table, v4)
}

function countryOfIpv4(t: IpCountryTable, v4: number): string {
  for (const [first, last] of SPECIAL_V4) if (v4 >= first && v4 <= last) return ''
  return find(t.v4Start, t.v4End, t.v4Country, v4)
}

function find<T extends number | bigint>(starts: ArrayLike<T>, ends: ArrayLike<T>, countries: Uint16Array, key: T): string {
  let lo = 0
  let hi = starts.length - 1
  let at = -1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    if (starts[mid]! <= key) {
      at = mid
      lo = mid + 1
    } else {
      hi = mid - 1
    }
  }
  if (at < 0 || ends[at]! < key) return ''
  const code = countries[at]!
  return String.fromCharCode(code >> 8, code & 0xff)
}

/**
 * Where the dotted quad of an IPv4-mapped IPv6 address ("::ffff:" in either case, then the quad) starts:
 * 7, else -1. How a dual-stack server gives every IPv4 client: read in place, nothing sliced.
 */
export function mappedIpv4Start(ip: string): number {
  if (ip.length < 14 || ip.charCodeAt(0) !== 58 || ip.charCodeAt(1) !== 58 || ip.charCodeAt(6) !== 58) return -1
  for (let i = 2; i < 6; i++) if ((ip.charCodeAt(i) | 0x20) !== 102) return -1 // 'f' or 'F'
  return 7
}

/** Dotted quad to an unsigned 32-bit number, or -1: the whole of `ip`, or its rest from `from`. */
export function ipv4Number(ip: string, from = 0): number {
  let value = 0
  let part = 0
  let digits = 0
  let dots = 0
  for (let i = from; i < ip.length; i++) {
    const c = ip.charCodeAt(i)
    if (c === 46) {
      if (digits === 0 || ++dots > 3) return -1
      value = value * 256 + part
      part = 0
      digits = 0
    } else if (c >= 48 && c <= 57 && digits < 3) {
      part = part * 10 + (c - 48)
      digits++
      if (part > 255) return -1
    } else {
      return -1
    }
  }
  return dots === 3 && digits > 0 ? value * 256 + part : -1
}

/** The first 64 bits of an IPv6 address, or null when it is not one. */
export function ipv6High(ip: string): bigint | null {
  const zone = ip.indexOf('%')
  const text = zone >= 0 ? ip.slice(0, zone) : ip
  const halves = text.split('::')
  if (halves.length > 2) return null
  const head = halves[0] ? halves[0].split(':') : []
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : []
  // An embedded dotted quad counts as two groups; only the first four groups matter here.
  const tailGroups = tail.length + (tail.length > 0 && tail[tail.length - 1]!.includes('.') ? 1 : 0)
  if (halves.length === 1 ? head.length !== 8 : head.length + tailGroups > 7) return null
  const groups = halves.length === 2 ? [...head, ...Array<string>(8 - head.length - tailGroups).fill('0'), ...tail] : head
  let high = 0n
  for (let i = 0; i < 4; i++) {
    const group = groups[i]!
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null
    high = (high << 16n) | BigInt(parseInt(group, 16))
  }
  return high
}
