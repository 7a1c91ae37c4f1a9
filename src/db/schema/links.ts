import { sql } from 'drizzle-orm'
import { date, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { accounts } from './accounts'
import { guestSessions } from './guests'

/** What visitors get: the redirect, a warning first, or a 410 page. */
export const LINK_STATES = ['ok', 'flagged', 'disabled'] as const
export type LinkState = (typeof LINK_STATES)[number]

/** A short link. (domain, alias) is unique; domains are stored lower-case, aliases as given. */
export const links = pgTable(
  'links',
  {
    id: text('id').primaryKey(),
    domain: text('domain').notNull(),
    alias: text('alias').notNull(),
    url: text('url').notNull(),
    guestId: text('guest_id').references(() => guestSessions.id, { onDelete: 'set null' }),
    /** Owner once registered accounts exist (claimed from the guest on verify). */
    accountId: text('account_id').references(() => accounts.id, { onDelete: 'cascade' }),
    passwordHash: text('password_hash'),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
    activatedAt: timestamp('activated_at', { withTimezone: true, mode: 'date' }),
    /** Rules and an A/B test (src/modules/links/routing.ts); null: every visitor gets `url`. */
    routing: jsonb('routing').$type<LinkRouting>(),
    /** When a running A/B test ends; null otherwise. What the completion sweep looks for. */
    abEndsAt: timestamp('ab_ends_at', { withTimezone: true, mode: 'date' }),
    /** ok; flagged (visitors see a warning first); disabled (410, for abuse). docs/operators.md */
    state: text('state', { enum: LINK_STATES }).notNull().default('ok'),
    /** Why the state is not ok (an operator's reason, a list, reports), for operators only. */
    stateReason: text('state_reason'),
    /**
     * The destination's host, lower-case and reversed ("example.evil"), kept by Postgres: a banned host
     * and its subdomains are one index range (`= 'example.evil' OR LIKE 'example.evil.%'`).
     */
    urlHostReversed: text('url_host_rev').generatedAlwaysAs(sql`reverse(lower(substring(url from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#:]+)')))`),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('links_domain_alias_key').on(t.domain, t.alias),
    index('links_ab_ends_idx').on(t.abEndsAt).where(sql`${t.abEndsAt} is not null`),
    index('links_url_host_rev_idx').on(t.urlHostReversed.op('text_pattern_ops')),
    index('links_state_idx').on(t.state).where(sql`${t.state} <> 'ok'`),
    index('links_guest_idx').on(t.guestId).where(sql`${t.guestId} is not null`),
    index('links_account_idx').on(t.accountId, t.createdAt, t.id).where(sql`${t.accountId} is not null`),
  ],
)

/** A routing rule as stored and answered: the conditions as the API takes them. */
export interface StoredRule {
  id: string
  url: string
  when: {
    device?: string[]
    country?: string[]
    language?: string[]
    query?: Record<string, string | null>
    ip?: string[]
    after?: string
    before?: string
  }
}

/** An A/B test as stored and answered. */
export interface StoredAb {
  variants: { id: string; url: string; weight: number }[]
  sticky: boolean
  ends_at: string | null
  winner_by: 'leads' | 'sales' | 'conversions' | null
  status: 'running' | 'completed'
  winner: string | null
  completed_at: string | null
  /** When the test began: its clicks are the link's clicks of its variants since then. */
  started_at: string
}

export interface LinkRouting {
  rules: StoredRule[]
  ab: StoredAb | null
}

/** A row of `links` as drizzle reads it. */
export type LinkRow = typeof links.$inferSelect

/**
 * How many of an account's links were created in each calendar month (UTC; the quota's month, account/
 * meta.ts): the month's quota count and a list's total read these rows instead of counting links. Kept
 * by triggers on `links` (migration 0009) on every path that adds, removes or moves a link; never
 * written by the application.
 */
export const accountLinkMonths = pgTable(
  'account_link_months',
  {
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** The month's first day, e.g. "2026-11-01". */
    month: date('month', { mode: 'string' }).notNull(),
    links: integer('links').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.month] })],
)
