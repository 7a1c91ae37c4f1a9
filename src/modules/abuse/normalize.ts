// A destination as the blocklists compare it, so a respelling of a listed host or URL does not get around
// its entry. The WHATWG URL parser does most of it for http(s) URLs: it lower-cases the host, turns an
// IDN into punycode, decodes percent-escapes in the host, reads every IPv4 spelling (0x7f000001,
// 2130706433, 0177.0.0.1, 127.1) as dotted decimal, compresses IPv6 and removes dot segments (`.`, `..`
// and their `%2e` forms). What it leaves we do here: a trailing dot of the host (`evil.example.` is the
// same name), an IPv4-mapped IPv6 host (`[::ffff:7f00:1]` reaches 127.0.0.1), percent-escapes of
// unreserved characters in the path and query (`/%65vil` is `/evil`, RFC 3986 section 6.2.2.2) and the
// case of the other escapes' hex digits.
//
// List entries go through the same steps, so an entry and a destination meet in one spelling.
import { ipv6 } from '../../../core/ip'

/** What matching reads of a URL: its host and its path with the query. Scheme, port and fragment are not compared. */
export interface MatchKey {
  /** Lower-case, punycode, no trailing dot; an IPv6 address in brackets, compressed; IPv4 dotted decimal. */
  host: string
  /** The path and query (`/a/b?c`), dot segments removed, unreserved characters decoded. */
  path: string
}

/** The URL, or null when the text is not an absolute URL. */
export function parseUrl(text: string): URL | null {
  try {
    return new URL(text)
  } catch {
    return null
  }
}

/**
 * Whether the URL names a user (`https://paypal.com@evil.example/`, `https://a:b@x.example/`): such a
 * destination reads as one host to a person and goes to another, so the caller refuses it (400
 * INVALID_URL). A text that is not a URL has none (the caller refuses it for that).
 */
export function hasUserInfo(url: string | URL): boolean {
  const parsed = typeof url === 'string' ? parseUrl(url) : url
  return parsed !== null && (parsed.username !== '' || parsed.password !== '')
}

/** The host of a parsed URL as entries are keyed: trailing dots dropped, an IPv4-mapped IPv6 address as its IPv4 address. */
export function canonicalHost(hostname: string): string {
  let host = hostname
  while (host.endsWith('.')) host = host.slice(0, -1)
  if (host.startsWith('[::ffff:')) {
    const groups = ipv6(host.slice(1, -1))
    if (groups?.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
      return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`
    }
  }
  return host
}

/**
 * The match key of a parsed URL. For http(s) it is read from `href`, the serialisation the parser
 * already made (in Bun the `hostname` getter alone costs more than the lookup's hash probes): after the
 * scheme, the authority runs to the first `/` (a special URL always has a path, and an `@`, `/` or `:`
 * in user-info is percent-encoded), its host follows the last `@` and ends before a `:port` (an IPv6
 * host ends in `]`); path and query run to `#` (an empty query dropped, as `search` drops it). Other
 * schemes go through the getters.
 */
export function matchKey(url: URL): MatchKey {
  const href = url.href
  const from = href.startsWith('https://') ? 8 : href.startsWith('http://') ? 7 : -1
  if (from < 0) return { host: canonicalHost(url.hostname), path: decodeUnreserved(url.pathname + url.search) }
  const slash = href.indexOf('/', from)
  const hash = href.indexOf('#', slash)
  const at = href.lastIndexOf('@', slash)
  const hostStart = at >= from ? at + 1 : from
  let hostEnd = slash
  if (href.charCodeAt(hostStart) === 91) {
    hostEnd = href.indexOf(']', hostStart) + 1
  } else {
    const colon = href.indexOf(':', hostStart)
    if (colon >= 0 && colon < slash) hostEnd = colon
  }
  let pathEnd = hash < 0 ? href.length : hash
  if (href.charCodeAt(pathEnd - 1) === 63) pathEnd-- // an empty query: `search` is '' for it too
  return { host: canonicalHost(href.slice(hostStart, hostEnd)), path: decodeUnreserved(href.slice(slash, pathEnd)) }
}

/** An IP address as a host (dotted IPv4 or bracketed IPv6): matched exactly, never by its "parent domains". */
export function isIpHost(host: string): boolean {
  if (host.startsWith('[')) return true
  const last = host.charCodeAt(host.length - 1)
  return last >= 48 && last <= 57 // a domain's last label never is all digits: the URL parser would have read it as IPv4
}

const HEX = '0123456789ABCDEF'

/** The longest DNS name (RFC 1035: 255 octets on the wire, 253 characters written); a longer host is no entry. */
export const MAX_NAME_LENGTH = 253

/** A-Z a-z 0-9 - . _ ~ (RFC 3986 section 2.3). */
function isUnreserved(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 45 || code === 46 || code === 95 || code === 126
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48
  if (code >= 65 && code <= 70) return code - 55
  if (code >= 97 && code <= 102) return code - 87
  return -1
}

/** Percent-escapes of unreserved characters decoded, every other escape's hex upper-cased. */
export function decodeUnreserved(text: string): string {
  if (!text.includes('%')) return text
  let out = ''
  let from = 0
  for (let at = text.indexOf('%'); at >= 0; at = text.indexOf('%', at + 1)) {
    // Past the end charCodeAt is NaN, which is no hex digit: a cut-off escape stays as it is.
    const high = hexValue(text.charCodeAt(at + 1))
    const low = hexValue(text.charCodeAt(at + 2))
    if (high < 0 || low < 0) continue
    const code = high * 16 + low
    out += text.slice(from, at) + (isUnreserved(code) ? String.fromCharCode(code) : `%${HEX[high]}${HEX[low]}`)
    from = at + 3
    at += 2
  }
  return out + text.slice(from)
}

/**
 * Whether text[start, end) is a host name already in its canonical form: lower-case letters, digits, `-`
 * and `_` in non-empty dot-separated labels, the last label not a number (which the URL parser would
 * read as IPv4: digits, or 0x and hex). Most list lines are this, and skip the URL parser (and, read in
 * place, the making of a string: list-formats.ts).
 */
export function isPlainName(text: string, start = 0, end = text.length): boolean {
  if (end - start > MAX_NAME_LENGTH) return false
  let labelStart = start
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i)
    if (c === 46) {
      if (i === labelStart) return false
      labelStart = i + 1
    } else if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 95)) {
      return false
    }
  }
  if (labelStart === end) return false
  const hex = text.charCodeAt(labelStart) === 48 && text.charCodeAt(labelStart + 1) === 120
  for (let i = hex ? labelStart + 2 : labelStart; i < end; i++) {
    const c = text.charCodeAt(i)
    if (!((c >= 48 && c <= 57) || (hex && c >= 97 && c <= 102))) return true
  }
  return false
}

/**
 * A host as a list writes it (a name, an IDN, an IPv4 or IPv6 address, any case, a trailing dot) in
 * the spelling destinations are matched in, or null when it is not a host.
 */
export function listHost(text: string): string | null {
  let host = text.toLowerCase()
  while (host.endsWith('.')) host = host.slice(0, -1)
  if (host === '') return null
  if (isPlainName(host)) return host
  if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`
  const url = parseUrl(`http://${host}/`)
  // Anything that made the text more than a host (a port, a path, user-info) is not one.
  if (!url || url.host !== url.hostname || url.pathname !== '/' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') return null
  const canonical = canonicalHost(url.hostname)
  return canonical === '' || canonical.length > MAX_NAME_LENGTH ? null : canonical
}
