// Agents: the account-side identity of a machine client (docs/agents-and-mcp.md). Every at_ token
// belongs to one; its scopes bound the token's, its status (active | killed) is checked on every call.
// OAuth consent creates the Agent of (account, client) or reuses it.
import { and, desc, eq, isNull, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { agentApprovals, agents, oauthTokens } from '../../db/schema'
import { isId, newId } from '../../lib/ids'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { DEFAULT_REQUIRE_APPROVAL, isScope, type Operation } from '../../lib/agent-access'
import { announceRevocation } from '../../plugins/revocations'
import { ACCESS_TOKEN_TTL_S, issueTokens } from './tokens'

export type AgentRow = typeof agents.$inferSelect
type Tx = Pick<Db, 'select' | 'insert' | 'update'>

/**
 * The Agent of (account, OAuth client), created on first consent; on a later consent its scopes grow to
 * include the newly granted ones (the human approved them). Runs inside the caller's transaction; a
 * concurrent first consent is absorbed by the unique index.
 */
export async function agentForClient(tx: Tx, accountId: string, client: { client_id: string; client_name: string | null }, scopes: readonly string[], now: Date): Promise<AgentRow> {
  const [created] = await tx
    .insert(agents)
    .values({
      id: newId('agent'),
      accountId,
      name: (client.client_name ?? client.client_id).slice(0, 100),
      scopes: [...scopes],
      policy: { require_approval: [...DEFAULT_REQUIRE_APPROVAL] },
      clientId: client.client_id,
      createdAt: now,
    })
    .onConflictDoNothing({ target: [agents.accountId, agents.clientId], where: sql`${agents.clientId} is not null` })
    .returning()
  if (created) return created
  const [existing] = await tx
    .select()
    .from(agents)
    .where(and(eq(agents.accountId, accountId), eq(agents.clientId, client.client_id)))
    .for('update')
    .limit(1)
  if (!existing) throw new Error('agent of (account, client) vanished inside its transaction')
  const missing = scopes.filter((s) => !existing.scopes.includes(s))
  if (missing.length === 0) return existing
  const [grown] = await tx
    .update(agents)
    .set({ scopes: [...existing.scopes, ...missing] })
    .where(eq(agents.id, existing.id))
    .returning()
  return grown!
}

/** The Agent as the API shows it. */
export function agentView(row: AgentRow) {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    policy: { require_approval: row.policy.require_approval },
    status: row.status,
    client_id: row.clientId,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
  }
}

function checkScopes(scopes: readonly string[], field: string): string[] {
  const unknown = scopes.find((s) => !isScope(s))
  if (unknown !== undefined) throw new ApiError('VALIDATION_FAILED', `${field}: unknown scope ${unknown.slice(0, 40)}; see /.well-known/oauth-protected-resource.`)
  return [...new Set(scopes)]
}

/** The account's Agent, or 404 (another account's Agent is "not found" too). */
export async function ownAgent(services: Pick<Services, 'db'>, accountId: string, agentId: string): Promise<AgentRow> {
  if (!isId('agent', agentId)) throw new ApiError('AGENT_NOT_FOUND')
  const [row] = await services.db
    .select()
    .from(agents)
    .where(and(eq(agents.id, agentId), eq(agents.accountId, accountId)))
    .limit(1)
  if (!row) throw new ApiError('AGENT_NOT_FOUND')
  return row
}

export async function listAgents(services: Pick<Services, 'db'>, accountId: string) {
  const rows = await services.db.select().from(agents).where(eq(agents.accountId, accountId)).orderBy(desc(agents.createdAt), desc(agents.id))
  return rows.map(agentView)
}

export interface AgentInput {
  name: string
  scopes: string[]
  policy?: { require_approval: Operation[] }
}

export async function createAgent(services: Pick<Services, 'db' | 'now'>, accountId: string, input: AgentInput) {
  const [row] = await services.db
    .insert(agents)
    .values({
      id: newId('agent'),
      accountId,
      name: input.name.trim(),
      scopes: checkScopes(input.scopes, 'body.scopes'),
      policy: { require_approval: [...new Set(input.policy?.require_approval ?? DEFAULT_REQUIRE_APPROVAL)] },
      createdAt: new Date(services.now()),
    })
    .returning()
  return agentView(row!)
}

/**
 * Renames, rescopes or changes the policy. Narrowed scopes bind the Agent's existing tokens: every
 * process drops its cached verdicts of this Agent (a token's scopes are its own that the Agent still holds).
 */
export async function updateAgent(services: Pick<Services, 'db' | 'kv'>, accountId: string, agentId: string, input: Partial<AgentInput>) {
  const before = await ownAgent(services, accountId, agentId)
  const changes: Partial<typeof agents.$inferInsert> = {}
  if (input.name !== undefined) changes.name = input.name.trim()
  if (input.scopes !== undefined) changes.scopes = checkScopes(input.scopes, 'body.scopes')
  if (input.policy !== undefined) changes.policy = { require_approval: [...new Set(input.policy.require_approval)] }
  if (Object.keys(changes).length === 0) return agentView(before)
  const [row] = await services.db
    .update(agents)
    .set(changes)
    .where(and(eq(agents.id, agentId), eq(agents.accountId, accountId)))
    .returning()
  if (!row) throw new ApiError('AGENT_NOT_FOUND')
  // Cached verdicts carry scopes and policy: every process drops this Agent's at once.
  if (changes.scopes || changes.policy) await announceRevocation(services, `agent:${agentId}`)
  return agentView(row)
}

export interface MintInput {
  ttl_seconds?: number
  scopes?: string[]
}

/** A short-lived at_ token for the Agent, minted by the human (no refresh token, no OAuth client). */
export async function mintAgentToken(services: Pick<Services, 'db' | 'now' | 'config'>, accountId: string, agentId: string, input: MintInput) {
  const agent = await ownAgent(services, accountId, agentId)
  if (agent.status !== 'active') throw new ApiError('AGENT_KILLED')
  const scopes = input.scopes === undefined ? agent.scopes : checkScopes(input.scopes, 'body.scopes')
  const outside = scopes.find((s) => !agent.scopes.includes(s))
  if (outside !== undefined) throw new ApiError('VALIDATION_FAILED', `body.scopes: ${outside} is not one of this Agent's scopes (${agent.scopes.join(' ') || 'none'}).`)
  const ttl = input.ttl_seconds ?? ACCESS_TOKEN_TTL_S
  const now = services.now()
  const issued = await issueTokens(
    services.db,
    { accountId, agentId, clientId: null, scopes, resource: services.config.publicApiUrl, familyId: newId('tokenFamily'), refresh: false, accessTtlS: ttl },
    now,
  )
  return { token: issued.access_token, expires_at: new Date(now + ttl * 1000).toISOString(), scopes, agent_id: agentId }
}

/**
 * The emergency stop: the Agent is killed, every token it holds is revoked, its pending approvals
 * expire, and every process drops its cached verdicts at once; the kill commits its `agent.killed`
 * webhook event. Killing a killed Agent changes nothing, sends nothing and answers the same.
 */
export async function killAgent(services: Pick<Services, 'db' | 'now' | 'kv' | 'webhookOutbox'>, accountId: string, agentId: string) {
  const before = await ownAgent(services, accountId, agentId)
  const now = new Date(services.now())
  const row = await services.db.transaction(async (tx) => {
    // Read under the row's lock: of two kills at once, only the one that found it active sends the event.
    const [was] = await tx.select({ status: agents.status }).from(agents).where(eq(agents.id, before.id)).for('update')
    const [killed] = await tx
      .update(agents)
      .set({ status: 'killed', killedAt: before.killedAt ?? now })
      .where(and(eq(agents.id, agentId), eq(agents.accountId, accountId)))
      .returning()
    await tx
      .update(oauthTokens)
      .set({ revokedAt: now })
      .where(and(eq(oauthTokens.agentId, agentId), isNull(oauthTokens.revokedAt)))
    // Its pending approvals expire: a decision after the kill runs nothing.
    await tx
      .update(agentApprovals)
      .set({ status: 'expired', decidedAt: now })
      .where(and(eq(agentApprovals.agentId, agentId), eq(agentApprovals.status, 'pending')))
    if (killed && was?.status === 'active' && services.webhookOutbox) {
      const webhookIds = await services.webhookOutbox.subscribers(tx, accountId, 'agent.killed')
      await services.webhookOutbox.write(tx, accountId, 'agent.killed', webhookIds, [agentView(killed)], now)
    }
    return killed
  })
  if (!row) throw new ApiError('AGENT_NOT_FOUND')
  await announceRevocation(services, `agent:${agentId}`)
  return agentView(row)
}
