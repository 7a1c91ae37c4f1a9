// The two DNS messages the DoH check needs (RFC 1035 §4.1), in the wire format RFC 8484 carries: a
// query of one name and type, and of the answer only its response code and the addresses of its A and
// AAAA records. Names in an answer may be compressed (§4.1.4): they are skipped, never followed, so a
// pointer loop cannot hold the parser.

export const TYPE_A = 1
export const TYPE_AAAA = 28
const CLASS_IN = 1
/** Response codes read (RFC 1035 §4.1.1). */
export const NOERROR = 0
export const NXDOMAIN = 3

const HEADER_BYTES = 12
/** Recursion desired: the only flag of the query. */
const FLAG_RD = 0x0100
const FLAG_QR = 0x8000

export class DnsMessageError extends Error {}

/**
 * The query for `name` (a host name as the URL parser gives it: ASCII, punycode for IDN) and `type`.
 * Its id is 0, as RFC 8484 §4.1 asks, so equal queries are equal GET URLs that HTTP caches can share.
 */
export function dnsQuery(name: string, type: number): Uint8Array {
  const bare = name.replace(/\.$/, '')
  const labels = bare.split('.')
  if (bare.length > 253 || labels.some((label) => !/^[\x21-\x7e]{1,63}$/.test(label))) throw new DnsMessageError('not a host name DNS can carry')
  const question = labels.flatMap((label) => [label.length, ...Array.from(label, (c) => c.charCodeAt(0))])
  const message = new Uint8Array(HEADER_BYTES + question.length + 1 + 4)
  const view = new DataView(message.buffer)
  view.setUint16(2, FLAG_RD)
  view.setUint16(4, 1) // one question
  message.set(question, HEADER_BYTES)
  const end = HEADER_BYTES + question.length + 1 // the root label, 0
  view.setUint16(end, type)
  view.setUint16(end + 2, CLASS_IN)
  return message
}

export interface DnsAnswer {
  rcode: number
  /** The addresses of the A and AAAA records of the answer section, as text (IPv6 compressed). */
  addresses: string[]
}

/** The offset past the name at `offset`: its labels up to the root, or up to a compression pointer. */
function skipName(message: Uint8Array, offset: number): number {
  for (;;) {
    if (offset >= message.length) throw new DnsMessageError('a name runs past the message')
    const length = message[offset]!
    if (length === 0) return offset + 1
    if ((length & 0xc0) === 0xc0) return offset + 2
    if ((length & 0xc0) !== 0) throw new DnsMessageError('a label of an unknown kind')
    offset += 1 + length
  }
}

function ipv6Text(bytes: Uint8Array): string {
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16))
  // The URL parser writes an IPv6 address in its canonical compressed form (RFC 5952).
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1)
}

/** The response code and addresses of a DNS response; a message that is not one is a DnsMessageError. */
export function parseDnsAnswer(message: Uint8Array): DnsAnswer {
  if (message.length < HEADER_BYTES) throw new DnsMessageError('shorter than a DNS header')
  const view = new DataView(message.buffer, message.byteOffset, message.byteLength)
  const flags = view.getUint16(2)
  if ((flags & FLAG_QR) === 0) throw new DnsMessageError('a query, not a response')
  const questions = view.getUint16(4)
  const answers = view.getUint16(6)
  let offset = HEADER_BYTES
  for (let i = 0; i < questions; i++) offset = skipName(message, offset) + 4
  const addresses: string[] = []
  for (let i = 0; i < answers; i++) {
    offset = skipName(message, offset)
    if (offset + 10 > message.length) throw new DnsMessageError('a record runs past the message')
    const type = view.getUint16(offset)
    const dataLength = view.getUint16(offset + 8)
    const data = offset + 10
    if (data + dataLength > message.length) throw new DnsMessageError('a record runs past the message')
    if (type === TYPE_A && dataLength === 4) addresses.push(Array.from(message.subarray(data, data + 4)).join('.'))
    if (type === TYPE_AAAA && dataLength === 16) addresses.push(ipv6Text(message.subarray(data, data + 16)))
    offset = data + dataLength
  }
  return { rcode: flags & 0x000f, addresses }
}
