// The transactional outbox: a change that an event tells of writes the event, and one delivery per
// endpoint subscribed to it, in the change's own transaction, so an event exists exactly when its change
// committed and a crash loses none. The dispatcher (dispatcher.ts) sends them afterwards. Other modules
// reach these two functions through Services.webhookOutbox (createApi wires it), importing nothing here.
//
// An account without an endpoint for the type writes nothing: the check is one indexed read of the
// account's webhooks (at most 10 rows) inside the same transaction, which a caller sends in one write
// with its own statements (links/create.ts), so a shorten pays no extra round trip for it
// (decision 0038 has the figures). A cache would save the read but could miss the first events after an
// endpoint is added in another process.
import { and, arrayOverlaps, eq } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { type EventType, webhookDeliveries, webhookEvents, webhooks } from '../../db/schema'
import { newId } from '../../lib/ids'
import type { WebhookOutbox } from '../../services'

type Tx = Pick<Db, 'select' | 'insert'>

/** The body every attempt sends, signed as these bytes: `{id, type, created_at, data}`. */
export function eventBody(id: string, type: EventType, createdAt: Date, data: unknown): string {
  return JSON.stringify({ id, type, created_at: createdAt.toISOString(), data })
}

/** The ids of the account's active endpoints that receive `type` (subscribed to it, or to `*`). */
export async function subscribers(tx: Pick<Db, 'select'>, accountId: string, type: EventType): Promise<string[]> {
  const rows = await tx
    .select({ id: webhooks.id })
    .from(webhooks)
    .where(and(eq(webhooks.accountId, accountId), eq(webhooks.status, 'active'), arrayOverlaps(webhooks.events, [type, '*'])))
  return rows.map((row) => row.id)
}

/**
 * One event for each of `data` (in order), each queued for every endpoint of `webhookIds`, due at once.
 * Returns the event ids. Nothing is written without an endpoint or without data.
 */
export async function writeEvents(tx: Tx, accountId: string, type: EventType, webhookIds: readonly string[], data: readonly unknown[], now: Date): Promise<string[]> {
  if (webhookIds.length === 0 || data.length === 0) return []
  const events = data.map((item) => {
    const id = newId('webhookEvent')
    return { id, accountId, type, body: eventBody(id, type, now, item), createdAt: now }
  })
  await tx.insert(webhookEvents).values(events)
  const deliveries = events.flatMap((event) => webhookIds.map((webhookId) => ({ id: newId('webhookDelivery'), webhookId, eventId: event.id, nextAttemptAt: now, createdAt: now })))
  await tx.insert(webhookDeliveries).values(deliveries)
  return events.map((event) => event.id)
}

/** The outbox as Services.webhookOutbox: what createApi wires, and what the background jobs' services need too. */
export const webhookOutbox: WebhookOutbox = { subscribers, write: writeEvents }
