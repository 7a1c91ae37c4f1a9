// The outbox's upkeep, run by each dispatcher on a timer: its depth for /metrics (metrics.ts), the
// deletion of old events, and the disabling of endpoints that have failed for days. Each is safe to run
// in several processes at once.
import { and, asc, eq, inArray, lt, lte, notExists, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { accounts, webhookDeliveries, webhookEvents, webhooks } from '../../db/schema'
import { errorSummary } from '../../lib/errors'
import type { Mailer, MailMessage } from '../../mail/mailer'
import { figures } from './metrics'

/** Events, with their deliveries, are kept this long once none is pending (GET …/deliveries shows them). */
export const EVENT_RETENTION_MS = 30 * 86_400_000
/** Events deleted by one statement: a long backlog goes over several hours instead of one long delete. */
const PRUNE_BATCH = 1000

/** Counts the pending deliveries and the age of the oldest due one into the /metrics figures. */
export async function measureOutbox(db: Db, nowMs: number): Promise<void> {
  const at = new Date(nowMs)
  const [row] = await db
    .select({
      pending: sql<string>`count(*)`,
      oldestDue: sql<string | null>`min(${webhookDeliveries.nextAttemptAt}) filter (where ${webhookDeliveries.nextAttemptAt} <= ${at.toISOString()}::timestamptz)`,
    })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.status, 'pending'))
  figures.outboxPending = Number(row?.pending ?? 0)
  figures.oldestDueSeconds = row?.oldestDue ? Math.max(0, Math.round((nowMs - new Date(row.oldestDue).getTime()) / 1000)) : 0
}

/** Deletes up to PRUNE_BATCH events older than EVENT_RETENTION_MS that have no pending delivery; returns how many. */
export async function pruneEvents(db: Db, nowMs: number): Promise<number> {
  const pending = db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.eventId, webhookEvents.id), eq(webhookDeliveries.status, 'pending')))
  const old = db
    .select({ id: webhookEvents.id })
    .from(webhookEvents)
    .where(and(lt(webhookEvents.createdAt, new Date(nowMs - EVENT_RETENTION_MS)), notExists(pending)))
    .orderBy(asc(webhookEvents.createdAt))
    .limit(PRUNE_BATCH)
  // The deliveries go with their event (on delete cascade).
  const deleted = await db.delete(webhookEvents).where(inArray(webhookEvents.id, old)).returning({ id: webhookEvents.id })
  return deleted.length
}

/**
 * An endpoint every attempt to which has failed this long is disabled: by then each event queued when
 * the failures began has used up the retry schedule (44.7 h by default), and an endpoint left active
 * would keep filling the outbox with events nobody receives.
 */
export const DISABLE_AFTER_FAILING_MS = 3 * 86_400_000

/** The mail its account gets when an endpoint is disabled for its failures. */
export function disabledEndpointMail(to: string, webhook: { id: string; url: string }, failingSince: Date, publicApiUrl: string): MailMessage {
  return {
    to,
    subject: `Webhook disabled: ${webhook.url}`,
    text: [
      `Every delivery to your webhook ${webhook.id} (${webhook.url}) has failed since ${failingSince.toISOString()}, so it was disabled:`,
      'no more events are queued for it, and those pending were marked failed.',
      '',
      `Its deliveries and their errors: GET ${publicApiUrl}/api/v1/webhooks/${webhook.id}/deliveries`,
      `Once the endpoint answers again, turn it back on: PATCH ${publicApiUrl}/api/v1/webhooks/${webhook.id} {"status": "active"},`,
      `or in the dashboard (${publicApiUrl}/app).`,
    ].join('\n'),
  }
}

/**
 * Disables the active endpoints that have been failing for DISABLE_AFTER_FAILING_MS, fails their pending
 * deliveries, and mails each account. One conditional update claims each endpoint, so of several
 * processes one disables it and one mail goes. A mail that fails is logged; the endpoint stays disabled.
 * Returns the ids disabled.
 */
export async function disableFailingEndpoints(db: Db, mailer: Mailer, publicApiUrl: string, nowMs: number, log: (line: string) => void = () => {}, only?: readonly string[]): Promise<string[]> {
  const now = new Date(nowMs)
  const disabled = await db.transaction(async (tx) => {
    const rows = await tx
      .update(webhooks)
      .set({ status: 'disabled', updatedAt: now })
      .where(and(eq(webhooks.status, 'active'), lte(webhooks.failingSince, new Date(nowMs - DISABLE_AFTER_FAILING_MS)), only ? inArray(webhooks.id, [...only]) : undefined))
      .returning({ id: webhooks.id, url: webhooks.url, accountId: webhooks.accountId, failingSince: webhooks.failingSince })
    if (rows.length > 0) {
      await tx
        .update(webhookDeliveries)
        .set({ status: 'failed', error: 'the webhook was disabled: every attempt failed for 3 days', nextAttemptAt: null, lockedUntil: null })
        .where(
          and(
            inArray(
              webhookDeliveries.webhookId,
              rows.map((row) => row.id),
            ),
            eq(webhookDeliveries.status, 'pending'),
          ),
        )
    }
    return rows
  })
  for (const row of disabled) {
    try {
      const [account] = await db.select({ email: accounts.email }).from(accounts).where(eq(accounts.id, row.accountId)).limit(1)
      if (account) await mailer.send(disabledEndpointMail(account.email, row, row.failingSince!, publicApiUrl))
    } catch (error) {
      log(`webhook ${row.id} disabled, its owner not mailed: ${errorSummary(error)}`)
    }
  }
  return disabled.map((row) => row.id)
}
