// Human approval of an Agent's calls (docs/agents-and-mcp.md#approvals). A call to an operation the
// Agent's policy names is not run: it is kept (method, path, query, body) as an approval, 24 hours to
// decide, and answered 202. Approving runs it exactly once, as the Agent, after checking the Agent is
// still active and still holds the route's scopes; rejecting, expiry and a kill run nothing.
//
// Exactly once: the decision is one conditional UPDATE (pending → approved); of concurrent approvals in
// any number of processes one wins and runs the call, the others get 409. A process that dies between
// winning and recording the result leaves the approval `approved` with no result (the call may or may
// not have run): that is visible, never repeated.
//
// The human is told: a new approval commits its `agent.approval_requested` webhook event with it (and is
// mailed, notify.ts); a decision commits `agent.approval_decided`. Each carries the approval as the API
// returns it, with the review page's URL.
import { createHash } from 'node:crypto'
import { and, desc, eq, gt, lte, or, sql } from 'drizzle-orm'
import { accounts, agentApprovals, agents, type ApprovalStatus } from '../../db/schema'
import { isId, newId } from '../../lib/ids'
import type { HeldCall } from '../../plugins/agent-calls'
import type { Principal } from '../../plugins/auth'
import { agentPrincipal } from '../agents/principal'
import { ApiError } from '../../plugins/errors'
import { onBehalfOf } from '../../plugins/on-behalf'
import type { Services } from '../../services'
import { mailApproval } from './notify'

export const APPROVAL_TTL_MS = 24 * 3600 * 1000
export const APPROVAL_PAGE_PATH = '/approvals'
export const APPROVALS_PATH = '/api/v1/agent/approvals'

type Row = typeof agentApprovals.$inferSelect

/** Body fields never shown back (they are kept, to run the call, but a review page need not show them). */
const HIDDEN_FIELDS = new Set(['password'])

function redacted(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, HIDDEN_FIELDS.has(k) ? '[hidden]' : v]))
}

/**
 * A secret in a call's answer (a webhook's signing secret, `data.secret`) is not kept in its result: the
 * result is stored in clear and read back by the Agent, while the secret is sealed at rest (decision
 * 0038). The human reads a new one by rotating the secret.
 */
function withoutSecrets(result: { status: number; body: unknown }): { status: number; body: unknown } {
  const body = result.body as { data?: unknown } | null
  const data = body !== null && typeof body === 'object' ? body.data : undefined
  if (data === null || typeof data !== 'object' || !('secret' in data)) return result
  return { ...result, body: { ...body, data: { ...data, secret: '[hidden]' } } }
}

function statusOf(row: Row, now: number): ApprovalStatus {
  return row.status === 'pending' && row.expiresAt.getTime() <= now ? 'expired' : row.status
}

export function approvalView(services: Pick<Services, 'config' | 'now'>, row: Row) {
  return {
    id: row.id,
    status: statusOf(row, services.now()),
    agent_id: row.agentId,
    operation: row.operation,
    request: { method: row.method, path: row.path, query: row.query, body: redacted(row.body) },
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    decided_at: row.decidedAt?.toISOString() ?? null,
    result: row.result ?? null,
    /** The page where the human reviews and decides. */
    review_url: `${services.config.publicApiUrl}${APPROVAL_PAGE_PATH}/${row.id}`,
  }
}

export type ApprovalView = ReturnType<typeof approvalView>

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex')

function fingerprintOf(method: string, path: string, query: Record<string, string>, body: unknown): string {
  const sorted = Object.entries(query).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return sha256(JSON.stringify([method, path, sorted, body ?? null]))
}

function heldResponse(view: ApprovalView): Response {
  return new Response(JSON.stringify({ success: true, data: { approval: view }, meta: { held_for_approval: true } }), {
    status: 202,
    headers: { 'content-type': 'application/json', location: `${APPROVALS_PATH}/${view.id}`, 'cache-control': 'no-store' },
  })
}

type EventServices = Pick<Services, 'config' | 'now' | 'webhookOutbox'>
type Tx = Parameters<Parameters<Services['db']['transaction']>[0]>[0]

/** The approval's `type` event, in the transaction of its change. */
async function writeApprovalEvent(services: EventServices, tx: Tx, row: Row, type: 'agent.approval_requested' | 'agent.approval_decided'): Promise<void> {
  const outbox = services.webhookOutbox
  if (!outbox) return
  const webhookIds = await outbox.subscribers(tx, row.accountId, type)
  await outbox.write(tx, row.accountId, type, webhookIds, [approvalView(services, row)], new Date(services.now()))
}

/** Runs the call as a dry run (its route's own checks, nothing written) and answers what it would. */
export type Preview = (call: HeldCall) => Promise<Response>

/**
 * The auth plugin's hold hook: keeps the call as a pending approval and answers 202. A call whose route
 * can preview it is checked first: one that would fail (an alias that does not exist, a taken one, a bad
 * destination) gets that failure now, and nothing waits for a human. With an Idempotency-Key, a retry of
 * the same call finds the same approval (another call under that key is 400 IDEMPOTENCY_KEY_REUSED).
 */
export async function holdCall(services: Pick<Services, 'db' | 'config' | 'now' | 'webhookOutbox'>, call: HeldCall, preview?: Preview): Promise<{ response: Response; approvalId?: string }> {
  if (preview && call.previews) {
    const answer = await preview(call)
    if (answer.status >= 400) return { response: answer }
  }
  const url = new URL(call.request.url)
  const query = Object.fromEntries(url.searchParams)
  const method = call.request.method
  const fingerprint = fingerprintOf(method, url.pathname, query, call.body)
  const agentId = call.principal.agent.agentId
  const key = call.request.headers.get('idempotency-key')
  const idempotencyKey = key === null ? null : sha256(`${agentId}\n${key}`)
  const now = services.now()
  const created = await services.db.transaction(async (tx) => {
    const [inserted] = await tx
      .insert(agentApprovals)
      .values({
        id: newId('approval'),
        accountId: call.principal.account.id,
        agentId,
        operation: call.operation,
        scopes: [...call.scopes],
        method,
        path: url.pathname,
        query,
        body: call.body ?? null,
        via: onBehalfOf(call.request)?.via ?? 'rest',
        idempotencyKey,
        fingerprint,
        expiresAt: new Date(now + APPROVAL_TTL_MS),
        createdAt: new Date(now),
      })
      .onConflictDoNothing({ target: [agentApprovals.agentId, agentApprovals.idempotencyKey], where: sql`${agentApprovals.idempotencyKey} is not null` })
      .returning()
    if (inserted) await writeApprovalEvent(services, tx, inserted, 'agent.approval_requested')
    return inserted
  })
  if (created) {
    const view = approvalView(services, created)
    await mailApproval(services, created.accountId, view)
    return { response: heldResponse(view), approvalId: created.id }
  }
  const [earlier] = await services.db
    .select()
    .from(agentApprovals)
    .where(and(eq(agentApprovals.agentId, agentId), eq(agentApprovals.idempotencyKey, idempotencyKey!)))
    .limit(1)
  if (!earlier || earlier.fingerprint !== fingerprint) throw new ApiError('IDEMPOTENCY_KEY_REUSED')
  return { response: heldResponse(approvalView(services, earlier)), approvalId: earlier.id }
}

/** An approval of the account, with its Agent's name; 404 for anything else. */
export async function accountApproval(services: Pick<Services, 'db' | 'config' | 'now'>, accountId: string, approvalId: string) {
  if (!isId('approval', approvalId)) throw new ApiError('APPROVAL_NOT_FOUND')
  const [found] = await services.db
    .select({ row: agentApprovals, agentName: agents.name })
    .from(agentApprovals)
    .innerJoin(agents, eq(agents.id, agentApprovals.agentId))
    .where(and(eq(agentApprovals.id, approvalId), eq(agentApprovals.accountId, accountId)))
    .limit(1)
  if (!found) throw new ApiError('APPROVAL_NOT_FOUND')
  return { view: approvalView(services, found.row), agentName: found.agentName }
}

/** An approval the caller may read: the human's account's, or, for an Agent, one it asked for. */
export async function readApproval(services: Pick<Services, 'db' | 'config' | 'now'>, principal: Principal, approvalId: string): Promise<ApprovalView> {
  if (principal.kind !== 'account') throw new ApiError('APPROVAL_NOT_FOUND')
  const { view } = await accountApproval(services, principal.account.id, approvalId)
  if (principal.agent && view.agent_id !== principal.agent.agentId) throw new ApiError('APPROVAL_NOT_FOUND')
  return view
}

/** The account's approvals, newest first (at most 100), optionally of one status. */
export async function listApprovals(services: Pick<Services, 'db' | 'config' | 'now'>, accountId: string, status?: ApprovalStatus) {
  const now = new Date(services.now())
  const byStatus =
    status === undefined
      ? undefined
      : status === 'pending'
        ? and(eq(agentApprovals.status, 'pending'), gt(agentApprovals.expiresAt, now))
        : status === 'expired'
          ? or(eq(agentApprovals.status, 'expired'), and(eq(agentApprovals.status, 'pending'), lte(agentApprovals.expiresAt, now)))
          : eq(agentApprovals.status, status)
  const rows = await services.db
    .select()
    .from(agentApprovals)
    .where(and(eq(agentApprovals.accountId, accountId), byStatus))
    .orderBy(desc(agentApprovals.createdAt), desc(agentApprovals.id))
    .limit(100)
  return rows.map((row) => approvalView(services, row))
}

/** Runs a held call as its Agent: the route's own code, with the principal the approval stands for. */
export type Execute = (row: Row, principal: Principal) => Promise<{ status: number; body: unknown }>

export type Decision = 'approve' | 'reject'

/**
 * The human's decision. One conditional UPDATE decides: concurrent decisions get 409 but one. Approving
 * then checks the Agent again and runs the call once; the approval ends executed (2xx/3xx) or failed.
 */
export async function decideApproval(
  services: Pick<Services, 'db' | 'config' | 'now' | 'webhookOutbox'>,
  accountId: string,
  approvalId: string,
  decision: Decision,
  execute: Execute,
): Promise<ApprovalView> {
  if (!isId('approval', approvalId)) throw new ApiError('APPROVAL_NOT_FOUND')
  const now = new Date(services.now())
  const won = await services.db.transaction(async (tx) => {
    const [decided] = await tx
      .update(agentApprovals)
      .set({ status: decision === 'approve' ? 'approved' : 'rejected', decidedAt: now })
      .where(and(eq(agentApprovals.id, approvalId), eq(agentApprovals.accountId, accountId), eq(agentApprovals.status, 'pending'), gt(agentApprovals.expiresAt, now)))
      .returning()
    if (decided) await writeApprovalEvent(services, tx, decided, 'agent.approval_decided')
    return decided
  })
  if (!won) {
    const [row] = await services.db
      .select()
      .from(agentApprovals)
      .where(and(eq(agentApprovals.id, approvalId), eq(agentApprovals.accountId, accountId)))
      .limit(1)
    if (!row) throw new ApiError('APPROVAL_NOT_FOUND')
    throw new ApiError('APPROVAL_DECIDED', `This approval is ${statusOf(row, now.getTime())}; nothing was run now.`, { data: { approval: approvalView(services, row) } })
  }
  if (decision === 'reject') return approvalView(services, won)

  const [agent] = await services.db
    .select({ status: agents.status, scopes: agents.scopes, policy: agents.policy, clientId: agents.clientId, email: accounts.email, plan: accounts.plan })
    .from(agents)
    .innerJoin(accounts, eq(accounts.id, agents.accountId))
    .where(eq(agents.id, won.agentId))
    .limit(1)
  let result: { status: number; body: unknown }
  if (agent?.status !== 'active') {
    result = { status: 409, body: { success: false, error: 'AGENT_KILLED', hint: 'The Agent was killed before the approval; nothing was run.' } }
  } else if (won.scopes.some((s) => !agent.scopes.includes(s))) {
    result = { status: 403, body: { success: false, error: 'INSUFFICIENT_SCOPE', hint: `The Agent no longer holds ${won.scopes.join(' ')}; nothing was run.` } }
  } else {
    const principal = agentPrincipal({
      accountId,
      email: agent.email,
      plan: agent.plan,
      agentId: won.agentId,
      tokenId: `approval:${won.id}`,
      clientId: agent.clientId,
      scopes: agent.scopes,
      requireApproval: agent.policy.require_approval,
      approvalId: won.id,
    })
    try {
      result = withoutSecrets(await execute(won, principal))
    } catch {
      result = { status: 500, body: { success: false, error: 'INTERNAL_ERROR', hint: 'The approved call failed on our side; it may be retried by asking again.' } }
    }
  }
  const [done] = await services.db
    .update(agentApprovals)
    .set({ status: result.status < 400 ? 'executed' : 'failed', result })
    .where(eq(agentApprovals.id, won.id))
    .returning()
  return approvalView(services, done!)
}
