import { sql } from 'drizzle-orm'
import { boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { PLANS } from '../../lib/plans'
import { guestSessions } from './guests'

export { PLANS, type Plan } from '../../lib/plans'

/** A registered account. E-mail is stored lower-case and is unique. */
export const accounts = pgTable('accounts', {
  id: text('id').primaryKey(),
  email: text('email').notNull().unique(),
  plan: text('plan', { enum: PLANS }).notNull().default('free'),
  /** monthly | yearly while on Pro. */
  planInterval: text('plan_interval'),
  proSince: timestamp('pro_since', { withTimezone: true, mode: 'date' }),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  /**
   * Set while an operator has suspended the account (docs/operators.md): its credentials were revoked,
   * its links disabled, and sign-in is refused until an operator restores it.
   */
  suspendedAt: timestamp('suspended_at', { withTimezone: true, mode: 'date' }),
  /**
   * Whether each new approval of an Agent's call is mailed to the address (src/modules/approvals/notify.ts);
   * PATCH /api/v1/account/notifications turns it off.
   */
  approvalEmails: boolean('approval_emails').notNull().default(true),
})

/**
 * mk_ API keys: only the SHA-256 of a key is stored; `start` (its first characters) and `name` help
 * people tell keys apart. `scopes` null is the account's full access, else the OAuth scopes the key is
 * held to (src/lib/agent-access.ts). last_used_at is written at most once a minute (src/modules/keys/verdicts.ts).
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    keyHash: text('key_hash').notNull().unique(),
    start: text('start').notNull(),
    // The default names the keys made before names existed, and any a process of the previous
    // version inserts during a rolling deploy (keys/verdicts.ts DEFAULT_KEY_NAME: the same words).
    name: text('name').notNull().default('Default key'),
    scopes: jsonb('scopes').$type<string[]>(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('api_keys_account_idx').on(t.accountId)],
)

/**
 * A verification code sent to an e-mail address for a guest session. Only its hash is stored; it is
 * single-use, expires, and is refused after a few wrong attempts.
 */
export const emailVerifications = pgTable(
  'email_verifications',
  {
    id: text('id').primaryKey(),
    guestId: text('guest_id')
      .notNull()
      .references(() => guestSessions.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    codeHash: text('code_hash').notNull(),
    attempts: integer('attempts').notNull().default(0),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('email_verifications_guest_idx').on(t.guestId, t.email).where(sql`${t.usedAt} is null`)],
)

/** A Pro checkout started by POST /account/upgrade; the plan changes only when the provider confirms it. */
export const checkouts = pgTable(
  'checkouts',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    interval: text('interval').notNull(),
    /** Price as shown to the buyer, e.g. "9.00 USD". */
    price: text('price').notNull(),
    status: text('status', { enum: ['pending', 'paid', 'expired'] })
      .notNull()
      .default('pending'),
    /** The provider's id for the session (Stripe Checkout Session id), for its webhook. */
    providerRef: text('provider_ref'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    confirmedAt: timestamp('confirmed_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('checkouts_account_idx').on(t.accountId), uniqueIndex('checkouts_provider_ref_key').on(t.provider, t.providerRef)],
)
