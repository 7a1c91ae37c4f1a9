// The outbox's upkeep, run by each dispatcher on a timer: its depth for /metrics (metrics.ts) and the
// deletion of old events. Both are safe to run in several processes at once.
import { and, asc, eq, inArray, lt, notExists, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { webhookDeliveries, webhookEvents } from '../../db/schema'
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
      oldestDue: sql<string | null>`min(${webhookDeliveries.nextAttemptAt}) filter (where ${webhookDeliveries.nextAttemptAt} <= ${at})`,
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
