// What a counted redirect records. The hot path captures a ClickEvent (cheap: strings it already has
// and Date.now()); turning it into the stored ClickRow (hashing the IP, formatting the time) happens
// when a batch is frozen, off the response path.

/** Versioned table name: a breaking change makes clicks_v2 rather than an in-place ALTER. */
export const CLICKS_TABLE = 'clicks_v1'

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
  country: string
}

/** A row of clicks_v1, in the JSONEachRow shape ClickHouse takes. */
export interface ClickRow {
  click_id: string
  link_id: string
  domain: string
  alias: string
  /** 'YYYY-MM-DD hh:mm:ss.sss' in UTC: the DateTime64(3) text form ClickHouse parses without settings. */
  timestamp: string
  referrer: string
  user_agent: string
  ip_hash: string
  country: string
}

// Bounds on what one click may store: a client controls these headers.
const MAX_REFERRER = 1024
const MAX_USER_AGENT = 512

export function clickTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '')
}

/** Keyed hash of an IP: stable per deployment for unique-visitor counts, not reversible without the key. */
export function hashIp(ip: string, secret: string): string {
  if (ip === '') return ''
  return new Bun.CryptoHasher('sha256', secret).update(ip).digest('hex').slice(0, 32)
}

export function toClickRow(event: ClickEvent, ipHashSecret: string): ClickRow {
  return {
    click_id: event.clickId,
    link_id: event.linkId,
    domain: event.domain,
    alias: event.alias,
    timestamp: clickTimestamp(event.at),
    referrer: event.referrer.slice(0, MAX_REFERRER),
    user_agent: event.userAgent.slice(0, MAX_USER_AGENT),
    ip_hash: hashIp(event.ip, ipHashSecret),
    country: /^[A-Za-z]{2}$/.test(event.country) ? event.country.toUpperCase() : '',
  }
}
