// What the redirector shows at /metrics: read at scrape time from the counters its parts keep anyway
// (the resolver's cache layers, the click log and its shipper, the custom domains), plus the one figure
// observed per request, the latency histogram. Nothing here runs per redirect but Histogram.observe.
import { LATENCY_BUCKETS_SECONDS, MetricsRegistry, type Histogram, type Sample } from '../core/metrics'
import type { DomainSet } from './domains'
import type { ClickRecorder } from './recorder'
import type { LinkResolver } from './resolver'

export interface RedirectMetrics {
  registry: MetricsRegistry
  /** Seconds from the request's arrival to its answer (for a counted redirect: once its click is on disk). */
  latency: Histogram
}

export function redirectMetrics(parts: { resolver: LinkResolver; recorder: ClickRecorder; domains: DomainSet }): RedirectMetrics {
  const { resolver, recorder, domains } = parts
  const registry = new MetricsRegistry()
  const latency = registry.histogram('linkservice_redirect_duration_seconds', 'Time to answer a short-link request (a counted redirect: until its click is in the log)', LATENCY_BUCKETS_SECONDS)
  const cache = resolver.counters
  registry.counterFrom('linkservice_redirect_lookups_total', 'Link lookups by the layer that answered: l1 (in-process), redis, api (the resolve endpoint)', () => [
    { labels: { layer: 'l1' }, value: cache.l1Hits },
    { labels: { layer: 'redis' }, value: cache.cacheHits },
    { labels: { layer: 'api' }, value: cache.resolves },
  ])
  registry.counterFrom('linkservice_redirect_negative_cache_hits_total', 'L1 answers of "no such link" (counted in the l1 lookups too)', () => cache.negativeHits)
  registry.counterFrom('linkservice_redirect_stale_hits_total', 'L1 answers past their time, each refreshed in the background', () => cache.staleHits)
  registry.counterFrom('linkservice_redirect_lookup_errors_total', 'Failed lookups by layer: redis (down or slow; the API is asked instead), api (the redirect answered 503)', () => [
    { labels: { layer: 'redis' }, value: cache.cacheErrors },
    { labels: { layer: 'api' }, value: cache.resolveErrors },
  ])
  registry.counterFrom('linkservice_redirect_invalidations_total', 'L1 entries dropped on a change message from the API', () => cache.invalidations)
  // One stats() call per scrape serves every click family below.
  let stats = recorder.stats()
  registry.counterFrom('linkservice_clicks_recorded_total', 'Clicks written to the click log before their 302 (one per counted redirect)', () => {
    stats = recorder.stats()
    return stats.logged
  })
  registry.counterFrom('linkservice_clicks_dropped_total', 'Counted redirects whose click could not be logged (spool full or disk refusing): should stay 0', () => stats.dropped)
  registry.counterFrom('linkservice_clicks_written_total', 'Clicks ClickHouse acknowledged', () => stats.written)
  registry.gaugeFrom('linkservice_click_queue_rows', 'Clicks in sealed log segments waiting for ClickHouse', () => stats.pendingRows)
  registry.gaugeFrom('linkservice_click_spooled_segments', 'Sealed click log segments on disk waiting for ClickHouse', () => stats.spooledFiles)
  registry.gaugeFrom('linkservice_click_spool_bytes', 'Bytes of the click log on disk', () => stats.spoolBytes)
  registry.gaugeFrom('linkservice_click_spool_max_bytes', 'Bound of the click log (CLICK_SPOOL_MAX_BYTES): at it, clicks are dropped', () => stats.spoolMaxBytes)
  registry.counterFrom('linkservice_click_spool_near_full_total', 'Times the click log crossed 80 % of its bound', () => stats.spoolNearFull)
  registry.counterFrom('linkservice_click_flushes_total', 'Batches shipped to ClickHouse, by what sealed them', () =>
    Object.entries(stats.flushes).map(([label, value]): Sample => ({ labels: { label }, value })),
  )
  registry.counterFrom('linkservice_click_insert_failures_total', 'ClickHouse inserts that failed and will be retried', () => stats.failedAttempts)
  registry.counterFrom('linkservice_click_replayed_rows_total', 'Clicks read back from the log after a restart or an outage', () => stats.replayedRows)
  registry.counterFrom('linkservice_custom_domain_loads_total', 'Successful reloads of the custom domains from the API', () => domains.counters.loads)
  registry.gaugeFrom('linkservice_custom_domains', 'Verified custom domains this redirector serves', () => domains.counters.size)
  registry.counterFrom('linkservice_custom_domain_load_errors_total', 'Failed reloads of the custom domains from the API', () => domains.counters.loadErrors)
  return { registry, latency }
}
