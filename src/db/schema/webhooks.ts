// Signed outgoing events (docs/webhooks.md): an account's endpoints, the outbox of events (each row
// committed in the transaction of the change it tells of) and one delivery per event and endpoint, which
// the API processes' dispatchers claim and send (src/modules/webhooks/dispatcher.ts).
import { sql } from 'drizzle-orm'
import { index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { accounts } from './accounts'

/** Every event type a delivery may carry (docs/webhooks.md#events); ping is sent by POST …/test only. */
export const EVENT_TYPES = [
  'link.created',
  'link.updated',
  'link.deleted',
  'link.disabled',
  'conversion.created',
  'routing.ab_completed',
  'domain.verified',
  'domain.unverified',
  'agent.approval_requested',
  'agent.approval_decided',
  'agent.killed',
  'ping',
] as const
export type EventType = (typeof EVENT_TYPES)[number]

export const WEBHOOK_STATUSES = ['active', 'disabled'] as const
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/**
 * An endpoint of an account. Its signing secret is needed in clear to sign, so it is stored encrypted
 * (src/modules/webhooks/secrets.ts: AES-GCM under a key derived from INTERNAL_SECRET), never hashed.
 * After a rotation the previous secret keeps signing beside the new one until `previous_secret_until`.
 */
export const webhooks = pgTable(
  'webhooks',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    /** Event types it receives, or `*` for every one. */
    events: text('events').array().notNull(),
    description: text('description'),
    status: text('status', { enum: WEBHOOK_STATUSES }).notNull().default('active'),
    secretSealed: text('secret_sealed').notNull(),
    previousSecretSealed: text('previous_secret_sealed'),
    previousSecretUntil: timestamp('previous_secret_until', { withTimezone: true, mode: 'date' }),
    /**
     * Since when every attempt to it has failed: set by the first failed attempt after a delivered one (or
     * none), cleared by a delivered one. Three days of it disable the endpoint (webhooks/upkeep.ts).
     */
    failingSince: timestamp('failing_since', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('webhooks_account_idx').on(t.accountId)],
)

/**
 * The outbox: one event, its body as sent (the signature covers these bytes, so every attempt sends the
 * same ones). Written only when an endpoint of the account subscribes to its type.
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    body: text('body').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('webhook_events_created_idx').on(t.createdAt)],
)

/**
 * One event to one endpoint: pending until a 2xx (delivered) or the last retry (failed). `attempt`
 * counts the attempts made; the response fields are the last attempt's. A dispatcher that claims it
 * sets `locked_until` (a lease, so a crashed process's claim runs out and another sends it again).
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    eventId: text('event_id')
      .notNull()
      .references(() => webhookEvents.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull().default(0),
    status: text('status', { enum: DELIVERY_STATUSES }).notNull().default('pending'),
    responseStatus: integer('response_status'),
    durationMs: integer('duration_ms'),
    error: text('error'),
    /** When a pending delivery is due; null once it is delivered or failed. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }),
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    // An endpoint's deliveries, newest first (GET …/deliveries and its cursor).
    index('webhook_deliveries_webhook_idx').on(t.webhookId, t.createdAt, t.id),
    // What the dispatchers claim: the pending ones, by when they are due.
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index('webhook_deliveries_event_idx').on(t.eventId),
  ],
)

export type WebhookRow = typeof webhooks.$inferSelect
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect
