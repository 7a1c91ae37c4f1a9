import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { accounts } from './accounts'

/**
 * A custom domain of an account. Ownership is proven by a DNS TXT record carrying `verificationToken`;
 * until `verifiedAt` is set no link can use it. A host belongs to one account at most.
 */
export const domains = pgTable(
  'domains',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull().references(() => accounts.id, { onDelete: 'cascade' }),
    hostname: text('hostname').notNull().unique(),
    verificationToken: text('verification_token').notNull(),
    verifiedAt: timestamp('verified_at', { withTimezone: true, mode: 'date' }),
    /** Where the domain's root (`/`) sends visitors, set by its owner; null: a neutral page. */
    rootUrl: text('root_url'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('domains_account_idx').on(t.accountId)],
)
