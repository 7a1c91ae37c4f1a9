import { sql } from 'drizzle-orm'
import { index, integer, pgTable, primaryKey, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { accounts } from './accounts'
import { links } from './links'

/** Integer ids; names unique per account regardless of case. */
export const tags = pgTable(
  'tags',
  {
    id: serial('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    color: text('color').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('tags_account_name_key').on(t.accountId, sql`lower(${t.name})`)],
)

export const linkTags = pgTable(
  'link_tags',
  {
    linkId: text('link_id')
      .notNull()
      .references(() => links.id, { onDelete: 'cascade' }),
    tagId: integer('tag_id')
      .notNull()
      .references(() => tags.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.linkId, t.tagId] }), index('link_tags_tag_idx').on(t.tagId)],
)
