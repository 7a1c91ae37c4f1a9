// The network a client address belongs to, for limits that one person cannot dodge by changing address
// inside the block their provider gives them: an IPv4 /24 and an IPv6 /56 by default (a home or office
// line gets one IPv4 address or a /56 to /64 of IPv6; a /24 is the smallest block routed on its own).
import { ipv4, ipv6 } from '../../core/ip'

export interface NetworkPrefixes {
  v4: number
  v6: number
}

export const DEFAULT_NETWORK_PREFIXES: NetworkPrefixes = { v4: 24, v6: 56 }

/**
 * "198.51.100.0/24" or "2001:db8:aa00::/56" for an address; an IPv4-mapped IPv6 address is its IPv4
 * address. Anything that is not an address (an empty or unknown peer) is its own network.
 */
export function networkOf(address: string, prefixes: NetworkPrefixes = DEFAULT_NETWORK_PREFIXES): string {
  const bare = address
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '')
    .toLowerCase()
  const v4 = ipv4(bare)
  if (v4) return `${maskV4(v4, prefixes.v4)}/${prefixes.v4}`
  const v6 = bare.includes(':') ? ipv6(bare) : null
  if (!v6) return address
  if (v6.slice(0, 5).every((g) => g === 0) && v6[5] === 0xffff) {
    return `${maskV4([v6[6]! >> 8, v6[6]! & 0xff, v6[7]! >> 8, v6[7]! & 0xff], prefixes.v4)}/${prefixes.v4}`
  }
  const masked = v6.map((group, i) => group & groupMask(prefixes.v6 - i * 16))
  return `${compress(masked)}/${prefixes.v6}`
}

function maskV4(octets: number[], prefix: number): string {
  return octets.map((octet, i) => octet & (0xff << Math.max(0, 8 - Math.max(0, prefix - i * 8))) & 0xff).join('.')
}

/** The mask of a 16-bit group with `bits` of the prefix left in it (negative: none, over 16: all). */
function groupMask(bits: number): number {
  if (bits <= 0) return 0
  if (bits >= 16) return 0xffff
  return (0xffff << (16 - bits)) & 0xffff
}

/** RFC 5952's text form: the longest run of two or more zero groups as "::". */
function compress(groups: number[]): string {
  let best = { start: -1, length: 0 }
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > best.length) best = { start: i, length: j - i }
    i = j
  }
  const hex = groups.map((g) => g.toString(16))
  if (best.length < 2) return hex.join(':')
  return `${hex.slice(0, best.start).join(':')}::${hex.slice(best.start + best.length).join(':')}`
}
