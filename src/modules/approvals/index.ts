// Approvals of held Agent calls: the human lists and decides them; the asking Agent may read its own
// (to poll). Deciding is human-only (API key or session).
import { Elysia } from 'elysia'
import type { Auth } from '../../plugins/auth'
import { onBehalfOf, type CallAs } from '../../plugins/on-behalf'
import { errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { ApprovalListQuery, ApprovalParams, approvalModels, DecisionParams } from './model'
import { APPROVALS_PATH, decideApproval, listApprovals, readApproval, type Execute, type Preview } from './service'

const ok = <T>(data: T) => ({ success: true as const, data, meta: {} })

/**
 * How an approved call runs: the same route, in process, as the Agent (plugins/on-behalf.ts: no token
 * needed, none can be forged), its JSON answer kept as the approval's result.
 */
export function executeThrough(callAs: CallAs): Execute {
  return async (row, principal) => {
    const response = await callAs({ via: row.via === 'mcp' ? 'mcp' : 'rest', principal }, { method: row.method, path: row.path, query: row.query, body: row.body })
    const text = await response.text()
    let body: unknown = null
    try {
      body = text === '' ? null : JSON.parse(text)
    } catch {
      body = { text: text.slice(0, 1000) }
    }
    return { status: response.status, body }
  }
}

/**
 * A held call's preview: the same request with ?dry_run=true, run in process as the Agent and not
 * audited on its own (the held call's event records the outcome).
 */
export function previewThrough(callAs: CallAs): Preview {
  return async (call) => {
    const url = new URL(call.request.url)
    const outer = onBehalfOf(call.request)
    const answer = await callAs(
      { via: outer?.via ?? 'rest', principal: call.principal, clientIp: outer?.clientIp, audited: false },
      { method: call.request.method, path: url.pathname, query: { ...Object.fromEntries(url.searchParams), dry_run: 'true' }, body: call.body },
    )
    // Re-made so its headers can be changed by whoever answers it (the caller's rate headers).
    return new Response(await answer.text(), { status: answer.status, headers: answer.headers })
  }
}

export function approvalsModule(services: Services, auth: Auth, execute: Execute) {
  return new Elysia({ name: 'modules.approvals' })
    .use(errors)
    .use(auth.plugin)
    .model(approvalModels)
    .get(APPROVALS_PATH, async ({ account, query }) => ok({ approvals: await listApprovals(services, account.id, query.status) }), {
      human: true,
      query: ApprovalListQuery,
      response: { 200: 'ApprovalListResponse', ...errorResponses('VALIDATION_FAILED') },
      detail: {
        operationId: 'listApprovals',
        tags: ['agents'],
        summary: "List approvals of your Agents' held calls",
        description: 'Newest first, at most 100; ?status=pending for the ones waiting for you. A pending approval not decided within 24 hours reads as expired.',
      },
    })
    .get(`${APPROVALS_PATH}/:approvalId`, async ({ principal, params }) => ok(await readApproval(services, principal, params.approvalId)), {
      // The human, or the Agent that asked (polling its 202): an at_ token needs no particular scope here.
      account: { scopes: [] },
      params: ApprovalParams,
      response: { 200: 'ApprovalResponse', ...errorResponses('VALIDATION_FAILED', 'APPROVAL_NOT_FOUND') },
      detail: {
        operationId: 'getApproval',
        tags: ['agents'],
        summary: 'Read an approval',
        description: "For the human, or for the Agent that asked (its at_ token; another Agent's approval is 404). result holds the call's answer once it ran.",
      },
    })
    .post(`${APPROVALS_PATH}/:approvalId/:decision`, async ({ account, params }) => ok(await decideApproval(services, account.id, params.approvalId, params.decision, execute)), {
      human: true,
      params: DecisionParams,
      response: { 200: 'ApprovalResponse', ...errorResponses('VALIDATION_FAILED', 'APPROVAL_NOT_FOUND', 'APPROVAL_DECIDED', 'CSRF_TOKEN_INVALID') },
      detail: {
        operationId: 'decideApproval',
        tags: ['agents'],
        summary: 'Approve or reject a held call',
        description:
          'approve runs the held call once, as the Agent, after checking it is still active and still holds the scopes; the answer is the approval with its result (executed, or failed with the reason). reject runs nothing. Once decided or expired: 409 APPROVAL_DECIDED. Concurrent approvals run the call once.',
      },
    })
}
