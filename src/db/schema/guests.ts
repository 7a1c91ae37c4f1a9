import { integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

/** A guest session: what a gt_ token unlocks. The token itself is only ever stored as a hash. */
export const guestSessions = pgTable('guest_sessions', {
  id: text('id').primaryKey(),
  tokenHash: text('token_hash').notNull().unique(),
  expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  /** Authenticated requests made with the token; capped at the guest limit max_requests. */
  requestCount: integer('request_count').notNull().default(0),
  /** Links created with the token; capped at the guest limit max_links. */
  linkCount: integer('link_count').notNull().default(0),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})
