// Agents: the account-side identity of a machine client (DESIGN "Machine access"). Every at_ token
// belongs to one; its scopes bound the token's, its status (active | killed) is checked on every call.
// OAuth consent creates the Agent of (account, client) or reuses it.
import { and, eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { agents } from '../../db/schema'
import { newId } from '../../lib/ids'

/** Operations held for a human by default (spec 5.4: link deletion, tag deletion, domain changes, billing). */
export const DEFAULT_REQUIRE_APPROVAL = ['links.delete', 'tags.delete', 'domains.change', 'billing.upgrade'] as const

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
  const [grown] = await tx.update(agents).set({ scopes: [...existing.scopes, ...missing] }).where(eq(agents.id, existing.id)).returning()
  return grown!
}
