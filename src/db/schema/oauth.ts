import { sql } from 'drizzle-orm'
import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { accounts } from './accounts'

/**
 * An OAuth client registered through POST /oauth/register (RFC 7591). Public clients only: no secret
 * exists, so none is stored; `token_endpoint_auth_method` is always "none". Redirect URIs are matched
 * exactly at authorization. Clients named by a Client ID Metadata Document (an https client_id) are not
 * stored here: their document is fetched and cached.
 */
export const oauthClients = pgTable(
  'oauth_clients',
  {
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
    /**
     * When it first obtained a token. A client still without one 24 h after registering is unused: it is
     * refused, and deleted by the sweep (modules/oauth/unused-clients.ts).
     */
    firstTokenAt: timestamp('first_token_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('oauth_clients_unused_idx').on(t.createdAt).where(sql`${t.firstTokenAt} is null`)],
)

export const AGENT_STATUSES = ['active', 'killed'] as const
export type AgentStatus = (typeof AGENT_STATUSES)[number]

/**
 * The account-side identity of a machine client: every at_ token belongs to one. OAuth consent creates
 * (or reuses) the Agent of (account, client); one made directly has no client. Its scopes bound every
 * token it holds; a kill refuses them all.
 */
export const agents = pgTable(
  'agents',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    policy: jsonb('policy').$type<{ require_approval: string[] }>().notNull(),
    status: text('status', { enum: AGENT_STATUSES }).notNull().default('active'),
    /** The OAuth client it was created for by consent; null when the human created it directly. */
    clientId: text('client_id'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    killedAt: timestamp('killed_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('agents_account_idx').on(t.accountId), uniqueIndex('agents_account_client_unique').on(t.accountId, t.clientId).where(sql`${t.clientId} is not null`)],
)

export const OAUTH_REQUEST_STATUSES = ['pending', 'approved', 'denied'] as const

/**
 * A consent request (oreq_…): a checked GET /oauth/authorize waiting for the human's decision, 10 minutes.
 * `expired` is not stored: a pending request past expires_at is expired.
 */
export const oauthRequests = pgTable('oauth_requests', {
  id: text('id').primaryKey(),
  clientId: text('client_id').notNull(),
  redirectUri: text('redirect_uri').notNull(),
  scopes: jsonb('scopes').$type<string[]>().notNull(),
  resource: text('resource').notNull(),
  state: text('state'),
  codeChallenge: text('code_challenge').notNull(),
  status: text('status', { enum: OAUTH_REQUEST_STATUSES }).notNull().default('pending'),
  /** The human who decided (set with the decision). */
  accountId: text('account_id').references(() => accounts.id, { onDelete: 'cascade' }),
  expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  decidedAt: timestamp('decided_at', { withTimezone: true, mode: 'date' }),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})

/**
 * An authorization code: only its hash is stored; single-use, 60 s, bound to the client, redirect URI,
 * PKCE challenge and resource. `familyId` names the tokens its exchange issued, so a replay revokes them.
 */
export const oauthCodes = pgTable('oauth_codes', {
  codeHash: text('code_hash').primaryKey(),
  requestId: text('request_id').notNull(),
  clientId: text('client_id').notNull(),
  accountId: text('account_id')
    .notNull()
    .references(() => accounts.id, { onDelete: 'cascade' }),
  agentId: text('agent_id')
    .notNull()
    .references(() => agents.id, { onDelete: 'cascade' }),
  redirectUri: text('redirect_uri').notNull(),
  codeChallenge: text('code_challenge').notNull(),
  resource: text('resource').notNull(),
  scopes: jsonb('scopes').$type<string[]>().notNull(),
  familyId: text('family_id').notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  usedAt: timestamp('used_at', { withTimezone: true, mode: 'date' }),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
})

export const OAUTH_TOKEN_KINDS = ['access', 'refresh'] as const

/**
 * at_ and rt_ tokens, stored as their SHA-256 only. A family is what one grant issued (a code exchange
 * and every rotation after it): reuse of a rotated refresh token revokes the whole family.
 */
export const oauthTokens = pgTable(
  'oauth_tokens',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull().unique(),
    kind: text('kind', { enum: OAUTH_TOKEN_KINDS }).notNull(),
    familyId: text('family_id').notNull(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    /** The OAuth client it was issued to; null for a token the human minted for an Agent directly. */
    clientId: text('client_id'),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    /** The audience (RFC 8707): the protected resource it may be used at. */
    resource: text('resource').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** A refresh token once exchanged: presenting it again is reuse. */
    rotatedAt: timestamp('rotated_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('oauth_tokens_family_idx').on(t.familyId), index('oauth_tokens_agent_idx').on(t.agentId)],
)

/**
 * A signed-in human (consent, approvals, the dashboard): the cookie carries the secret, the table only
 * its hash. Revocable (sign-out), and it expires.
 */
export const humanSessions = pgTable(
  'human_sessions',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull().unique(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** How the human signed in: email-code | github | google. */
    method: text('method').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('human_sessions_account_idx').on(t.accountId)],
)

/** A one-time sign-in code mailed to an account's address: HMAC-stored, single-use, few attempts. */
export const signInCodes = pgTable(
  'sign_in_codes',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    attempts: integer('attempts').notNull().default(0),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('sign_in_codes_account_idx').on(t.accountId).where(sql`${t.usedAt} is null`)],
)

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired', 'executed', 'failed'] as const
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number]

/**
 * An Agent's call held for a human decision (apr_…): the request as it came (to run it on approval,
 * once), 24 hours to decide. `pending` past expires_at reads as expired. `approved` is the short state
 * of the one execution; it ends as `executed` or `failed` with the route's answer in `result`.
 */
export const agentApprovals = pgTable(
  'agent_approvals',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    operation: text('operation').notNull(),
    /** The scopes the route needs: checked again, against the Agent's, when it runs. */
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    method: text('method').notNull(),
    path: text('path').notNull(),
    query: jsonb('query').$type<Record<string, string>>().notNull(),
    body: jsonb('body'),
    /** How the Agent called (rest | mcp): its execution is audited the same way. */
    via: text('via').notNull().default('rest'),
    status: text('status', { enum: APPROVAL_STATUSES }).notNull().default('pending'),
    /** SHA-256 of (Agent, Idempotency-Key) when the call had one: a retry finds its approval. */
    idempotencyKey: text('idempotency_key'),
    fingerprint: text('fingerprint').notNull(),
    result: jsonb('result').$type<{ status: number; body: unknown }>(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    decidedAt: timestamp('decided_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    index('agent_approvals_account_idx').on(t.accountId, t.createdAt),
    index('agent_approvals_agent_pending_idx').on(t.agentId).where(sql`${t.status} = 'pending'`),
    uniqueIndex('agent_approvals_idempotency_unique').on(t.agentId, t.idempotencyKey).where(sql`${t.idempotencyKey} is not null`),
  ],
)
