// L1 → shared cache → API. The L1 is a small bounded map whose entries live a few seconds, so a missed
// invalidation heals by itself; it is cleared whenever the invalidation subscription reconnects.
// Concurrent misses for one key share one load; "not found" is remembered briefly.
//
// An entry past its time is still answered from for one more lifetime while one load refreshes it in the
// background (stale-while-revalidate): a popular link never makes a request wait for Redis, and the
// entries loaded together (after a start, a reconnect) do not expire into one burst of waiting requests.
// What an invalidation removes is gone at once: only a missed invalidation is served for longer, up to
// twice the lifetime plus the time of one load.
import { TtlCache } from '../core/ttl-cache'
import { decodeCachedLink, encodeCachedLink, INVALIDATION_CHANNEL, type CachedLink } from '../core/link-cache'
import type { Resolve } from './internal-api'
import type { LinkSource } from './source'

export interface ResolverOptions {
  l1TtlMs: number
  l1MaxEntries: number
  negativeTtlMs: number
}

export interface ResolverCounters {
  l1Hits: number
  /** L1 answers of "no such link" (counted in l1Hits too). */
  negativeHits: number
  /** L1 answers past their time, each refreshed in the background (counted in l1Hits too). */
  staleHits: number
  cacheHits: number
  cacheErrors: number
  resolves: number
  resolveErrors: number
  invalidations: number
}

export class LinkResolver {
  private readonly l1: TtlCache<CachedLink | null>
  /**
   * The one load of each key under way. An invalidation (or a reset) removes the key's load from here: a
   * load no longer found here when it ends read what may be stale, and leaves the L1 alone. Per key, so
   * links being created and changed elsewhere never keep this key's reloads from landing.
   */
  private readonly inflight = new Map<string, Promise<CachedLink | null>>()
  private unsubscribe: (() => Promise<void>) | null = null
  readonly counters: ResolverCounters = { l1Hits: 0, negativeHits: 0, staleHits: 0, cacheHits: 0, cacheErrors: 0, resolves: 0, resolveErrors: 0, invalidations: 0 }

  constructor(
    private readonly source: LinkSource,
    private readonly resolve: Resolve,
    private readonly options: ResolverOptions,
  ) {
    this.l1 = new TtlCache(options.l1MaxEntries)
  }

  /** Starts listening for invalidations. Without it the L1 still expires entries after l1TtlMs. */
  async listen(): Promise<void> {
    this.unsubscribe = await this.source.subscribe(
      INVALIDATION_CHANNEL,
      (key) => this.invalidate(key),
      () => this.reset(),
    )
  }

  async close(): Promise<void> {
    await this.unsubscribe?.()
  }

  /**
   * The L1 answer, synchronously: a link, null for a remembered "not found", undefined for unknown. An
   * answer past its time (within one more lifetime) is still given, and reloaded in the background.
   */
  peek(key: string, now: number, domain: string, alias: string): CachedLink | null | undefined {
    const entry = this.l1.entry(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= now) {
      const ttl = entry.value ? this.options.l1TtlMs : this.options.negativeTtlMs
      if (entry.expiresAt + ttl <= now) {
        this.l1.delete(key)
        return undefined
      }
      this.counters.staleHits++
      if (!this.inflight.has(key)) this.load(key, domain, alias).catch(() => {}) // the next request tries again
    }
    this.counters.l1Hits++
    if (entry.value === null) this.counters.negativeHits++
    return entry.value
  }

  /** Loads past the L1. Rejects only when neither the cache nor the API can answer. */
  load(key: string, domain: string, alias: string): Promise<CachedLink | null> {
    const pending = this.inflight.get(key)
    if (pending) return pending
    const loading: Promise<CachedLink | null> = this.fetch(key, domain, alias).then(
      (loaded) => {
        if (this.inflight.get(key) !== loading) return loaded
        this.inflight.delete(key)
        const link = unchanged(this.l1.entry(key)?.value, loaded)
        this.l1.set(key, link, link ? this.options.l1TtlMs : this.options.negativeTtlMs, Date.now())
        return link
      },
      (error: unknown) => {
        if (this.inflight.get(key) === loading) this.inflight.delete(key)
        throw error
      },
    )
    this.inflight.set(key, loading)
    return loading
  }

  invalidate(key: string): void {
    this.counters.invalidations++
    this.l1.delete(key)
    this.inflight.delete(key)
  }

  reset(): void {
    this.l1.clear()
    this.inflight.clear()
  }

  /** The link from the shared cache, else from the API. */
  private async fetch(key: string, domain: string, alias: string): Promise<CachedLink | null> {
    let link: CachedLink | null = null
    try {
      const raw = await this.source.get(key)
      link = raw === null ? null : decodeCachedLink(raw)
      if (link) this.counters.cacheHits++
    } catch {
      this.counters.cacheErrors++ // Redis down or slow: the API still knows
    }
    if (!link) {
      this.counters.resolves++
      try {
        link = await this.resolve(domain, alias)
      } catch (error) {
        this.counters.resolveErrors++
        throw error
      }
    }
    return link
  }
}

/**
 * The record the L1 held, when a reload of a routed link brings the same one: the redirector compiles a
 * record's routing once and keeps it with the record (handler.ts), so an unchanged link is not compiled
 * again every L1 lifetime. Compared by their encodings; only on a reload, never per request.
 */
function unchanged(previous: CachedLink | null | undefined, loaded: CachedLink | null): CachedLink | null {
  if (!previous || !loaded || previous === loaded || loaded.r === undefined) return loaded
  return encodeCachedLink(previous) === encodeCachedLink(loaded) ? previous : loaded
}
