// An account's webhooks as its owner manages them (index.ts): endpoints, their secret, a test event, the
// deliveries and a redelivery. Another account's webhook is "not found", never "forbidden".
import { and, asc, count, desc, eq } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { accounts, type EventType, webhookDeliveries, webhookEvents, webhooks, type WebhookDeliveryRow, type WebhookRow } from '../../db/schema'
import { isId, newId } from '../../lib/ids'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { microseconds, olderThan, pageOf } from '../admin/cursor'
import { type CreateWebhookInput, type DeliveryView, MAX_DESCRIPTION, MAX_WEBHOOKS, type UpdateWebhookInput, type WebhookView } from './model'
import { writeEvents } from './outbox'
import { newWebhookSecret, seal, sealingKey } from './secrets'
import { checkTargetUrl } from './target'

/** How long a rotated-out secret keeps signing beside the new one: receivers have a day to switch. */
export const PREVIOUS_SECRET_MS = 24 * 3_600_000

export function webhookView(row: WebhookRow): WebhookView {
  return { id: row.id, url: row.url, events: row.events, description: row.description, status: row.status, created_at: row.createdAt.toISOString() }
}

export function deliveryView(row: WebhookDeliveryRow, type: string): DeliveryView {
  return {
    id: row.id,
    event_id: row.eventId,
    type,
    attempt: row.attempt,
    status: row.status,
    response_status: row.responseStatus,
    duration_ms: row.durationMs,
    error: row.error,
    next_attempt_at: row.nextAttemptAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  }
}

const notFound = () => new ApiError('WEBHOOK_NOT_FOUND')

/** `*` alone stands for every type; a list is kept without repeats, in the order given. */
function eventList(events: readonly string[]): string[] {
  return events.includes('*') ? ['*'] : [...new Set(events)]
}

function description(raw: string | null | undefined): string | null {
  const text = raw?.trim() ?? ''
  if (text.length > MAX_DESCRIPTION) throw new ApiError('VALIDATION_FAILED', `body.description: at most ${MAX_DESCRIPTION} characters.`)
  return text === '' ? null : text
}

export async function listWebhooks(db: Pick<Db, 'select'>, accountId: string): Promise<WebhookView[]> {
  const rows = await db.select().from(webhooks).where(eq(webhooks.accountId, accountId)).orderBy(asc(webhooks.createdAt), asc(webhooks.id))
  return rows.map(webhookView)
}

async function ownWebhook(db: Pick<Db, 'select'>, accountId: string, id: string): Promise<WebhookRow> {
  if (!isId('webhook', id)) throw notFound()
  const [row] = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.accountId, accountId)))
    .limit(1)
  if (!row) throw notFound()
  return row
}

export async function getWebhook(db: Pick<Db, 'select'>, accountId: string, id: string): Promise<WebhookView> {
  return webhookView(await ownWebhook(db, accountId, id))
}

/**
 * A new endpoint, at most MAX_WEBHOOKS an account: creations of one account wait on its row's lock, so
 * the count and the insert cannot interleave. Its secret is in this answer only.
 */
export async function createWebhook(services: Pick<Services, 'db' | 'config' | 'now'>, accountId: string, input: CreateWebhookInput): Promise<WebhookView & { secret: string }> {
  const url = checkTargetUrl(services.config, input.url)
  const id = newId('webhook')
  const secret = newWebhookSecret()
  const now = new Date(services.now())
  const row = await services.db.transaction(async (tx) => {
    await tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)).for('update')
    const [existing] = await tx.select({ n: count() }).from(webhooks).where(eq(webhooks.accountId, accountId))
    if (Number(existing?.n ?? 0) >= MAX_WEBHOOKS) {
      throw new ApiError('WEBHOOK_LIMIT_REACHED', `An account can have at most ${MAX_WEBHOOKS} webhooks; delete one to make room.`, { limit: MAX_WEBHOOKS, remaining: 0 })
    }
    const values = {
      id,
      accountId,
      url,
      events: eventList(input.events),
      description: description(input.description),
      secretSealed: seal(sealingKey(services.config.internalSecret), id, secret),
      createdAt: now,
      updatedAt: now,
    }
    const [inserted] = await tx.insert(webhooks).values(values).returning()
    return inserted!
  })
  return { ...webhookView(row), secret }
}

/**
 * Changes the fields sent. Disabling an endpoint fails its pending deliveries in the same transaction:
 * nothing queued reaches it later, and enabling it again sends only what happens from then on.
 */
export async function updateWebhook(services: Pick<Services, 'db' | 'config' | 'now'>, accountId: string, id: string, patch: UpdateWebhookInput): Promise<WebhookView> {
  const current = await ownWebhook(services.db, accountId, id)
  const set: Partial<WebhookRow> = {}
  if (patch.url !== undefined) set.url = checkTargetUrl(services.config, patch.url)
  if (patch.events !== undefined) set.events = eventList(patch.events)
  if (patch.description !== undefined) set.description = description(patch.description)
  if (patch.status !== undefined) set.status = patch.status
  if (Object.keys(set).length === 0) return webhookView(current)
  // A new URL, or an endpoint turned back on, starts with a clean record: its past failures do not count
  // towards its disabling (upkeep.ts).
  if (set.url !== undefined || set.status === 'active') set.failingSince = null
  const now = new Date(services.now())
  const row = await services.db.transaction(async (tx) => {
    const [updated] = await tx
      .update(webhooks)
      .set({ ...set, updatedAt: now })
      .where(and(eq(webhooks.id, current.id), eq(webhooks.accountId, accountId)))
      .returning()
    if (!updated) throw notFound()
    if (set.status === 'disabled') {
      await tx
        .update(webhookDeliveries)
        .set({ status: 'failed', error: 'the webhook was disabled', nextAttemptAt: null, lockedUntil: null })
        .where(and(eq(webhookDeliveries.webhookId, current.id), eq(webhookDeliveries.status, 'pending')))
    }
    return updated
  })
  return webhookView(row)
}

/** Deletes the endpoint and its deliveries (a claimed attempt still in flight finishes unrecorded). */
export async function deleteWebhook(db: Pick<Db, 'delete'>, accountId: string, id: string): Promise<{ id: string }> {
  if (!isId('webhook', id)) throw notFound()
  const [row] = await db
    .delete(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.accountId, accountId)))
    .returning({ id: webhooks.id })
  if (!row) throw notFound()
  return row
}

/**
 * A new secret, shown once. The one it replaces keeps signing beside it for PREVIOUS_SECRET_MS (every
 * delivery then carries both signatures); rotating again within that day drops the oldest at once.
 */
export async function rotateSecret(services: Pick<Services, 'db' | 'config' | 'now'>, accountId: string, id: string): Promise<{ secret: string }> {
  const current = await ownWebhook(services.db, accountId, id)
  const secret = newWebhookSecret()
  const now = services.now()
  const [row] = await services.db
    .update(webhooks)
    .set({
      secretSealed: seal(sealingKey(services.config.internalSecret), current.id, secret),
      previousSecretSealed: current.secretSealed,
      previousSecretUntil: new Date(now + PREVIOUS_SECRET_MS),
      updatedAt: new Date(now),
    })
    .where(and(eq(webhooks.id, current.id), eq(webhooks.accountId, accountId)))
    .returning({ id: webhooks.id })
  if (!row) throw notFound()
  return { secret }
}

function requireActive(row: WebhookRow): void {
  if (row.status !== 'active') throw new ApiError('WEBHOOK_DISABLED')
}

/** A `ping` event for this endpoint alone, queued at once: its delivery as it stands (pending). */
export async function testWebhook(services: Pick<Services, 'db' | 'now'>, accountId: string, id: string): Promise<DeliveryView> {
  const row = await ownWebhook(services.db, accountId, id)
  requireActive(row)
  const now = new Date(services.now())
  const [eventId] = await services.db.transaction((tx) => writeEvents(tx, accountId, 'ping', [row.id], [{ webhook_id: row.id }], now))
  const [delivery] = await services.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.eventId, eventId!), eq(webhookDeliveries.webhookId, row.id)))
    .limit(1)
  return deliveryView(delivery!, 'ping')
}

const deliveryColumns = { delivery: webhookDeliveries, type: webhookEvents.type, us: microseconds(webhookDeliveries.createdAt) }

/** The endpoint's deliveries, newest first, a page at a time. */
export async function listDeliveries(
  db: Pick<Db, 'select'>,
  accountId: string,
  id: string,
  page: { limit: number; cursor?: string },
): Promise<{ deliveries: DeliveryView[]; next_cursor: string | null }> {
  const webhook = await ownWebhook(db, accountId, id)
  const rows = await db
    .select(deliveryColumns)
    .from(webhookDeliveries)
    .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
    .where(and(eq(webhookDeliveries.webhookId, webhook.id), olderThan(webhookDeliveries.createdAt, webhookDeliveries.id, page.cursor)))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(page.limit + 1)
  const { items, next } = pageOf(
    rows.map((row) => ({ ...row, id: row.delivery.id })),
    page.limit,
  )
  return { deliveries: items.map((item) => deliveryView(item.delivery, item.type)), next_cursor: next }
}

/**
 * The delivery's event once more, as a new delivery due at once: the same event id (receivers that
 * deduplicate by webhook-id see a repeat) and the same body, signed at the time it is sent.
 */
export async function redeliver(services: Pick<Services, 'db' | 'now'>, accountId: string, id: string, deliveryId: string): Promise<DeliveryView> {
  const webhook = await ownWebhook(services.db, accountId, id)
  if (!isId('webhookDelivery', deliveryId)) throw new ApiError('WEBHOOK_DELIVERY_NOT_FOUND')
  const [original] = await services.db
    .select({ eventId: webhookDeliveries.eventId, type: webhookEvents.type })
    .from(webhookDeliveries)
    .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhook.id)))
    .limit(1)
  if (!original) throw new ApiError('WEBHOOK_DELIVERY_NOT_FOUND')
  requireActive(webhook)
  const now = new Date(services.now())
  const [row] = await services.db
    .insert(webhookDeliveries)
    .values({ id: newId('webhookDelivery'), webhookId: webhook.id, eventId: original.eventId, nextAttemptAt: now, createdAt: now })
    .returning()
  return deliveryView(row!, original.type as EventType)
}
