// Which host a request is for. The default short domain is recognised by one string comparison on the
// request URL (the hot path); any other host is looked up in the set of verified custom domains that
// every redirector keeps in memory, so a request with a made-up Host costs a Map lookup and a 404, never
// a call to Redis or the API and never an L1 entry.
//
// The set comes from the API (GET /internal/domains) at start, again whenever the API announces a change
// on DOMAIN_CHANNEL (verify, delete, a new root URL), whenever that subscription may have missed messages, and every
// DOMAIN_REFRESH_MS as a safety net. Reloads are coalesced; a change announced during a reload causes one
// more, so the last reload always starts after the last change.
import { DOMAIN_CHANNEL, linkCacheKey } from '../core/link-cache'
import type { LoadDomains } from './internal-api'
import type { LinkSource } from './source'

/**
 * A verified custom domain: its host, the prefix of its links' cache keys (computed once), and where its
 * root leads when its owner set that (else a neutral page).
 */
export class CustomDomain {
  readonly keyPrefix: string

  constructor(
    readonly host: string,
    readonly rootUrl?: string,
  ) {
    this.keyPrefix = linkCacheKey(host, '')
  }
}

/** The request is for the default domain under another name (a port variant, an IP address, localhost). */
export const DEFAULT_DOMAIN = Symbol('default domain')

export type HostMatch = CustomDomain | typeof DEFAULT_DOMAIN | null | undefined

/** The host name of a request URL, without port and trailing dot; '' when the URL has none. */
export function hostOf(url: string): string {
  const slashes = url.indexOf('//')
  if (slashes < 0) return ''
  const start = slashes + 2
  let end = url.indexOf('/', start)
  if (end < 0) end = url.length
  let host = url.slice(start, end)
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1) // IPv6 literal
  const colon = host.lastIndexOf(':')
  if (colon >= 0) host = host.slice(0, colon)
  return host.endsWith('.') ? host.slice(0, -1) : host
}

const IPV4 = /^[0-9.]+$/

export interface DomainSetOptions {
  /** Reload interval while all is well. */
  refreshMs: number
  /** Retry interval after a failed load. */
  retryMs?: number
  log?: (line: string) => void
}

export interface DomainSetCounters {
  loads: number
  loadErrors: number
  changes: number
  size: number
}

export class DomainSet {
  /** host → domain; null until the first load succeeded (hosts other than the default one then get 503). */
  private domains: Map<string, CustomDomain> | null = null
  private readonly defaultHost: string
  /** "http://<SHORT_DOMAIN>/" and its https twin: the hot path's whole test. */
  private readonly httpPrefix: string
  private readonly httpsPrefix: string
  private loading: Promise<void> | null = null
  private again = false
  private timer: ReturnType<typeof setTimeout> | undefined
  private closed = false
  private failing = false
  private unsubscribe: (() => Promise<void>) | null = null
  readonly counters: DomainSetCounters = { loads: 0, loadErrors: 0, changes: 0, size: 0 }
  /** Goes up with every load of the set: what was worked out from an older set (serves) is asked again. */
  version = 0

  constructor(
    shortDomain: string,
    private readonly load: LoadDomains,
    private readonly source: Pick<LinkSource, 'subscribe'>,
    private readonly options: DomainSetOptions,
  ) {
    this.defaultHost = hostOf(`http://${shortDomain}/`)
    this.httpPrefix = `http://${shortDomain}/`
    this.httpsPrefix = `https://${shortDomain}/`
  }

  /**
   * True when the request URL is on the default domain exactly as configured (Bun gives request.url
   * with a lower-case host and without a default port). Two prefix checks at most, no allocation: this
   * is all the hot path pays for custom domains.
   */
  onDefaultDomain(url: string): boolean {
    return url.startsWith(this.httpPrefix) || url.startsWith(this.httpsPrefix)
  }

  /**
   * True when a URL's host is one this redirector answers for: the default domain or a verified custom
   * domain. A link whose destination is such a host would redirect to itself.
   */
  serves(url: string): boolean {
    const host = hostOf(url)
    return host === this.defaultHost || (this.domains?.has(host) ?? false)
  }

  /** The set has loaded and its last reload succeeded (readiness: the API answers). */
  get answering(): boolean {
    return this.domains !== null && !this.failing
  }

  /** Subscribes to changes and makes the first load; a failed load is retried in the background. */
  async start(): Promise<void> {
    this.unsubscribe = await this.source.subscribe(
      DOMAIN_CHANNEL,
      () => {
        this.counters.changes++
        void this.refresh()
      },
      () => void this.refresh(),
    )
    await this.refresh()
  }

  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.timer)
    await this.unsubscribe?.()
  }

  /**
   * The domain a request URL is for: DEFAULT_DOMAIN, a verified custom domain, null for an unknown host,
   * undefined while the set has never loaded.
   */
  match(url: string): HostMatch {
    const host = hostOf(url)
    if (host === this.defaultHost || host === 'localhost' || host.startsWith('[') || IPV4.test(host)) return DEFAULT_DOMAIN
    if (this.domains === null) return undefined
    return this.domains.get(host) ?? null
  }

  /** Reloads the set; concurrent calls share one load, and a call during a load schedules one more. */
  refresh(): Promise<void> {
    if (this.loading) {
      this.again = true
      return this.loading
    }
    this.loading = this.reload().finally(() => {
      this.loading = null
      if (this.again && !this.closed) {
        this.again = false
        void this.refresh()
      }
    })
    return this.loading
  }

  private async reload(): Promise<void> {
    clearTimeout(this.timer)
    try {
      const { hosts, rootUrls } = await this.load()
      this.counters.loads++
      const previous = this.domains
      // Keep the CustomDomain objects of hosts that stay as they were: their key prefix is computed once.
      const keep = (host: string, rootUrl: string | undefined) => {
        const known = previous?.get(host)
        return known && known.rootUrl === rootUrl ? known : new CustomDomain(host, rootUrl)
      }
      this.domains = new Map(hosts.map((host) => [host, keep(host, rootUrls.get(host))]))
      this.version++
      this.counters.size = this.domains.size
      if (this.failing) this.options.log?.('redirector: custom domains loaded again')
      this.failing = false
      this.schedule(this.options.refreshMs)
    } catch (error) {
      this.counters.loadErrors++
      // Logged once per outage, not per attempt; the last good set stays in use meanwhile.
      if (!this.failing) this.options.log?.(`redirector: custom domains could not be loaded (${error instanceof Error ? error.message : String(error)}); retrying`)
      this.failing = true
      this.schedule(this.options.retryMs ?? 1000)
    }
  }

  private schedule(ms: number): void {
    if (this.closed) return
    this.timer = setTimeout(() => void this.refresh(), ms)
    this.timer.unref?.()
  }
}
