// The approvals inbox: the calls your Agents made that their policy holds for you, each shown in full
// (what it would do is the request itself), approved or rejected here; an approved call runs at once and
// its answer is shown in place, so the person sees what their decision did.
import { useEffect, useState } from 'preact/hooks'
import { api, must, type Schemas } from '../api'
import { OPERATION_WORDS } from '../access'
import { ErrorNotice, formatDate, Loading } from '../components/ui'
import { useSubmit } from '../lib/useSubmit'
import { BASE, Link } from '../router'
import { useAgents } from './agents/data'

type Approval = Schemas['ApprovalResponse']['data']
type Status = Approval['status']

const STATUS_WORDS: Record<Status, string> = {
  pending: 'Waiting for your decision',
  approved: 'Approved, running',
  rejected: 'Rejected: not run',
  expired: 'Expired: not run',
  executed: 'Approved and run',
  failed: 'Approved, but the call failed',
}

export function ApprovalsPage() {
  const [status, setStatus] = useState<Status | ''>('pending')
  const [approvals, setApprovals] = useState<Approval[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  // The cards name the Agent, so they wait for the Agent list too (no flash of raw ids); should that list
  // fail, a card falls back to the Agent's id rather than hiding the approvals.
  const { agents, error: agentsError } = useAgents()
  const agentName = (id: string) => agents?.find((a) => a.id === id)?.name ?? id
  const namesPending = agents === null && agentsError === null

  useEffect(() => {
    let current = true
    setApprovals(null)
    setError(null)
    api
      .GET('/api/v1/agent/approvals', { params: { query: status ? { status } : {} } })
      .then((result) => current && setApprovals(must(result).data.approvals))
      .catch((failure) => current && setError(failure))
    return () => {
      current = false
    }
  }, [status])

  // A decided approval stays on screen with its result, even when the list shows pending ones only.
  const replace = (decided: Approval) => setApprovals((list) => list?.map((a) => (a.id === decided.id ? decided : a)) ?? null)
  return (
    <>
      <h1>Approvals</h1>
      <p>
        Calls your <Link href={`${BASE}/agents`}>Agents</Link> made that wait for you. Approving runs the call once, as the Agent; rejecting runs nothing. Undecided, a call expires after 24 hours.
      </p>
      <div class="toolbar">
        <label>
          Show{' '}
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value as Status | '')}>
            <option value="pending">Waiting for you</option>
            <option value="executed">Approved and run</option>
            <option value="failed">Failed</option>
            <option value="rejected">Rejected</option>
            <option value="expired">Expired</option>
            <option value="">All</option>
          </select>
        </label>
      </div>
      <ErrorNotice error={error} />
      {approvals === null || namesPending ? (
        !error && <Loading what="approvals" />
      ) : approvals.length === 0 ? (
        <p class="empty">{status === 'pending' ? 'Nothing waits for your approval.' : 'No approval here.'}</p>
      ) : (
        approvals.map((approval) => <ApprovalCard key={approval.id} approval={approval} agentName={agentName(approval.agent_id)} onDecided={replace} />)
      )}
    </>
  )
}

function ApprovalCard({ approval, agentName, onDecided }: { approval: Approval; agentName: string; onDecided: (a: Approval) => void }) {
  const { busy, error, run } = useSubmit()
  const { request, result } = approval
  const decide = (decision: 'approve' | 'reject') =>
    run(async () => {
      onDecided(must(await api.POST('/api/v1/agent/approvals/{approvalId}/{decision}', { params: { path: { approvalId: approval.id, decision } } })).data)
    })
  const titleId = `approval-${approval.id}`
  const words = OPERATION_WORDS[approval.operation as keyof typeof OPERATION_WORDS] ?? approval.operation
  return (
    <article class="card approval" aria-labelledby={titleId}>
      <h2 id={titleId}>
        {agentName} asks to {words}
      </h2>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <span class={`state ${approval.status}`}>{STATUS_WORDS[approval.status]}</span>
        </dd>
        <dt>Request</dt>
        <dd>
          <code>
            {request.method} {request.path}
          </code>
        </dd>
        <dt>Query</dt>
        <dd>{Object.keys(request.query).length === 0 ? 'None' : <pre>{new URLSearchParams(request.query).toString()}</pre>}</dd>
        <dt>Body</dt>
        <dd>{request.body === null || request.body === undefined ? 'None' : <pre>{JSON.stringify(request.body, null, 2)}</pre>}</dd>
        <dt>Agent</dt>
        <dd>
          <Link href={`${BASE}/agents/${approval.agent_id}`}>{agentName}</Link>
        </dd>
        <dt>Asked</dt>
        <dd>{formatDate(approval.created_at)}</dd>
        <dt>{approval.decided_at ? 'Decided' : 'Expires'}</dt>
        <dd>{formatDate(approval.decided_at ?? approval.expires_at)}</dd>
        {result && (
          <>
            <dt>Result</dt>
            <dd>
              <p>The call answered {String(result.status)}.</p>
              <pre>{JSON.stringify(result.body, null, 2)}</pre>
            </dd>
          </>
        )}
      </dl>
      {approval.status === 'pending' && (
        <div class="actions">
          <button type="button" class="primary" disabled={busy} onClick={() => decide('approve')}>
            Approve
          </button>
          <button type="button" class="danger" disabled={busy} onClick={() => decide('reject')}>
            Reject
          </button>
        </div>
      )}
      <ErrorNotice error={error} />
    </article>
  )
}
