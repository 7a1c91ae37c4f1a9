// Reading a process's /metrics the way Prometheus does: GET with the bearer token, then the text format
// parsed into `name{labels}` → value (labels as the process renders them). Tests and benches read the
// redirector's click figures from here.
import type { ResolverCounters } from '../../redirect/resolver'

/** The METRICS_TOKEN of the processes the tests spawn (processes.ts TEST_SECRETS) and of the benches'. */
export const METRICS_TEST_TOKEN = 'e2e-metrics-token-0123456789abcdefghijkl'

/** Sample lines of the text format: `name{labels} value`, comments and blank lines skipped. */
export function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const space = line.lastIndexOf(' ')
    if (space < 0) throw new Error(`not a sample line: ${line}`)
    const value = line.slice(space + 1)
    samples.set(line.slice(0, space), value === '+Inf' ? Infinity : value === '-Inf' ? -Infinity : Number(value))
  }
  return samples
}

export async function scrapeMetrics(baseUrl: string, token: string = METRICS_TEST_TOKEN): Promise<Map<string, number>> {
  const response = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5_000) })
  if (!response.ok) throw new Error(`${baseUrl}/metrics answered ${response.status}`)
  return parseMetrics(await response.text())
}

/** The click log's figures of a redirector (or the embedded default). */
export interface ClickFigures {
  /** Clicks logged before their 302: the counted redirects served. */
  pushed: number
  written: number
  dropped: number
  pendingRows: number
  spooledFiles: number
  spoolBytes: number
  /** Times the log crossed 80 % of its bound. */
  spoolNearFull: number
  /** ClickHouse inserts that failed (and are retried). */
  failedAttempts: number
}

export async function clickFigures(baseUrl: string, token?: string): Promise<ClickFigures> {
  return clickFiguresOf(await scrapeMetrics(baseUrl, token), baseUrl)
}

export function clickFiguresOf(m: Map<string, number>, baseUrl = 'the process'): ClickFigures {
  const get = (name: string) => {
    const value = m.get(name)
    if (value === undefined) throw new Error(`${baseUrl}/metrics has no ${name}`)
    return value
  }
  return {
    pushed: get('linkservice_clicks_recorded_total'),
    written: get('linkservice_clicks_written_total'),
    dropped: get('linkservice_clicks_dropped_total'),
    pendingRows: get('linkservice_click_queue_rows'),
    spooledFiles: get('linkservice_click_spooled_segments'),
    spoolBytes: get('linkservice_click_spool_bytes'),
    spoolNearFull: get('linkservice_click_spool_near_full_total'),
    failedAttempts: get('linkservice_click_insert_failures_total'),
  }
}

/** The redirector's lookups by layer, named as its resolver counts them. */
export type ResolverFigures = ResolverCounters

export function resolverFigures(m: Map<string, number>): ResolverFigures {
  const get = (name: string) => m.get(name) ?? 0
  return {
    l1Hits: get('linkservice_redirect_lookups_total{layer="l1"}'),
    negativeHits: get('linkservice_redirect_negative_cache_hits_total'),
    staleHits: get('linkservice_redirect_stale_hits_total'),
    cacheHits: get('linkservice_redirect_lookups_total{layer="redis"}'),
    cacheErrors: get('linkservice_redirect_lookup_errors_total{layer="redis"}'),
    resolves: get('linkservice_redirect_lookups_total{layer="api"}'),
    resolveErrors: get('linkservice_redirect_lookup_errors_total{layer="api"}'),
    invalidations: get('linkservice_redirect_invalidations_total'),
  }
}
