// Which destination a visitor of a routed link gets: the first rule whose conditions all match, else a
// running A/B test's variant for this visitor, else the link's own URL (docs/routing.md). The API
// validates a link's routing and writes it into the cached record in the short form below; the
// redirector compiles it once per record and asks it on every redirect.
//
// What a condition needs of the request is worked out only when a rule asks for it: the User-Agent is
// classified for `device`, the address looked up for `country`, Accept-Language parsed for `language`,
// the query parsed for `query`. No value a user wrote is ever compiled as a regular expression.
import { ipv4Number, mappedIpv4Start } from './enrich-geo'
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

/** An address block as parseCidr gives it (the API checks a rule's blocks with it). */
interface Cidr {
  v4: boolean
  /** The address as 32-bit words (1 for IPv4, 4 for IPv6) and the prefix length. */
  words: number[]
  bits: number
}

/**
 * How the matcher holds a link's routing. A routed redirect reads the routing of its link, which lies
 * in memory among those of thousands of other links, so each object it touches is likely a cache miss:
 * over a thousand 10-rule links, reaching a routing spread over objects cost the redirect more than
 * checking its rules did. So what it reads lies in one array, front to back: a row of ROW slots per
 * rule, then the country codes and IP blocks the rows point to, then the A/B test's [cumulative
 * weight, pick] pairs.
 */
type Slot = number | RoutePick | Set<string> | [string, string | null][] | null

// A rule's row: its time window [AFTER, BEFORE) in Unix ms (-Infinity and Infinity where open); its
// devices as a bit mask of DEVICES (DEVICE_MASK); the ranges [COUNTRIES, COUNTRIES_END) of its country
// codes (countryNumber) and [BLOCKS, BLOCKS_END) of its IP blocks (BLOCK slots each: family 4 or 6,
// prefix length, four 32-bit words); its LANGUAGES (a Set of lower-case tags, read only when the request
// has an Accept-Language) and QUERY pairs (at least one, read only when it has a query); its PICK.
// ABSENT, or null for the objects, marks a condition the rule does not have.
const AFTER = 0
const BEFORE = 1
const DEVICE_MASK = 2
const COUNTRIES = 3
const COUNTRIES_END = 4
const BLOCKS = 5
const BLOCKS_END = 6
const LANGUAGES = 7
const QUERY = 8
const PICK = 9
const ROW = 10
const BLOCK = 6
const ABSENT = -1

export interface CompiledRouting {
  /** The rows, the data they point to and the A/B pairs, as laid out above. */
  program: Slot[]
  ruleCount: number
  /** Where the A/B pairs start: program.length when no test runs. */
  variantsFrom: number
  /** Whether a visitor keeps its variant (a keyed hash) rather than drawing one per click. */
  sticky: boolean
  /** Whether any rule asks for the country (the redirector then loads the IP-to-country table). */
  usesCountry: boolean
  /** Each rule's pick, in order (the program's own objects). */
  rules: RoutePick[]
  /** The running A/B test as compiled (its picks are the program's). */
  ab?: { picks: RoutePick[] /** Cumulative weights out of 100. */; upTo: number[]; sticky: boolean }
}

export function compileRouting(routing: CachedRouting): CompiledRouting {
  const given = routing.rules ?? []
  const program: Slot[] = new Array<Slot>(given.length * ROW).fill(ABSENT)
  for (let i = 0; i < given.length; i++) compileRule(given[i]!, program, i * ROW)
  const variantsFrom = program.length
  let ab: CompiledRouting['ab']
  if (routing.ab && routing.ab.variants.length > 0) {
    let total = 0
    ab = { picks: [], upTo: [], sticky: routing.ab.sticky }
    for (const variant of routing.ab.variants) {
      const pick = { route: `ab:${variant.id}`, url: variant.url }
      total += variant.weight
      ab.picks.push(pick)
      ab.upTo.push(total)
      program.push(total, pick)
    }
  }
  return {
    program,
    ruleCount: given.length,
    variantsFrom,
    sticky: ab?.sticky ?? false,
    usesCountry: given.some((rule) => rule.country !== undefined),
    rules: given.map((_, i) => program[i * ROW + PICK] as RoutePick),
    ab,
  }
}

/** Fills the rule's row at `row` of `program`, appending its country codes and blocks. */
function compileRule(rule: CachedRule, program: Slot[], row: number): void {
  program[row + AFTER] = rule.after ?? -Infinity
  program[row + BEFORE] = rule.before ?? Infinity
  if (rule.device) program[row + DEVICE_MASK] = rule.device.reduce((mask, device) => mask | deviceBit(device), 0)
  if (rule.country) {
    program[row + COUNTRIES] = program.length
    for (const code of rule.country) program.push(countryNumber(code.toUpperCase(), RULE_OTHER_LENGTH))
    program[row + COUNTRIES_END] = program.length
  }
  if (rule.ip) {
    program[row + BLOCKS] = program.length
    for (const text of rule.ip) {
      const cidr = parseCidr(text)
      if (cidr !== null) program.push(cidr.v4 ? 4 : 6, cidr.bits, cidr.words[0]!, cidr.words[1] ?? 0, cidr.words[2] ?? 0, cidr.words[3] ?? 0)
    }
    program[row + BLOCKS_END] = program.length
  }
  program[row + LANGUAGES] = rule.language ? new Set(rule.language.map((l) => l.toLowerCase())) : null
  program[row + QUERY] = rule.query && rule.query.length > 0 ? rule.query : null
  program[row + PICK] = { route: `rule:${rule.id}`, url: rule.url }
}

/**
 * The destination for this visitor at `now`, or null for the link's own URL. `bucket` gives the
 * sticky visitor's place in [0, 100) (keyed hash of address and User-Agent: the redirector's); it is
 * handed the visitor, so a caller passes one function rather than a closure per request. The pick
 * returned is the compiled routing's own object: read it, never change it.
 */
export function pickRoute<V extends VisitorFacts>(routing: CompiledRouting, visitor: V, now: number, bucket: (visitor: V) => number): RoutePick | null {
  if (routing.ruleCount > 0) {
    const pick = firstRule(routing, visitor, now)
    if (pick !== null) return pick
  }
  const { program, variantsFrom } = routing
  if (variantsFrom === program.length) return null
  const place = routing.sticky ? bucket(visitor) : Math.random() * 100
  for (let at = variantsFrom; at < program.length; at += 2) {
    if (place < (program[at] as number)) return program[at + 1] as RoutePick
  }
  return program[program.length - 1] as RoutePick
}

/**
 * The first rule whose conditions all hold, in the order the conditions are listed. Each fact is worked
 * out once, when a rule first asks for it, into a local: nothing is allocated to hold them. Plain
 * loops, no callbacks: this runs for every rule of every routed redirect.
 */
function firstRule(routing: CompiledRouting, visitor: VisitorFacts, now: number): RoutePick | null {
  const program = routing.program
  const end = routing.ruleCount * ROW
  let devices = ABSENT
  let country: number | undefined
  let languages: readonly AcceptedLanguage[] | undefined
  // Null: an empty query, where no parameter is present.
  let params: URLSearchParams | null | undefined
  // 4 or 6 once the address is in VISITOR_WORDS, 0 when it is none.
  let family = ABSENT
  for (let row = 0; row < end; row += ROW) {
    if (now < (program[row + AFTER] as number) || now >= (program[row + BEFORE] as number)) continue
    const mask = program[row + DEVICE_MASK] as number
    if (mask !== ABSENT) {
      if (devices === ABSENT) devices = deviceMask(visitor.userAgent())
      if ((mask & devices) === 0) continue
    }
    if (program[row + COUNTRIES] !== ABSENT) {
      country ??= countryNumber(visitor.country().toUpperCase(), VISITOR_OTHER_LENGTH)
      if (!includes(program, program[row + COUNTRIES] as number, program[row + COUNTRIES_END] as number, country)) continue
    }
    const tags = program[row + LANGUAGES] as Set<string> | null
    if (tags !== null) {
      languages ??= acceptedLanguages(visitor.acceptLanguage())
      if (!languageMatches(tags, languages)) continue
    }
    const pairs = program[row + QUERY] as [string, string | null][] | null
    if (pairs !== null) {
      if (params === undefined) {
        const query = visitor.query()
        params = query === '' ? null : new URLSearchParams(query)
      }
      if (params === null || !queryMatches(pairs, params)) continue
    }
    if (program[row + BLOCKS] !== ABSENT) {
      if (family === ABSENT) family = addressWords(visitor.ip(), VISITOR_WORDS)
      if (!inSomeBlock(family, VISITOR_WORDS, program, program[row + BLOCKS] as number, program[row + BLOCKS_END] as number)) continue
    }
    return program[row + PICK] as RoutePick
  }
  return null
}

/** The visitor's address words while firstRule runs: it never re-enters, so one buffer serves every call. */
const VISITOR_WORDS = new Uint32Array(4)

function includes(values: Slot[], from: number, to: number, value: number): boolean {
  for (let i = from; i < to; i++) if (values[i] === value) return true
  return false
}

/**
 * A country code as one number: '' as 0, two UTF-16 units as 65536 * first + second + 1, any other
 * length as `other`. A rule's other lengths and a visitor's differ, so they never match: a visitor's
 * country is '' or two letters (VisitorFacts), a rule's two letters (the API checks it).
 */
function countryNumber(code: string, other: number): number {
  if (code.length === 0) return 0
  return code.length === 2 ? code.charCodeAt(0) * 65_536 + code.charCodeAt(1) + 1 : other
}
const RULE_OTHER_LENGTH = -2
const VISITOR_OTHER_LENGTH = -3

/** Whether a bare tag matches the primary tag of an accepted language, or a tag with a region the whole of it. */
function languageMatches(tags: Set<string>, accepted: readonly AcceptedLanguage[]): boolean {
  // A primary tag holds no "-" and a tag with a region does, so one set answers both questions.
  for (let i = 0; i < accepted.length; i++) {
    if (tags.has(accepted[i]!.primary) || tags.has(accepted[i]!.tag)) return true
  }
  return false
}

/** Every [name, value] present (a null value: present with any value). */
function queryMatches(wanted: [string, string | null][], params: URLSearchParams): boolean {
  for (let i = 0; i < wanted.length; i++) {
    const [name, value] = wanted[i]!
    if (value === null ? !params.has(name) : !params.getAll(name).includes(value)) return false
  }
  return true
}

// ---------------------------------------------------------------------------------------------------
// Devices from the User-Agent: substring tests on the product tokens every browser sends, memoised per
// User-Agent (a site's traffic repeats a few thousand of them), as a bit mask of DEVICES.

const DEVICE_MEMO_SIZE = 4_096
const deviceMemo = new Map<string, number>()

function deviceBit(device: string): number {
  const index = (DEVICES as readonly string[]).indexOf(device)
  return index < 0 ? 0 : 1 << index
}

/** The devices a User-Agent belongs to: a platform (ios, android, windows, macos, linux, chromeos) and its kind (mobile or desktop). */
export function devicesOf(userAgent: string): Set<Device> {
  const mask = deviceMask(userAgent)
  return new Set(DEVICES.filter((device) => (mask & deviceBit(device)) !== 0))
}

/** devicesOf as a bit mask of DEVICES. */
function deviceMask(userAgent: string): number {
  let mask = deviceMemo.get(userAgent)
  if (mask === undefined) {
    mask = classify(userAgent)
    if (deviceMemo.size >= DEVICE_MEMO_SIZE) deviceMemo.clear()
    deviceMemo.set(userAgent, mask)
  }
  return mask
}

const IOS = /\b(iPhone|iPad|iPod)\b/
const ANDROID = /\bAndroid\b/
const OTHER_MOBILE = /\b(Mobile|Tablet|Windows Phone|IEMobile|BlackBerry|BB10|Opera Mini|Kindle|Silk|webOS)\b/
const CHROMEOS = /\bCrOS\b/
const WINDOWS = /\bWindows\b/
const MACOS = /\bMacintosh\b|\bMac OS X\b/
const LINUX = /\bLinux\b|\bX11\b/

function classify(userAgent: string): number {
  const ios = IOS.test(userAgent)
  const android = !ios && ANDROID.test(userAgent)
  if (ios || android || OTHER_MOBILE.test(userAgent)) return deviceBit('mobile') | (ios ? deviceBit('ios') : 0) | (android ? deviceBit('android') : 0)
  let platform = 0
  if (CHROMEOS.test(userAgent)) platform = deviceBit('chromeos')
  else if (WINDOWS.test(userAgent)) platform = deviceBit('windows')
  else if (MACOS.test(userAgent)) platform = deviceBit('macos')
  else if (LINUX.test(userAgent)) platform = deviceBit('linux')
  return platform === 0 ? 0 : platform | deviceBit('desktop')
}

// ---------------------------------------------------------------------------------------------------
// Accept-Language (RFC 9110 12.5.4): tags with a q-value above zero; "*" names no language.

export interface AcceptedLanguage {
  tag: string
  primary: string
}

/** What a request without Accept-Language accepts: one shared empty list, nothing allocated. */
const NO_LANGUAGES: readonly AcceptedLanguage[] = Object.freeze([])

export function acceptedLanguages(header: string): readonly AcceptedLanguage[] {
  if (header === '') return NO_LANGUAGES
  const accepted: AcceptedLanguage[] = []
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
  const words = new Uint32Array(4)
  const family = addressWords(slash < 0 ? text : text.slice(0, slash), words)
  if (family === 0) return null
  const address: Cidr = family === 4 ? { v4: true, words: [words[0]!], bits: 32 } : { v4: false, words: [...words], bits: 128 }
  if (slash < 0) return address
  const raw = text.slice(slash + 1)
  if (!/^\d{1,3}$/.test(raw)) return null
  let bits = Number(raw)
  // A mapped block written in IPv6 (::ffff:10.0.0.0/104) is the IPv4 block of its last 32 bits.
  if (address.v4 && text.slice(0, slash).includes(':')) bits -= 96
  if (bits < 0 || bits > address.bits) return null
  return { ...address, bits }
}

/**
 * An address into `words` (one word for IPv4, four for IPv6): its family, 4 or 6, or 0 when the text
 * is no address. Nothing is allocated for an IPv4 client, the common case of every routed redirect
 * with an IP rule; a dual-stack socket's ::ffff:a.b.c.d is the IPv4 address it is (the general IPv6
 * parse below costs several times more).
 */
function addressWords(text: string, words: Uint32Array): 0 | 4 | 6 {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text
  const four = ipv4Number(bare)
  if (four >= 0) {
    words[0] = four
    return 4
  }
  if (!bare.includes(':')) return 0
  const quad = mappedIpv4Start(bare)
  if (quad > 0) {
    const mapped = ipv4Number(bare, quad)
    if (mapped >= 0) {
      words[0] = mapped
      return 4
    }
  }
  const six = ipv6(bare.replace(/%.*$/, ''))
  if (!six) return 0
  if (six.slice(0, 5).every((g) => g === 0) && six[5] === 0xffff) {
    words[0] = (six[6]! << 16) | six[7]!
    return 4
  }
  for (let i = 0; i < 4; i++) words[i] = (six[2 * i]! << 16) | six[2 * i + 1]!
  return 6
}

/** Whether the address (`family`, `words`) lies in one of the blocks in [from, to) of `blocks`. */
function inSomeBlock(family: number, words: Uint32Array, blocks: Slot[], from: number, to: number): boolean {
  for (let at = from; at < to; at += BLOCK) {
    if (blocks[at] === family && inBlock(words, blocks, at)) return true
  }
  return false
}

function inBlock(words: Uint32Array, blocks: Slot[], at: number): boolean {
  let left = blocks[at + 1] as number
  for (let i = 0; left > 0; i++, left -= 32) {
    const mask = left >= 32 ? 0xffffffff : (0xffffffff << (32 - left)) >>> 0
    if ((words[i]! & mask) >>> 0 !== ((blocks[at + 2 + i] as number) & mask) >>> 0) return false
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

/**
 * wyhash gives an unsigned 64-bit BigInt: its remainder by 10,000 is the one BigInt operation a sticky
 * redirect pays (a place to two decimals, as every release has computed it).
 */
export function visitorBucket(seed: bigint, ip: string, userAgent: string): number {
  return Number((Bun.hash.wyhash(`${ip}\n${userAgent}`, seed) as bigint) % 10_000n) / 100
}
