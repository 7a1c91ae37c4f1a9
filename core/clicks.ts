// What a counted redirect records. The hot path captures a ClickEvent (cheap: strings it already has
// and Date.now()); turning it into a stored row (hashing the IP, formatting the time, escaping) happens
// after the response, when the batcher encodes a frozen batch.
//
// Rows travel to ClickHouse as TabSeparated text: the cheapest format to build here and to parse there
// (JSONEachRow cost about twice the CPU on both sides in the redirect bench).
//
// Enrichment (device, browser, OS, bot flag, referrer host, UTM snapshot, country by IP) also happens
// here, at encode time: the hot path only adds the destination URL it already holds.
import { classifyUserAgent, Memo, referrerHost, userAgentKey, utmSnapshot, type UserAgentInfo, type UtmSnapshot } from './enrich'
import { countryOfIp, loadIpCountries } from './enrich-geo'
import { IpHasher } from './ip-hash'

/** Versioned table name: a breaking change makes clicks_v2 rather than an in-place ALTER. */
export const CLICKS_TABLE = 'clicks_v1'

/** Column order of an encoded row. */
export const CLICK_COLUMNS = [
  'click_id',
  'link_id',
  'domain',
  'alias',
  'timestamp',
  'referrer',
  'user_agent',
  'ip_hash',
  'country',
  // migrations/clickhouse/0002_click_enrichment.sql
  'device_type',
  'browser',
  'os',
  'is_bot',
  'bot_reason',
  'referrer_host',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  // migrations/clickhouse/0006_click_route.sql
  'route',
] as const

/** The route of a click on a link without routing, or one that matched no rule and no test. */
export const DEFAULT_ROUTE = 'default'

export interface ClickEvent {
  clickId: string
  linkId: string
  domain: string
  alias: string
  /** unix milliseconds */
  at: number
  referrer: string
  userAgent: string
  ip: string
  /** From the trusted CDN header when configured; else the encoder looks the IP up. */
  country: string
  /** The destination served, for its UTM snapshot. */
  url: string
  /**
   * How a routed link chose the destination (`rule:<id>`, `ab:<id>`); undefined or absent: DEFAULT_ROUTE.
   * The redirector always sets the key, undefined where it served the link's own URL, so its clicks
   * all have one shape.
   */
  route?: string
}

// Bounds on what one click may store: a client controls these headers.
const MAX_REFERRER = 1024
const MAX_USER_AGENT = 512
/** Distinct IPs whose hash is remembered; the memo is dropped whole when it fills. */
const IP_MEMO_SIZE = 50_000
/** User agents (and their keys) whose classification is remembered: real traffic has a few thousand. */
const UA_MEMO_SIZE = 20_000
/** Distinct referrers whose text and host are remembered (search engines and social sites repeat). */
const REFERRER_MEMO_SIZE = 20_000
/** Distinct destinations whose UTM snapshot is remembered (a link's clicks share one). */
const UTM_MEMO_SIZE = 10_000

/** 'YYYY-MM-DD hh:mm:ss.sss' in UTC: the DateTime64(3) text form ClickHouse parses without settings. */
export function clickTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '')
}

const TSV_SPECIAL = /[\\\t\n\r\0]/
const TSV_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' }

/** Escapes a value for ClickHouse's TabSeparated format. */
export function tsvField(value: string): string {
  return TSV_SPECIAL.test(value) ? value.replace(/[\\\t\n\r\0]/g, (c) => TSV_ESCAPES[c]!) : value
}

/** A referrer as stored: its text (bounded, escaped) and its host, both memoised per referrer. */
export interface StoredReferrer {
  text: string
  host: string
}

/** A user agent as stored: its text (bounded, escaped) and device_type … bot_reason. */
export interface StoredUserAgent {
  text: string
  columns: string
}

/**
 * Encodes click events as TabSeparated rows. Whatever repeats is computed once and memoised: the keyed
 * hash and country of an IP, the columns of a user agent, the host of a referrer, the UTM snapshot of a
 * destination, the timestamp text of the last millisecond. `row` takes the fields as strings, so a reader
 * of the click log (redirect/click-wire.ts) encodes without building an event object per click.
 */
export class ClickEncoder {
  private lastAt = -1
  private lastTimestamp = ''
  private readonly userAgents = new Map<string, StoredUserAgent>()
  /** device_type … bot_reason by userAgentKey: a new browser version costs no parse. */
  private readonly userAgentKinds = new Map<string, string>()
  private readonly referrers = new Memo<StoredReferrer>(REFERRER_MEMO_SIZE, storedReferrer)
  private readonly utms = new Memo<string>(UTM_MEMO_SIZE, (url) => utmColumns(utmSnapshot(url)))
  /** `ip_hash<TAB>country` of an IP whose click brought no country header. */
  private readonly places: Memo<string>
  private readonly ipHasher: IpHasher

  constructor(
    ipHashSecret: string,
    private readonly options: { geoByIp?: boolean } = {},
  ) {
    this.ipHasher = new IpHasher(ipHashSecret, IP_MEMO_SIZE)
    this.places = new Memo(IP_MEMO_SIZE, (ip) => this.placeOnce(ip, ''))
  }

  /** Loads what encoding needs once per thread (the IP-to-country table); resolves, never rejects. */
  async prepare(log?: (line: string) => void): Promise<void> {
    if (this.options.geoByIp !== false) await loadIpCountries(log)
  }

  /** One row, ending in a newline, columns in CLICK_COLUMNS order. */
  encode(event: ClickEvent): string {
    const { clickId, linkId, domain, alias, at, referrer, userAgent, ip, country, url, route } = event
    return this.row(clickId, linkId, domain, alias, at, referrer, userAgent, ip, country, url ?? '', route ?? DEFAULT_ROUTE)
  }

  /** The row of one click given field by field (ClickEvent's fields, in its order). */
  row(
    clickId: string,
    linkId: string,
    domain: string,
    alias: string,
    at: number,
    referrer: string,
    userAgent: string,
    ip: string,
    country: string,
    url: string,
    route: string = DEFAULT_ROUTE,
  ): string {
    const from = this.referrer(referrer)
    const agent = this.userAgent(userAgent)
    return `${tsvField(clickId)}\t${tsvField(linkId)}\t${tsvField(domain)}\t${tsvField(alias)}\t${this.timestamp(at)}\t${from.text}\t${agent.text}\t${this.place(ip, country)}\t${agent.columns}\t${from.host}\t${this.utm(url)}\t${tsvField(route)}\n`
  }

  // The parts of a row, each memoised: a reader that assembles rows itself (redirect/click-bytes.ts) uses
  // them as they are. Values are escaped for TabSeparated where a client controls them.

  /** The timestamp column of a click at `at` (unix ms). */
  timestamp(at: number): string {
    if (at !== this.lastAt) {
      this.lastAt = at
      this.lastTimestamp = clickTimestamp(at)
    }
    return this.lastTimestamp
  }

  /** referrer (bounded, escaped) and referrer_host. */
  referrer(referrer: string): StoredReferrer {
    return this.referrers.get(referrer)
  }

  /** `ip_hash<TAB>country`: a country header (a CDN's) wins when it holds a code, else the IP's country. */
  place(ip: string, country: string): string {
    if (isCountryCode(country)) return `${this.ipHasher.hash(ip)}\t${country.toUpperCase()}`
    return this.places.get(ip)
  }

  /**
   * place() computed afresh, without this encoder's memos: for a caller that keeps its own memo in front
   * (redirect/click-bytes.ts), where a second and third one only cost a miss more.
   */
  placeOnce(ip: string, country: string): string {
    const hash = this.ipHasher.digest(ip)
    if (isCountryCode(country)) return `${hash}\t${country.toUpperCase()}`
    return `${hash}\t${this.options.geoByIp !== false ? countryOfIp(ip) : ''}`
  }

  /** utm_source … utm_content of a destination, as it is now. */
  utm(url: string): string {
    return this.utms.get(url)
  }

  /** user_agent (bounded, escaped) and device_type … bot_reason. */
  userAgent(userAgent: string): StoredUserAgent {
    let stored = this.userAgents.get(userAgent)
    if (stored !== undefined) return stored
    const cut = userAgent.slice(0, MAX_USER_AGENT)
    const key = userAgentKey(cut)
    let columns = this.userAgentKinds.get(key)
    if (columns === undefined) {
      columns = userAgentColumns(classifyUserAgent(cut))
      if (this.userAgentKinds.size >= UA_MEMO_SIZE) this.userAgentKinds.clear()
      this.userAgentKinds.set(key, columns)
    }
    stored = { text: tsvField(cut), columns }
    if (this.userAgents.size >= UA_MEMO_SIZE) this.userAgents.clear()
    this.userAgents.set(userAgent, stored)
    return stored
  }
}

/** A country header that holds a two-letter code (a CDN's); anything else is ignored for the IP's country. */
function isCountryCode(country: string): boolean {
  return country.length === 2 && /^[A-Za-z]{2}$/.test(country)
}

function storedReferrer(referrer: string): StoredReferrer {
  const cut = referrer.slice(0, MAX_REFERRER)
  return { text: tsvField(cut), host: referrerHost(cut) }
}

/** device_type … bot_reason, tab-separated and escaped, as one memoised string. */
function userAgentColumns(info: UserAgentInfo): string {
  return `${info.deviceType}\t${tsvField(info.browser)}\t${tsvField(info.os)}\t${info.isBot ? 1 : 0}\t${tsvField(info.botReason)}`
}

/** utm_source … utm_content, tab-separated and escaped. */
function utmColumns(utm: UtmSnapshot): string {
  return `${tsvField(utm.source)}\t${tsvField(utm.medium)}\t${tsvField(utm.campaign)}\t${tsvField(utm.term)}\t${tsvField(utm.content)}`
}
