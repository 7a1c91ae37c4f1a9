// What operators of a public instance act on: reports from visitors, hosts they banned, and the record
// of every operator action (docs/operators.md).
import { sql } from 'drizzle-orm'
import { index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { accounts } from './accounts'
import { links } from './links'

export const REPORT_REASONS = ['phishing', 'malware', 'spam', 'illegal', 'other'] as const
export type ReportReason = (typeof REPORT_REASONS)[number]

/**
 * A visitor's report of a link. The reporter is the client address as the limits see it, stored as a
 * keyed hash (like clicks'), and its network's hash, which counts distinct networks toward flagging.
 */
export const reports = pgTable(
  'reports',
  {
    id: text('id').primaryKey(),
    linkId: text('link_id')
      .notNull()
      .references(() => links.id, { onDelete: 'cascade' }),
    reporterHash: text('reporter_hash').notNull(),
    networkHash: text('network_hash').notNull(),
    reason: text('reason', { enum: REPORT_REASONS }).notNull(),
    details: text('details'),
    email: text('email'),
    /** open until an operator dismisses it or acts on its link. */
    status: text('status', { enum: ['open', 'closed'] })
      .notNull()
      .default('open'),
    /** What closed it: dismissed, or the action taken on the link (flag, disable, restore). */
    resolution: text('resolution'),
    closedAt: timestamp('closed_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    // One open report per reporter and link.
    uniqueIndex('reports_open_reporter_key').on(t.linkId, t.reporterHash).where(sql`${t.status} = 'open'`),
    index('reports_status_idx').on(t.status, t.createdAt, t.id),
  ],
)

/** Hosts an operator banned: with their subdomains, refused as destinations by every process. */
export const bannedHosts = pgTable('banned_hosts', {
  host: text('host').primaryKey(),
  reason: text('reason'),
  bannedBy: text('banned_by').references(() => accounts.id, { onDelete: 'set null' }),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})

/** Every operator action: who, what, on what, why and when. Append-only. */
export const operatorActions = pgTable(
  'operator_actions',
  {
    id: text('id').primaryKey(),
    operatorId: text('operator_id').references(() => accounts.id, { onDelete: 'set null' }),
    action: text('action').notNull(),
    /** What it acted on: a link id, a report id, a host, an account id. */
    target: text('target').notNull(),
    reason: text('reason'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('operator_actions_created_idx').on(t.createdAt)],
)
