// Agents (docs/agents-and-mcp.md#agents): the account-side identities of machine clients. Managed by
// the human only (API key or signed-in session; an Agent's own at_ token gets 403 HUMAN_ONLY); another
// account's Agent is 404 on every route.
import { Elysia } from 'elysia'
import type { Auth } from '../../plugins/auth'
import { errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { AgentParams, agentModels } from './model'
import { AuditQuery } from '../audit/model'
import { readAudit } from '../audit/reader'
import { DEFAULT_REQUIRE_APPROVAL, OPERATION_NAMES } from '../../lib/agent-access'
import { createAgent, killAgent, listAgents, mintAgentToken, ownAgent, updateAgent } from './service'

const ok = <T>(data: T) => ({ success: true as const, data, meta: {} })

export function agentsModule(services: Services, auth: Auth) {
  return new Elysia({ name: 'modules.agents' })
    .use(errors)
    .use(auth.plugin)
    .model(agentModels)
    .get('/api/v1/agents', async ({ account }) => ok({ agents: await listAgents(services, account.id) }), {
      human: true,
      response: { 200: 'AgentListResponse', ...errorResponses() },
      detail: { operationId: 'listAgents', tags: ['agents'], summary: 'List your Agents', description: 'Newest first, killed ones included.' },
    })
    .post(
      '/api/v1/agents',
      async ({ account, body, set }) => {
        set.status = 201
        return ok(await createAgent(services, account.id, body))
      },
      {
        human: true,
        body: 'CreateAgentRequest',
        response: { 201: 'AgentResponse', ...errorResponses('VALIDATION_FAILED', 'CSRF_TOKEN_INVALID') },
        detail: {
          operationId: 'createAgent',
          tags: ['agents'],
          summary: 'Create an Agent',
          description: `An identity for a machine client, with the scopes its tokens may hold and the operations held for your approval (default: ${DEFAULT_REQUIRE_APPROVAL.join(', ')}; known operations: ${OPERATION_NAMES.join(', ')}). Mint its tokens with POST /api/v1/agents/{agentId}/tokens. OAuth consent creates one per client by itself.`,
        },
      },
    )
    .patch('/api/v1/agents/:agentId', async ({ account, params, body }) => ok(await updateAgent(services, account.id, params.agentId, body)), {
      human: true,
      params: AgentParams,
      body: 'UpdateAgentRequest',
      response: { 200: 'AgentResponse', ...errorResponses('VALIDATION_FAILED', 'AGENT_NOT_FOUND', 'CSRF_TOKEN_INVALID') },
      detail: {
        operationId: 'updateAgent',
        tags: ['agents'],
        summary: 'Rename an Agent, change its scopes or policy',
        description: 'Narrowed scopes bind the tokens it already holds: every process refuses a removed scope within a second.',
      },
    })
    .post(
      '/api/v1/agents/:agentId/tokens',
      async ({ account, params, body, set }) => {
        set.status = 201
        set.headers['cache-control'] = 'no-store'
        return ok(await mintAgentToken(services, account.id, params.agentId, body ?? {}))
      },
      {
        human: true,
        params: AgentParams,
        body: 'MintTokenRequest',
        response: { 201: 'AgentTokenResponse', ...errorResponses('VALIDATION_FAILED', 'AGENT_NOT_FOUND', 'AGENT_KILLED', 'CSRF_TOKEN_INVALID') },
        detail: {
          operationId: 'mintAgentToken',
          tags: ['agents'],
          summary: 'Issue a short-lived token for an Agent',
          description:
            "An at_ token (shown once, stored as its hash) living ttl_seconds (60-3600, default 900) with a subset of the Agent's scopes. No refresh token: mint a new one. A killed Agent gets none (409 AGENT_KILLED).",
        },
      },
    )
    .get(
      '/api/v1/agents/:agentId/audit',
      async ({ account, params, query }) => {
        await ownAgent(services, account.id, params.agentId)
        return ok(await readAudit(services.clickhouse, { accountId: account.id, agentId: params.agentId, limit: query.limit, cursor: query.cursor }))
      },
      {
        human: true,
        params: AgentParams,
        query: AuditQuery,
        response: { 200: 'AgentAuditResponse', ...errorResponses('VALIDATION_FAILED', 'AGENT_NOT_FOUND', 'SERVICE_UNAVAILABLE') },
        detail: {
          operationId: 'getAgentAudit',
          tags: ['agents'],
          summary: "Read an Agent's audit",
          description:
            'One event per call the Agent made with an at_ token, REST or MCP, refused ones included (outcome ok, held, refused or error), newest first; page with ?cursor=next_cursor. Append-only; no body, query string or token is ever recorded, and the client address only as a keyed hash. Events appear within about a second of the call.',
        },
      },
    )
    .post('/api/v1/agents/:agentId/kill', async ({ account, params }) => ok(await killAgent(services, account.id, params.agentId)), {
      human: true,
      params: AgentParams,
      response: { 200: 'AgentResponse', ...errorResponses('VALIDATION_FAILED', 'AGENT_NOT_FOUND', 'CSRF_TOKEN_INVALID') },
      detail: {
        operationId: 'killAgent',
        tags: ['agents'],
        summary: 'Kill an Agent: revoke all its tokens at once',
        description: 'The emergency stop. Every token of the Agent is refused within a second in every process, and it gets no new token. Killing a killed Agent answers the same.',
      },
    })
}
