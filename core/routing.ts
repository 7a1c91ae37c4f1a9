// Which destination a visitor of a routed link gets: the first rule whose conditions all match, else a
// running A/B test's variant for this visitor, else the link's own URL (docs/routing.md). The API
// validates a link's routing and writes it into the cached record in the short form below; the
// redirector compiles it once per record and asks it on every redirect.
//
// What a condition needs of the request is worked out only when a rule asks for it: the User-Agent is
// classified for `device`, the address looked up for `country`, Accept-Language parsed for `language`,
// the query parsed for `query`. No value a user wrote is ever compiled as a regular expression.
import { ipv4Number } from './enrich-geo'
import { ipv6 } from './ip'

export const DEVICES = ['ios', 'android', 'mobile', 'desktop', 'windows', 'macos', 'linux', 'chromeos'] as const
export type Device = (typeof DEVICES)[number]

/** A rule as the cached record carries it: conditions under short keys, each absent when not used. */
export interface CachedRule {
  id: string
  url: string
  device?: Device[]
  country?: string[]
  /** Lower-case language tags. */
  language?: string[]
  /** [name, value] pairs; a null value: the parameter is present with any value. */
  query?: [string, string | null][]
  /** CIDR blocks (a bare address is one address). */
  ip?: string[]
  /** Unix milliseconds: the click's time is at or after it. */
  after?: number
  /** Unix milliseconds: the click's time is before it. */
  before?: number
}

/** A running A/B test as the cached record carries it; a completed test is not carried. */
export interface CachedAb {
  variants: { id: string; url: string; weight: number }[]
  /** The same visitor gets the same variant (default); false: a weighted random pick per click. */
  sticky: boolean
}

export interface CachedRouting {
  rules?: CachedRule[]
  ab?: CachedAb
}

/** What a request offers to the conditions, each worked out on first use. */
export interface VisitorFacts {
  userAgent(): string
  /** ISO 3166-1 alpha-2, upper case, or '' when unknown. */
  country(): string
  acceptLanguage(): string
  /** The short URL's query string, without the "?". */
  query(): string
  ip(): string
}

export interface RoutePick {
  /** What the click records: `rule:<id>`, `ab:<id>`. */
  route: string
  url: string
}

interface Cidr {
  v4: boolean
  /** The address as 32-bit words (1 for IPv4, 4 for IPv6) and the prefix length. */
  words: number[]
  bits: number
}

interface CompiledRule {
  route: string
  url: string
  device?: Set<Device>
  country?: Set<string>
  /** Language conditions: a bare primary tag matches its subtags, a tag with a region only itself. */
  primary?: Set<string>
  exact?: Set<string>
  query?: [string, string | null][]
  ip?: Cidr[]
  after?: number
  before?: number
}

export interface CompiledRouting {
  rules: CompiledRule[]
  ab?: { routes: string[]; urls: string[]; /** Cumulative weights out of 100. */ upTo: number[]; sticky: boolean }
  /** Whether any rule asks for the country (the redirector then loads the IP-to-country table). */
  usesCountry: boolean
}

export function compileRouting(routing: CachedRouting): CompiledRouting {
  const rules = (routing.rules ?? []).map(compileRule)
  let ab: CompiledRouting['ab']
  if (routing.ab && routing.ab.variants.length > 0) {
    let total = 0
    ab = { routes: [], urls: [], upTo: [], sticky: routing.ab.sticky }
    for (const variant of routing.ab.variants) {
      total += variant.weight
      ab.routes.push(`ab:${variant.id}`)
      ab.urls.push(variant.url)
      ab.upTo.push(total)
    }
  }
  return { rules, ab, usesCountry: rules.some((rule) => rule.country !== undefined) }
}

/**
 * Every field set, undefined where the rule has no such condition: all compiled rules then share one
 * object shape, so the matcher's property reads stay monomorphic however the rules differ.
 */
function compileRule(rule: CachedRule): CompiledRule {
  let primary: Set<string> | undefined
  let exact: Set<string> | undefined
  if (rule.language) {
    primary = new Set()
    exact = new Set()
    for (const tag of rule.language.map((l) => l.toLowerCase())) (tag.includes('-') ? exact : primary).add(tag)
  }
  return {
    route: `rule:${rule.id}`,
    url: rule.url,
    device: rule.device && new Set(rule.device),
    country: rule.country && new Set(rule.country.map((c) => c.toUpperCase())),
    primary,
    exact,
    query: rule.query,
    ip: rule.ip?.map(parseCidr).filter((cidr): cidr is Cidr => cidr !== null),
    after: rule.after,
    before: rule.before,
  }
}

/**
 * The destination for this visitor at `now`, or null for the link's own URL. `bucket` gives the
 * sticky visitor's place in [0, 100) (keyed hash of address and User-Agent: the redirector's).
 */
export function pickRoute(routing: CompiledRouting, visitor: VisitorFacts, now: number, bucket: () => number): RoutePick | null {
  const facts = new LazyFacts(visitor)
  for (const rule of routing.rules) {
    if (matches(rule, facts, now)) return { route: rule.route, url: rule.url }
  }
  const ab = routing.ab
  if (!ab) return null
  const place = ab.sticky ? bucket() : Math.random() * 100
  for (let i = 0; i < ab.upTo.length; i++) {
    if (place < ab.upTo[i]!) return { route: ab.routes[i]!, url: ab.urls[i]! }
  }
  return { route: ab.routes[ab.routes.length - 1]!, url: ab.urls[ab.urls.length - 1]! }
}

/** Each fact computed once per request, and only when a rule asks for it. */
class LazyFacts {
  private devices?: Set<Device>
  private languages?: { tag: string; primary: string }[]
  private params?: URLSearchParams | null
  private address?: Cidr | null
  private countryCode?: string

  constructor(readonly visitor: VisitorFacts) {}

  device(): Set<Device> {
    return (this.devices ??= devicesOf(this.visitor.userAgent()))
  }

  country(): string {
    return (this.countryCode ??= this.visitor.country().toUpperCase())
  }

  language(): { tag: string; primary: string }[] {
    return (this.languages ??= acceptedLanguages(this.visitor.acceptLanguage()))
  }

  /** Null for an empty query: no parameter is present, so no query condition holds. */
  query(): URLSearchParams | null {
    if (this.params === undefined) {
      const query = this.visitor.query()
      this.params = query === '' ? null : new URLSearchParams(query)
    }
    return this.params
  }

  ip(): Cidr | null {
    if (this.address === undefined) this.address = parseAddress(this.visitor.ip())
    return this.address
  }
}

// Plain loops and no callbacks from here on: this runs for every rule of every routed redirect.
function matches(rule: CompiledRule, facts: LazyFacts, now: number): boolean {
  if (rule.after !== undefined && now < rule.after) return false
  if (rule.before !== undefined && now >= rule.before) return false
  if (rule.device !== undefined && !someOf(rule.device, facts.device())) return false
  if (rule.country !== undefined && !rule.country.has(facts.country())) return false
  if (rule.primary !== undefined && !languageMatches(rule.primary, rule.exact!, facts.language())) return false
  if (rule.query !== undefined && !queryMatches(rule.query, facts.query())) return false
  if (rule.ip !== undefined && !inSomeBlock(facts.ip(), rule.ip)) return false
  return true
}

function someOf<T>(wanted: Set<T>, have: Set<T>): boolean {
  for (const value of have) if (wanted.has(value)) return true
  return false
}

function languageMatches(primary: Set<string>, exact: Set<string>, accepted: { tag: string; primary: string }[]): boolean {
  for (let i = 0; i < accepted.length; i++) {
    if (primary.has(accepted[i]!.primary) || exact.has(accepted[i]!.tag)) return true
  }
  return false
}

/** Every [name, value] present (a null value: present with any value). */
function queryMatches(wanted: [string, string | null][], params: URLSearchParams | null): boolean {
  if (params === null) return wanted.length === 0
  for (let i = 0; i < wanted.length; i++) {
    const [name, value] = wanted[i]!
    if (value === null ? !params.has(name) : !params.getAll(name).includes(value)) return false
  }
  return true
}

function inSomeBlock(address: Cidr | null, blocks: Cidr[]): boolean {
  if (address === null) return false
  for (let i = 0; i < blocks.length; i++) if (inBlock(address, blocks[i]!)) return true
  return false
}

// ---------------------------------------------------------------------------------------------------
// Devices from the User-Agent: substring tests on the product tokens every browser sends, memoised per
// User-Agent (a site's traffic repeats a few thousand of them).

const DEVICE_MEMO_SIZE = 4_096
const deviceMemo = new Map<string, Set<Device>>()

/** The devices a User-Agent belongs to: a platform (ios, android, windows, macos, linux, chromeos) and its kind (mobile or desktop). */
export function devicesOf(userAgent: string): Set<Device> {
  let devices = deviceMemo.get(userAgent)
  if (devices === undefined) {
    devices = classify(userAgent)
    if (deviceMemo.size >= DEVICE_MEMO_SIZE) deviceMemo.clear()
    deviceMemo.set(userAgent, devices)
  }
  return devices
}

const IOS = /\b(iPhone|iPad|iPod)\b/
const ANDROID = /\bAndroid\b/
const OTHER_MOBILE = /\b(Mobile|Tablet|Windows Phone|IEMobile|BlackBerry|BB10|Opera Mini|Kindle|Silk|webOS)\b/
const CHROMEOS = /\bCrOS\b/
const WINDOWS = /\bWindows\b/
const MACOS = /\bMacintosh\b|\bMac OS X\b/
const LINUX = /\bLinux\b|\bX11\b/

function classify(userAgent: string): Set<Device> {
  const devices = new Set<Device>()
  const ios = IOS.test(userAgent)
  const android = !ios && ANDROID.test(userAgent)
  if (ios) devices.add('ios')
  if (android) devices.add('android')
  const mobile = ios || android || OTHER_MOBILE.test(userAgent)
  if (mobile) {
    devices.add('mobile')
    return devices
  }
  if (CHROMEOS.test(userAgent)) devices.add('chromeos')
  else if (WINDOWS.test(userAgent)) devices.add('windows')
  else if (MACOS.test(userAgent)) devices.add('macos')
  else if (LINUX.test(userAgent)) devices.add('linux')
  if (devices.size > 0) devices.add('desktop')
  return devices
}

// ---------------------------------------------------------------------------------------------------
// Accept-Language (RFC 9110 12.5.4): tags with a q-value above zero; "*" names no language.

export function acceptedLanguages(header: string): { tag: string; primary: string }[] {
  const accepted: { tag: string; primary: string }[] = []
  if (header === '') return accepted
  for (const part of header.split(',', 50)) {
    const [rawTag, ...params] = part.split(';')
    const tag = rawTag!.trim().toLowerCase()
    if (tag === '' || tag === '*') continue
    let q = 1
    for (const param of params) {
      const [key, value] = param.split('=')
      if (key?.trim().toLowerCase() === 'q') q = Number(value?.trim())
    }
    if (!(q > 0)) continue
    const dash = tag.indexOf('-')
    accepted.push({ tag, primary: dash < 0 ? tag : tag.slice(0, dash) })
  }
  return accepted
}

// ---------------------------------------------------------------------------------------------------
// Addresses and CIDR blocks as 32-bit words; an IPv4-mapped IPv6 address (::ffff:a.b.c.d) is its IPv4
// address, on either side.

/** A block "address/bits" (a bare address: all its bits), or null when it is not one. */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf('/')
  const address = parseAddress(slash < 0 ? text : text.slice(0, slash))
  if (address === null) return null
  if (slash < 0) return address
  const raw = text.slice(slash + 1)
  if (!/^\d{1,3}$/.test(raw)) return null
  let bits = Number(raw)
  // A mapped block written in IPv6 (::ffff:10.0.0.0/104) is the IPv4 block of its last 32 bits.
  if (address.v4 && text.slice(0, slash).includes(':')) bits -= 96
  if (bits < 0 || bits > address.bits) return null
  return { ...address, bits }
}

/** An address as a block of all its bits, or null. */
function parseAddress(text: string): Cidr | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text
  // Every routed redirect with an ip rule parses its client's address: IPv4 without split or regular
  // expressions, and a dual-stack socket's ::ffff:a.b.c.d as the IPv4 address it is (the general IPv6
  // parse below costs several times more).
  const four = ipv4Number(bare)
  if (four >= 0) return { v4: true, words: [four], bits: 32 }
  if (!bare.includes(':')) return null
  if (bare.length > 7 && bare.slice(0, 7).toLowerCase() === '::ffff:') {
    const mapped = ipv4Number(bare.slice(7))
    if (mapped >= 0) return { v4: true, words: [mapped], bits: 32 }
  }
  const six = ipv6(bare.replace(/%.*$/, ''))
  if (!six) return null
  if (six.slice(0, 5).every((g) => g === 0) && six[5] === 0xffff) return { v4: true, words: [((six[6]! << 16) | six[7]!) >>> 0], bits: 32 }
  return { v4: false, words: [0, 2, 4, 6].map((i) => ((six[i]! << 16) | six[i + 1]!) >>> 0), bits: 128 }
}

function inBlock(address: Cidr, block: Cidr): boolean {
  if (address.v4 !== block.v4) return false
  let left = block.bits
  for (let i = 0; i < block.words.length && left > 0; i++, left -= 32) {
    const mask = left >= 32 ? 0xffffffff : (0xffffffff << (32 - left)) >>> 0
    if (((address.words[i]! & mask) >>> 0) !== ((block.words[i]! & mask) >>> 0)) return false
  }
  return true
}

// ---------------------------------------------------------------------------------------------------
// Sticky A/B: a visitor's place in [0, 100), from a keyed hash of the client address and User-Agent
// (the pair clicks already count visitors by), so the same visitor lands in the same variant while the
// weights stay as they are.

/** The hash key for `visitorBucket`, derived from IP_HASH_SECRET. */
export function bucketSeed(secret: string): bigint {
  return BigInt.asUintN(64, BigInt(`0x${new Bun.CryptoHasher('sha256').update(`ab-bucket\n${secret}`).digest('hex').slice(0, 16)}`))
}

export function visitorBucket(seed: bigint, ip: string, userAgent: string): number {
  return Number(BigInt.asUintN(64, BigInt(Bun.hash.wyhash(`${ip}\n${userAgent}`, seed))) % 10_000n) / 100
}
