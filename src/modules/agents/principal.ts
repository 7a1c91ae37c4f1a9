// The principal an Agent acts as: built from its token's verdict on every call, and from the approval
// when a held call runs. One shape, so the routes, the hold and the audit see the same Agent either way.
import type { Plan } from '../../db/schema'
import type { AgentGrant, AgentPrincipal } from '../../plugins/principal'

/** An Agent's grant (the token's id is `approval:<id>` for an approved call) and its account. */
export type AgentIdentity = AgentGrant & { accountId: string; email: string; plan: Plan }

export function agentPrincipal(agent: AgentIdentity, rateHeaders: Record<string, string> = {}): AgentPrincipal {
  const { accountId, email, plan, agentId, tokenId, clientId, scopes, requireApproval, approvalId } = agent
  return {
    kind: 'account',
    account: { id: accountId, email, plan },
    agent: { agentId, tokenId, clientId, scopes, requireApproval, ...(approvalId && { approvalId }) },
    rateHeaders,
    credentialId: agentCredentialId(agent.agentId),
  }
}

/** An Agent's tokens share one credential: one request window, one idempotency scope. */
export const agentCredentialId = (agentId: string) => `at:${agentId}`
