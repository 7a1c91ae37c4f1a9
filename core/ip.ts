// IP address text as numbers, for the checks both the API and the redirector make (a destination's host,
// a client's network, a routing rule's CIDR block). Dotted-decimal IPv4 only: the URL parser has already
// turned other spellings (127.1, 0x7f000001) into it, and a client address arrives in it.

/** The four octets of a dotted-decimal IPv4 address, or null. */
export function ipv4(host: string): number[] | null {
  const parts = host.split('.')
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return null
  const octets = parts.map(Number)
  return octets.every((o) => o <= 255) ? octets : null
}

/** The eight 16-bit groups of an IPv6 address (without brackets), or null. */
export function ipv6(host: string): number[] | null {
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
