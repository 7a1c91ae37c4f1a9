// The reputation checks' figures for the API's /metrics, read at scrape time from the counters the
// queue keeps (service.ts): per check (safe_dns, web_risk) the destinations asked about, found unsafe
// and not answered; the links dropped at the queue's bound; the links waiting or being checked.
import type { MetricsRegistry, Sample } from '../../../core/metrics'
import type { CheckCounts, Reputation } from './service'

/** `reputation` is asked at each scrape: the checks may be made after the registry (on first use). */
export function reputationMetrics(registry: MetricsRegistry, reputationNow: () => Reputation): void {
  const reputation = {
    get counters() {
      return reputationNow().counters
    },
    pending: () => reputationNow().pending(),
  }
  const perCheck = (field: keyof CheckCounts) => (): Sample[] => Object.entries(reputation.counters.byCheck).map(([check, counts]) => ({ labels: { check }, value: counts[field] }))
  registry.counterFrom('linkservice_reputation_checks_total', 'Destinations asked about by a reputation check, by check (safe_dns, web_risk)', perCheck('checks'))
  registry.counterFrom('linkservice_reputation_unsafe_total', 'Destinations a reputation check answered unsafe (their links are flagged)', perCheck('unsafe'))
  registry.counterFrom('linkservice_reputation_failures_total', 'Reputation checks not answered (timeout, HTTP error, unreadable answer): nothing flagged', perCheck('failures'))
  registry.counterFrom('linkservice_reputation_dropped_total', 'Links left unchecked because the reputation queue was full', () => reputation.counters.dropped)
  registry.gaugeFrom('linkservice_reputation_pending', 'Links waiting for, or in, their reputation checks', () => reputation.pending())
}
