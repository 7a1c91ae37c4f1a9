import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { accounts } from './accounts'

/**
 * A custom domain of an account. Ownership is proven by a DNS TXT record carrying `verificationToken`;
 * until `verifiedAt` is set no link can use it. A host belongs to one account at most. A verified domain's
 * record is looked up again daily; a record missing for seven days unverifies it.
 */
export const domains = pgTable(
  'domains',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    hostname: text('hostname').notNull().unique(),
    verificationToken: text('verification_token').notNull(),
    verifiedAt: timestamp('verified_at', { withTimezone: true, mode: 'date' }),
    /** Where the domain's root (`/`) sends visitors, set by its owner; null: a neutral page. */
    rootUrl: text('root_url'),
    /** When the daily re-check last looked the TXT record up (modules/domains/recheck.ts); null: not yet. */
    recheckedAt: timestamp('rechecked_at', { withTimezone: true, mode: 'date' }),
    /**
     * The first re-check of the current run that did not find the TXT record (its owner was mailed then);
     * null while the record is there. Seven days after it the domain is unverified.
     */
    recordMissingSince: timestamp('record_missing_since', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('domains_account_idx').on(t.accountId)],
)
