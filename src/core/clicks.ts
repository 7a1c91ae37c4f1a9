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
  'click_id', 'link_id', 'domain', 'alias', 'timestamp', 'referrer', 'user_agent', 'ip_hash', 'country',
  // migrations/clickhouse/0002_click_enrichment.sql
  'device_type', 'browser', 'os', 'is_bot', 'bot_reason', 'referrer_host',
  'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content',
] as const

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
}

// Bounds on what one click may store: a client controls these headers.
const MAX_REFERRER = 1024
const MAX_USER_AGENT = 512
/** Distinct IPs whose hash is remembered; the memo is dropped whole when it fills. */
const IP_MEMO_SIZE = 50_000
/** User agents (and their keys) whose classification is remembered: real traffic has a few thousand. */
const UA_MEMO_SIZE = 20_000
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

/**
 * Encodes click events as TabSeparated rows. Keyed hashing of IPs is memoised (the same client clicks
 * many times) and so is the timestamp text of the last millisecond.
 */
export class ClickEncoder {
  private lastAt = -1
  private lastTimestamp = ''
  private readonly userAgents = new Map<string, string>()
  private readonly utms = new Memo<string>(UTM_MEMO_SIZE, (url) => utmColumns(utmSnapshot(url)))

  private readonly ipHasher: IpHasher

  constructor(ipHashSecret: string, private readonly options: { geoByIp?: boolean } = {}) {
    this.ipHasher = new IpHasher(ipHashSecret, IP_MEMO_SIZE)
  }

  /** Loads what encoding needs once per thread (the IP-to-country table); resolves, never rejects. */
  async prepare(log?: (line: string) => void): Promise<void> {
    if (this.options.geoByIp !== false) await loadIpCountries(log)
  }

  /** Keyed SHA-256 of an IP (src/core/ip-hash.ts): stable per deployment for unique visitors, never the IP. */
  hashIp(ip: string): string {
    return this.ipHasher.hash(ip)
  }

  /**
   * device_type … bot_reason of a user agent, memoised under the agent itself (the same few repeat) and
   * under its userAgentKey (so a new browser version costs no parse either).
   */
  userAgentColumns(userAgent: string): string {
    let columns = this.userAgents.get(userAgent)
    if (columns !== undefined) return columns
    const key = userAgentKey(userAgent)
    columns = this.userAgents.get(key) ?? userAgentColumns(classifyUserAgent(userAgent))
    if (this.userAgents.size >= UA_MEMO_SIZE) this.userAgents.clear()
    this.userAgents.set(key, columns)
    this.userAgents.set(userAgent, columns)
    return columns
  }

  /** One row, ending in a newline, columns in CLICK_COLUMNS order. */
  encode(event: ClickEvent): string {
    if (event.at !== this.lastAt) {
      this.lastAt = event.at
      this.lastTimestamp = clickTimestamp(event.at)
    }
    const country = event.country.length === 2 && /^[A-Za-z]{2}$/.test(event.country)
      ? event.country.toUpperCase()
      : this.options.geoByIp === false ? '' : countryOfIp(event.ip)
    const referrer = event.referrer.slice(0, MAX_REFERRER)
    const userAgent = event.userAgent.slice(0, MAX_USER_AGENT)
    return `${tsvField(event.clickId)}\t${tsvField(event.linkId)}\t${tsvField(event.domain)}\t${tsvField(event.alias)}\t${this.lastTimestamp}\t${tsvField(referrer)}\t${tsvField(userAgent)}\t${this.hashIp(event.ip)}\t${country}\t${this.userAgentColumns(userAgent)}\t${referrerHost(referrer)}\t${this.utms.get(event.url ?? '')}\n`
  }
}

/** device_type … bot_reason, tab-separated and escaped, as one memoised string. */
function userAgentColumns(info: UserAgentInfo): string {
  return `${info.deviceType}\t${tsvField(info.browser)}\t${tsvField(info.os)}\t${info.isBot ? 1 : 0}\t${tsvField(info.botReason)}`
}

/** utm_source … utm_content, tab-separated and escaped. */
function utmColumns(utm: UtmSnapshot): string {
  return `${tsvField(utm.source)}\t${tsvField(utm.medium)}\t${tsvField(utm.campaign)}\t${tsvField(utm.term)}\t${tsvField(utm.content)}`
}
