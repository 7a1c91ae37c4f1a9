import { t } from 'elysia'
import { Meta } from '../../plugins/errors'
import { AuditPage } from '../audit/model'
import { OPERATION_NAMES } from '../../lib/agent-access'

const ScopeList = t.Array(t.String({ maxLength: 40 }), { maxItems: 20, description: 'OAuth scope names (see /.well-known/oauth-protected-resource)' })
const Policy = t.Object(
  { require_approval: t.Array(t.UnionEnum(OPERATION_NAMES), { maxItems: OPERATION_NAMES.length, description: 'Operations held for a human decision' }) },
  { additionalProperties: false },
)

export const Agent = t.Object({
  id: t.String({ pattern: '^agt_' }),
  name: t.String(),
  scopes: t.Array(t.String()),
  policy: t.Object({ require_approval: t.Array(t.String()) }),
  status: t.UnionEnum(['active', 'killed']),
  client_id: t.Union([t.String(), t.Null()], { description: 'The OAuth client it was created for by consent; null when created directly' }),
  created_at: t.String({ format: 'date-time' }),
  last_used_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
})

const agentExample = {
  id: 'agt_Jq3x0v8bYk2Lm5Rt9Wc1Za',
  name: 'Release bot',
  scopes: ['links:read', 'links:write'],
  policy: { require_approval: ['links.delete', 'tags.delete', 'domains.change', 'billing.upgrade', 'webhooks.change'] },
  status: 'active',
  client_id: null,
  created_at: '2026-11-24T10:00:00.000Z',
  last_used_at: null,
}

export const AgentResponse = t.Object({ success: t.Literal(true), data: Agent, meta: Meta }, { examples: [{ success: true, data: agentExample, meta: {} }] })
export const AgentListResponse = t.Object(
  { success: t.Literal(true), data: t.Object({ agents: t.Array(Agent) }), meta: Meta },
  { examples: [{ success: true, data: { agents: [agentExample] }, meta: {} }] },
)

export const CreateAgentRequest = t.Object(
  { name: t.String({ minLength: 1, maxLength: 100 }), scopes: ScopeList, policy: t.Optional(Policy) },
  { examples: [{ name: 'Release bot', scopes: ['links:read', 'links:write'] }] },
)

export const UpdateAgentRequest = t.Object(
  { name: t.Optional(t.String({ minLength: 1, maxLength: 100 })), scopes: t.Optional(ScopeList), policy: t.Optional(Policy) },
  { examples: [{ scopes: ['links:read'] }, { policy: { require_approval: ['links.delete', 'links.update'] } }] },
)

export const MintTokenRequest = t.Object(
  {
    ttl_seconds: t.Optional(t.Integer({ minimum: 60, maximum: 3600, default: 900, description: 'Lifetime, 60-3600 s (default 900)' })),
    scopes: t.Optional(t.Array(t.String({ maxLength: 40 }), { maxItems: 20, description: "A subset of the Agent's scopes; absent: all of them" })),
  },
  { examples: [{ ttl_seconds: 600, scopes: ['links:read'] }] },
)

export const AgentTokenResponse = t.Object(
  {
    success: t.Literal(true),
    data: t.Object({ token: t.String({ pattern: '^at_' }), expires_at: t.String({ format: 'date-time' }), scopes: t.Array(t.String()), agent_id: t.String() }),
    meta: Meta,
  },
  {
    examples: [
      {
        success: true,
        data: { token: 'at_Jx8hQk2sYb7M0fL4tPzq1wVn6cRaE5dG3uKoZy9iB_A', expires_at: '2026-11-24T10:15:00.000Z', scopes: ['links:read'], agent_id: 'agt_Jq3x0v8bYk2Lm5Rt9Wc1Za' },
        meta: {},
      },
    ],
  },
)

export const AgentParams = t.Object({ agentId: t.String({ maxLength: 64, examples: ['agt_Jq3x0v8bYk2Lm5Rt9Wc1Za'] }) })

export const AgentAuditResponse = t.Object(
  { success: t.Literal(true), data: AuditPage, meta: Meta },
  {
    examples: [
      {
        success: true,
        data: {
          events: [
            {
              id: 'aud_Kq2m9Xw0Lk3Vb8Rt5Yp1Za',
              at: '2026-11-24T10:00:00.123Z',
              agent_id: 'agt_Jq3x0v8bYk2Lm5Rt9Wc1Za',
              via: 'rest',
              operation: 'links.delete',
              method: 'DELETE',
              path: '/api/v1/links/spring-sale',
              status: 202,
              outcome: 'held',
              scopes_used: ['links:delete'],
              approval_id: 'apr_Tq2m9Xw0Lk3Vb8Rt5Yp1Za',
              dry_run: false,
              duration_ms: 4.2,
              ip_hash: '9f2c4b0a1e7d3c56',
            },
          ],
          next_cursor: null,
        },
        meta: {},
      },
    ],
  },
)

export const agentModels = { AgentAuditResponse, AgentResponse, AgentListResponse, CreateAgentRequest, UpdateAgentRequest, MintTokenRequest, AgentTokenResponse }
