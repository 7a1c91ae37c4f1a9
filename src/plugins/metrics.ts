// The API's /metrics (Prometheus text, behind METRICS_TOKEN): latency by route, method and status,
// errors by code (rate-limit refusals are RATE_LIMITED), idempotency replays, OAuth token outcomes,
// Agent calls by outcome (from the audit, so REST and MCP alike), and the process counters the services
// keep. In the embedded default the redirector's families (redirect/metrics.ts) are rendered after these.
import { Elysia } from 'elysia'
import type { AuditEventInput, AuditLog } from '../adapters/ports'
import { LATENCY_BUCKETS_SECONDS, metricsResponse, MetricsRegistry, type Counter, type LabeledHistogram } from '../../core/metrics'
import type { Services } from '../services'
import { errorResponseCounts } from './errors'

/** The token endpoint: a 200 is a token issued, anything else a refusal. */
const TOKEN_ROUTE = '/oauth/token'

export interface ApiMetrics {
  registry: MetricsRegistry
  requests: LabeledHistogram
  replays: Counter
  oauthTokens: Counter
  agentCalls: Counter
}

export function apiMetrics(services: Pick<Services, 'counters' | 'audit' | 'blocklistFigures' | 'now'>): ApiMetrics {
  const registry = new MetricsRegistry()
  const requests = registry.labeledHistogram('linkservice_http_request_duration_seconds', 'API requests by method, route (the pattern, never the path) and status', LATENCY_BUCKETS_SECONDS, [
    'method',
    'route',
    'status',
  ])
  registry.counterFrom('linkservice_http_errors_total', 'Error answers by their code (RATE_LIMITED: rate-limit refusals)', () =>
    [...errorResponseCounts].map(([code, value]) => ({ labels: { code }, value })),
  )
  const replays = registry.counter('linkservice_idempotency_replays_total', 'Answers replayed for a repeated Idempotency-Key')
  const oauthTokens = registry.counter('linkservice_oauth_tokens_total', 'Token endpoint answers: issued or refused', ['outcome'])
  const agentCalls = registry.counter('linkservice_agent_calls_total', "Agents' calls by outcome (ok, held for approval, refused, error) and way in (rest, mcp)", ['outcome', 'via'])
  const counters = services.counters
  registry.counterFrom(
    'linkservice_cache_write_failures_total',
    'Link write-throughs to the cache that failed (the link is committed; redirectors fall back to the API)',
    () => counters.cacheWriteFailures,
  )
  registry.counterFrom('linkservice_alias_collisions_total', 'Generated aliases already taken and drawn again', () => counters.aliasCollisions)
  // Abuse: reports, links taken down (blocked creations are linkservice_http_errors_total{code="DESTINATION_BLOCKED"}).
  registry.counterFrom('linkservice_reports_total', "Visitors' reports of links filed", () => counters.reportsFiled)
  registry.counterFrom('linkservice_link_state_changes_total', 'Links moved to a state: flagged, disabled (lists, reports, checks, operators) or ok (restored)', () =>
    Object.entries(counters.linkStates).map(([state, value]) => ({ labels: { state }, value })),
  )
  const lists = () => services.blocklistFigures?.() ?? []
  registry.gaugeFrom('linkservice_blocklist_entries', 'Hosts and URL prefixes of each block list (BLOCKLIST_FILES, BLOCKLIST_URLS)', () =>
    lists().map((list) => ({ labels: { list: list.name }, value: list.hosts + list.prefixes })),
  )
  registry.gaugeFrom('linkservice_blocklist_age_seconds', 'Seconds since each block list was last accepted (read, fetched, or confirmed unchanged); -1 before its first', () =>
    lists().map((list) => ({ labels: { list: list.name }, value: list.lastConfirmedAt === undefined ? -1 : Math.round((services.now() - list.lastConfirmedAt) / 1000) })),
  )
  registry.counterFrom('linkservice_blocklist_failures_total', 'Block list reads or fetches that failed (the last good list is kept)', () =>
    lists().map((list) => ({ labels: { list: list.name }, value: list.failures })),
  )
  const audit = services.audit
  if (audit && 'counters' in audit) {
    const spool = () => (audit as AuditLog & { counters: { dropped: number; spoolBytes: number; spoolMaxBytes: number; written: number } }).counters
    registry.counterFrom('linkservice_audit_events_written_total', 'Audit events ClickHouse acknowledged', () => spool().written)
    registry.counterFrom('linkservice_audit_events_dropped_total', 'Audit events that could not be recorded (spool full or disk refusing): should stay 0', () => spool().dropped)
    registry.gaugeFrom('linkservice_audit_spool_bytes', 'Bytes of the audit spool on disk', () => spool().spoolBytes)
  }
  return { registry, requests, replays, oauthTokens, agentCalls }
}

/** The audit log, counting each Agent call by outcome on its way: one place for REST and MCP. */
export function countedAudit(audit: AuditLog | undefined, metrics: ApiMetrics): AuditLog | undefined {
  if (!audit) return undefined
  const counted = Object.create(audit) as AuditLog
  counted.record = (event: AuditEventInput) => {
    metrics.agentCalls.inc({ outcome: event.outcome ?? outcomeOf(event.status), via: event.via })
    audit.record(event)
  }
  return counted
}

/** What a status stands for when the call did not say (the audit's own rule). */
function outcomeOf(status: number): string {
  if (status === 202) return 'held'
  if (status < 400) return 'ok'
  if (status < 500) return 'refused'
  return 'error'
}

const started = new WeakMap<Request, number>()

/** Observes every API request once its answer is ready, and serves GET /metrics. */
export function metricsPlugin(metrics: ApiMetrics, token: string | undefined, extra: readonly MetricsRegistry[] = []) {
  return new Elysia({ name: 'plugins.metrics' })
    .onRequest(({ request }) => {
      started.set(request, performance.now())
    })
    .onAfterResponse({ as: 'global' }, ({ request, route, set, responseValue }) => {
      const start = started.get(request)
      if (start === undefined) return
      started.delete(request)
      const response = responseValue instanceof Response ? responseValue : undefined
      const status = response?.status ?? (typeof set.status === 'number' ? set.status : 200)
      // An unmatched path has no route: one series for all of them, so a scan cannot mint series.
      const pattern = route || 'unmatched'
      metrics.requests.observe({ method: request.method, route: pattern, status: String(status) }, (performance.now() - start) / 1000)
      const replayed = response ? response.headers.get('idempotent-replayed') : (set.headers as Record<string, string | undefined>)['idempotent-replayed']
      if (replayed === 'true') metrics.replays.inc()
      if (pattern === TOKEN_ROUTE) metrics.oauthTokens.inc({ outcome: status === 200 ? 'issued' : 'refused' })
    })
    .get('/metrics', ({ request }) => metricsResponse(request, token, { render: () => [metrics.registry, ...extra].map((r) => r.render()).join('') }), {
      detail: { hide: true },
    })
}
