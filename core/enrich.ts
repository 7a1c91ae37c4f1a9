// What a click row learns from the request beyond what the hot path captured: device, browser and OS
// from the user agent, whether it is a bot (and why), the referrer's host, and the UTM parameters of
// the destination at click time. All of it runs in the ClickEncoder, i.e. when a frozen batch is
// encoded, never on the response path. Country by IP lives in enrich-geo.ts.
import { isbotMatch } from 'isbot'
import { UAParser } from 'ua-parser-js'

export type DeviceType = 'desktop' | 'mobile' | 'tablet' | 'bot' | 'other'

export interface UserAgentInfo {
  deviceType: DeviceType
  browser: string
  os: string
  isBot: boolean
  /** What marked it a bot: the matched token (lowercased) or 'empty-user-agent'; '' for people. */
  botReason: string
}

// Bots are recognised by isbot (Unlicense: a public-domain dedication), the maintained pattern list
// most link services use. The stored bot_reason is the product token around what it matched, so a
// misfire is visible in the data.
const DESKTOP_OS = new Set([
  'Windows',
  'Mac OS',
  'macOS',
  'Linux',
  'Ubuntu',
  'Debian',
  'Fedora',
  'Chromium OS',
  'FreeBSD',
  'OpenBSD',
  'NetBSD',
  'Solaris',
  'Mint',
  'Arch',
  'Gentoo',
  'SUSE',
  'Red Hat',
  'CentOS',
])

/**
 * Classifies one user agent (not memoised; the encoder keeps a memo in front of this, keyed by
 * userAgentKey). A bot is not parsed further: its browser and OS stay empty (device_type says 'bot').
 * About 30-50 µs for a user agent never seen before, nearly all of it ua-parser-js's regexes.
 */
export function classifyUserAgent(userAgent: string): UserAgentInfo {
  if (userAgent.trim() === '') return { deviceType: 'bot', browser: '', os: '', isBot: true, botReason: 'empty-user-agent' }
  const matched = isbotMatch(userAgent)
  if (matched !== null) {
    const at = userAgent.indexOf(matched)
    // The product name only: "curl/8.4.0" → "curl".
    const reason = tokenAround(userAgent, Math.max(at, 0), matched.length).split(/[/ ]/)[0]!
    return { deviceType: 'bot', browser: '', os: '', isBot: true, botReason: reason }
  }
  // Only what is stored: engine and CPU are never computed.
  const parser = new UAParser(userAgent)
  const browser = parser.getBrowser().name ?? ''
  const os = parser.getOS().name ?? ''
  const type = parser.getDevice().type
  const deviceType: DeviceType = type === 'mobile' ? 'mobile' : type === 'tablet' ? 'tablet' : type === undefined && DESKTOP_OS.has(os) ? 'desktop' : 'other'
  return { deviceType, browser, os, isBot: false, botReason: '' }
}

/**
 * The memo key of a user agent: dotted version numbers collapsed ("Chrome/120.0.6099.71" → "Chrome/#"),
 * since only names and device types are stored and no rule of the parser decides those by a dotted
 * version. Browsers update every few weeks, so this keeps the memo small and its hit rate high.
 */
export function userAgentKey(userAgent: string): string {
  return userAgent.replace(DOTTED_VERSION, '#')
}
const DOTTED_VERSION = /\d+(?:[._]\d+)+/g

const TOKEN_CHAR = /[A-Za-z0-9_.-]/

/** The product token a bot pattern matched inside ("Googlebot/2.1" → "googlebot"), lowercased, at most 64 chars. */
function tokenAround(userAgent: string, index: number, length: number): string {
  let start = index
  let end = index + length
  // A pattern may end in its separator ("curl/"): the version after it is not part of the name.
  while (end > index + 1 && '/_-'.includes(userAgent[end - 1]!)) end--
  while (start > 0 && TOKEN_CHAR.test(userAgent[start - 1]!)) start--
  while (end < userAgent.length && TOKEN_CHAR.test(userAgent[end]!)) end++
  const token = userAgent.slice(start, end).replace(/[/_-]+$/, '')
  return (token || userAgent.slice(index, index + length)).toLowerCase().slice(0, 64)
}

/**
 * Host of an http(s) referrer, lowercased, without port or credentials; '' when absent or not a URL.
 * Hand-parsed: a URL object per row would be most of the encoder's cost.
 */
export function referrerHost(referrer: string): string {
  const scheme = referrer.indexOf('://')
  if (scheme < 4 || scheme > 5) return ''
  const protocol = referrer.slice(0, scheme).toLowerCase()
  if (protocol !== 'http' && protocol !== 'https') return ''
  let end = referrer.length
  for (let i = scheme + 3; i < referrer.length; i++) {
    const c = referrer.charCodeAt(i)
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */ || c === 92 /* \ */) {
      end = i
      break
    }
  }
  let authority = referrer.slice(scheme + 3, end)
  const at = authority.lastIndexOf('@')
  if (at >= 0) authority = authority.slice(at + 1)
  let host: string
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']')
    if (close < 0) return ''
    host = authority.slice(0, close + 1)
  } else {
    const colon = authority.indexOf(':')
    host = colon >= 0 ? authority.slice(0, colon) : authority
  }
  host = host.toLowerCase()
  if (host.endsWith('.')) host = host.slice(0, -1)
  // Hostname characters only (IDNs arrive punycoded from browsers); anything else is not a referrer.
  return host.length > 0 && host.length <= 253 && /^(?:[a-z0-9_.-]+|\[[0-9a-f:.]+\])$/.test(host) ? host : ''
}

export interface UtmSnapshot {
  source: string
  medium: string
  campaign: string
  term: string
  content: string
}

export const NO_UTM: UtmSnapshot = Object.freeze({ source: '', medium: '', campaign: '', term: '', content: '' })

/** Bound on one stored UTM value: destinations are validated by the API, but a query can be long. */
const MAX_UTM = 256

/** The utm_* parameters of a destination URL as they are now (a later edit of the link leaves stored rows alone). */
export function utmSnapshot(url: string): UtmSnapshot {
  const hash = url.indexOf('#')
  const query = url.indexOf('?')
  if (query < 0 || (hash >= 0 && hash < query) || !url.includes('utm_', query)) return NO_UTM
  let params: URLSearchParams
  try {
    params = new URLSearchParams(url.slice(query + 1, hash < 0 ? undefined : hash))
  } catch {
    return NO_UTM
  }
  const get = (name: string) => (params.get(name) ?? '').slice(0, MAX_UTM)
  return { source: get('utm_source'), medium: get('utm_medium'), campaign: get('utm_campaign'), term: get('utm_term'), content: get('utm_content') }
}

/**
 * A bounded memo: cleared whole when full, which is cheap and, for values that repeat heavily (user
 * agents, destinations), loses little.
 */
export class Memo<V> {
  private readonly map = new Map<string, V>()
  constructor(
    private readonly limit: number,
    private readonly compute: (key: string) => V,
  ) {}

  get(key: string): V {
    let value = this.map.get(key)
    if (value === undefined) {
      value = this.compute(key)
      if (this.map.size >= this.limit) this.map.clear()
      this.map.set(key, value)
    }
    return value
  }
}
