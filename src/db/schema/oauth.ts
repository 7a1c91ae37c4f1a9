import { jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

/**
 * An OAuth client registered through POST /oauth/register (RFC 7591). Public clients only: no secret
 * exists, so none is stored; `token_endpoint_auth_method` is always "none". Redirect URIs are matched
 * exactly at authorization.
 */
export const oauthClients = pgTable('oauth_clients', {
  id: text('id').primaryKey(),
  clientName: text('client_name'),
  redirectUris: jsonb('redirect_uris').$type<string[]>().notNull(),
  grantTypes: jsonb('grant_types').$type<string[]>().notNull(),
  scope: text('scope'),
  clientUri: text('client_uri'),
  logoUri: text('logo_uri'),
  softwareId: text('software_id'),
  softwareVersion: text('software_version'),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})
