// What a URL's host names, as far as a destination or an outgoing request cares: an address of this
// machine (loopback, unspecified, link-local), a private or otherwise non-public address (RFC 6890's
// special-purpose ranges), or a public address or a DNS name. Works on the WHATWG URL parser's `hostname`, which has already turned every
// IPv4 spelling (127.1, 2130706433, 0x7f000001, 0177.0.0.1) into dotted decimal and put IPv6 in
// brackets in its compressed form ([::ffff:7f00:1] for ::ffff:127.0.0.1).

import { ipv4, ipv6 } from '../../core/ip'

export type HostKind = 'loopback' | 'unspecified' | 'link-local' | 'private' | 'public' | 'name'

function ipv4Kind([a, b, c]: number[]): HostKind {
  if (a === 127) return 'loopback'
  if (a === 0) return 'unspecified'
  if (a === 169 && b === 254) return 'link-local'
  if (a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168) || (a === 100 && b! >= 64 && b! <= 127)) return 'private'
  if (a! >= 224) return 'private' // multicast and reserved
  // The rest of RFC 6890's special-purpose registry: IETF protocol assignments (192.0.0/24), the three
  // documentation nets (192.0.2/24, 198.51.100/24, 203.0.113/24), the 6to4 relay anycast (192.88.99/24)
  // and benchmarking (198.18/15). Nothing public answers there; a resolver that returns one is lying.
  if (a === 192 && ((b === 0 && (c === 0 || c === 2)) || (b === 88 && c === 99))) return 'private'
  if ((a === 198 && (b === 18 || b === 19 || (b === 51 && c === 100))) || (a === 203 && b === 0 && c === 113)) return 'private'
  return 'public'
}

/** The kind of the IPv4 address in two 16-bit groups. */
const embeddedV4Kind = (high: number, low: number): HostKind => ipv4Kind([high >> 8, high & 0xff, low >> 8, low & 0xff])

function ipv6Kind(groups: number[]): HostKind {
  const zeroPrefix = groups.slice(0, 5).every((g) => g === 0)
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) addresses are their IPv4 address.
  if (zeroPrefix && (groups[5] === 0xffff || (groups[5] === 0 && (groups[6] !== 0 || groups[7]! > 1)))) {
    return embeddedV4Kind(groups[6]!, groups[7]!)
  }
  if (groups.slice(0, 7).every((g) => g === 0)) return groups[7] === 1 ? 'loopback' : groups[7] === 0 ? 'unspecified' : 'private'
  const first = groups[0]!
  if ((first & 0xffc0) === 0xfe80) return 'link-local'
  if ((first & 0xfe00) === 0xfc00 || (first & 0xff00) === 0xff00) return 'private' // unique local, multicast
  // Translated IPv4 (::ffff:0:a.b.c.d, RFC 6145), NAT64 (64:ff9b::/96, RFC 6052) and 6to4 (2002::/16)
  // reach their IPv4 address through a translator or relay: not this machine, and public only when
  // that address is.
  const translated = groups.slice(0, 4).every((g) => g === 0) && groups[4] === 0xffff && groups[5] === 0
  const nat64 = first === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)
  if (translated || nat64) return embeddedV4Kind(groups[6]!, groups[7]!) === 'public' ? 'public' : 'private'
  if (first === 0x2002) return embeddedV4Kind(groups[1]!, groups[2]!) === 'public' ? 'public' : 'private'
  // Global unicast is 2000::/3 (RFC 4291); inside it, 2001::/23 (IETF protocol assignments: Teredo,
  // benchmarking, ORCHID), 2001:db8::/32 and 3fff::/20 (documentation) are special-purpose.
  if ((first & 0xe000) !== 0x2000) return 'private'
  if ((first === 0x2001 && (groups[1]! < 0x200 || groups[1] === 0xdb8)) || (first === 0x3fff && groups[1]! < 0x1000)) return 'private'
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
