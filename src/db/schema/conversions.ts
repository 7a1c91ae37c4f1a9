import { sql } from 'drizzle-orm'
import { index, jsonb, numeric, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { accounts } from './accounts'
import { links } from './links'

/**
 * Conversions reported for a Pro link's click (docs/statistics.md#conversions). `value` is an exact decimal (numeric):
 * currencies differ in minor units, so no integer scale fits all. Retries are recognised by the two
 * partial unique indexes (per account: type + externalOrderId, and eventId); the insert claims the key
 * atomically (ON CONFLICT DO NOTHING) and a loser reads the original. For purchase, sale and refund the
 * order key alone decides, by value and currency; otherwise `payload_hash` tells a true
 * retry from a different report under the same key (409).
 */
export const conversions = pgTable(
  'conversions',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    linkId: text('link_id')
      .notNull()
      .references(() => links.id, { onDelete: 'cascade' }),
    clickId: text('click_id').notNull(),
    conversionType: text('conversion_type').notNull(),
    value: numeric('value', { precision: 24, scale: 6 }),
    currency: text('currency'),
    externalOrderId: text('external_order_id'),
    eventId: text('event_id'),
    occurredAt: timestamp('occurred_at', { withTimezone: true, mode: 'date' }).notNull(),
    source: text('source'),
    metadata: jsonb('metadata'),
    payloadHash: text('payload_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('conversions_account_type_order_key').on(t.accountId, t.conversionType, t.externalOrderId).where(sql`${t.externalOrderId} is not null`),
    uniqueIndex('conversions_account_event_key').on(t.accountId, t.eventId).where(sql`${t.eventId} is not null`),
    index('conversions_link_idx').on(t.linkId, t.occurredAt),
    // The per-click cap counts a click's conversions of one type (CONVERSIONS_PER_CLICK).
    index('conversions_click_type_idx').on(t.clickId, t.conversionType),
  ],
)
