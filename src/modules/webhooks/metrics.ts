// The webhooks' figures for the API's /metrics: attempts by outcome (delivered, retry: failed and due
// again, failed: the last retry failed), and the outbox as the dispatcher last counted it (every 15 s):
// deliveries pending, and how long the oldest due one has waited. Kept per process, where the dispatcher
// runs (src/boot.ts), and read at scrape time.
import type { MetricsRegistry } from '../../../core/metrics'

export type AttemptOutcome = 'delivered' | 'retry' | 'failed'

export const figures = {
  attempts: { delivered: 0, retry: 0, failed: 0 } as Record<AttemptOutcome, number>,
  outboxPending: 0,
  oldestDueSeconds: 0,
}

export function countOutcome(outcome: AttemptOutcome): void {
  figures.attempts[outcome]++
}

export function webhookMetrics(registry: MetricsRegistry): void {
  registry.counterFrom('linkservice_webhook_attempts_total', 'Webhook delivery attempts by outcome: delivered (2xx), retry (failed, due again), failed (the last retry failed)', () =>
    Object.entries(figures.attempts).map(([outcome, value]) => ({ labels: { outcome }, value })),
  )
  registry.gaugeFrom('linkservice_webhook_outbox_pending', 'Webhook deliveries pending (due now or waiting for a retry), as last counted', () => figures.outboxPending)
  registry.gaugeFrom(
    'linkservice_webhook_outbox_oldest_due_seconds',
    'Seconds the oldest due webhook delivery has waited to be sent; grows when the dispatchers fall behind',
    () => figures.oldestDueSeconds,
  )
}
