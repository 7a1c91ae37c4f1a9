// What a URL's host names, as far as a destination or an outgoing request cares: an address of this
// machine (loopback, unspecified, link-local), a private or otherwise non-public address, or a public
// address or a DNS name. Works on the WHATWG URL parser's `hostname`, which has already turned every
// IPv4 spelling (127.1, 2130706433, 0x7f000001, 0177.0.0.1) into dotted decimal and put IPv6 in
// brackets in its compressed form ([::ffff:7f00:1] for ::ffff:127.0.0.1).

export type HostKind = 'loopback' | 'unspecified' | 'link-local' | 'private' | 'public' | 'name'

/** The four octets of a dotted-decimal IPv4 address, or null. */
function ipv4(host: string): number[] | null {
  const parts = host.split('.')
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return null
  const octets = parts.map(Number)
  return octets.every((o) => o <= 255) ? octets : null
}

function ipv4Kind([a, b]: number[]): HostKind {
  if (a === 127) return 'loopback'
  if (a === 0) return 'unspecified'
  if (a === 169 && b === 254) return 'link-local'
  if (a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168) || (a === 100 && b! >= 64 && b! <= 127)) return 'private'
  if (a! >= 224) return 'private' // multicast and reserved
  return 'public'
}

/** The eight 16-bit groups of an IPv6 address (without brackets), or null. */
function ipv6(host: string): number[] | null {
  let text = host
  const tail: number[] = []
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const octets = ipv4(dotted[1]!)
    if (!octets) return null
    tail.push((octets[0]! << 8) | octets[1]!, (octets[2]! << 8) | octets[3]!)
    text = text.slice(0, -dotted[1]!.length)
    // "::ffff:" keeps its "::"; "1:2:3:4:5:6:" loses the colon that stood before the dotted part.
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1)
  }
  const halves = text.split('::')
  if (halves.length > 2) return null
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN)))
  const head = parse(halves[0]!)
  const rest = halves.length === 2 ? parse(halves[1]!) : []
  const known = head.length + rest.length + tail.length
  if (head.concat(rest).some(Number.isNaN) || known > 8 || (halves.length === 1 && known !== 8)) return null
  return [...head, ...new Array(8 - known).fill(0), ...rest, ...tail]
}

function ipv6Kind(groups: number[]): HostKind {
  const zeroPrefix = groups.slice(0, 5).every((g) => g === 0)
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) addresses are their IPv4 address.
  if (zeroPrefix && (groups[5] === 0xffff || (groups[5] === 0 && (groups[6] !== 0 || groups[7]! > 1)))) {
    return ipv4Kind([groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff])
  }
  if (groups.slice(0, 7).every((g) => g === 0)) return groups[7] === 1 ? 'loopback' : groups[7] === 0 ? 'unspecified' : 'private'
  const first = groups[0]!
  if ((first & 0xffc0) === 0xfe80) return 'link-local'
  if ((first & 0xfe00) === 0xfc00 || (first & 0xff00) === 0xff00) return 'private' // unique local, multicast
  return 'public'
}

/** The kind of a URL hostname (lower-case; IPv6 with or without brackets). */
export function hostKind(hostname: string): HostKind {
  const host = hostname.toLowerCase().replace(/\.+$/, '')
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback' // RFC 6761: always this machine
  const v4 = ipv4(host)
  if (v4) return ipv4Kind(v4)
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  if (bare.includes(':')) {
    const v6 = ipv6(bare.replace(/%.*$/, ''))
    return v6 ? ipv6Kind(v6) : 'private'
  }
  return 'name'
}

/** Loopback, unspecified or link-local: a URL with such a host leads back to the machine that follows it. */
export function isThisMachine(hostname: string): boolean {
  const kind = hostKind(hostname)
  return kind === 'loopback' || kind === 'unspecified' || kind === 'link-local'
}
