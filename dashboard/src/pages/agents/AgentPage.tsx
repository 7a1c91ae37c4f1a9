// One Agent: what it may do, a token for it (shown once), narrower scopes, its audit log, the kill switch.
import { useState } from 'preact/hooks'
import { api, must } from '../../api'
import { GRANTABLE_SCOPES, OPERATION_WORDS, scopeList } from '../../access'
import { Choices } from '../../components/Choices'
import { ConfirmDialog, ErrorNotice, formatDate, Loading } from '../../components/ui'
import { useSubmit } from '../../lib/useSubmit'
import { BASE, Link } from '../../router'
import { AuditLog } from './AuditLog'
import { statusWords, useAgents, type AgentRecord } from './data'
import { MintToken } from './MintToken'

export function AgentPage({ agentId }: { agentId: string }) {
  const { agents, error, reload } = useAgents()
  const agent = agents?.find((a) => a.id === agentId)
  const back = <Link href={`${BASE}/agents`}>All Agents</Link>
  if (agents === null) return error ? <ErrorNotice error={error} /> : <Loading what="the Agent" />
  if (!agent)
    return (
      <>
        <h1>Agent not found</h1>
        <p>
          This account has no Agent {agentId}. {back}
        </p>
      </>
    )
  const killed = agent.status === 'killed'
  return (
    <>
      <p>{back}</p>
      <h1>{agent.name}</h1>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <span class={`state ${agent.status}`}>{statusWords(agent.status)}</span>
        </dd>
        <dt>Scopes</dt>
        <dd>{scopeList(agent.scopes)}</dd>
        <dt>Waits for your approval to</dt>
        <dd>{agent.policy.require_approval.length === 0 ? 'Nothing' : agent.policy.require_approval.map((op) => OPERATION_WORDS[op as keyof typeof OPERATION_WORDS] ?? op).join('; ')}</dd>
        <dt>Created</dt>
        <dd>
          {formatDate(agent.created_at)}
          {agent.client_id && ` by consenting to the OAuth client ${agent.client_id}`}
        </dd>
        <dt>Last used</dt>
        <dd>{agent.last_used_at ? formatDate(agent.last_used_at) : 'Never'}</dd>
      </dl>
      <ErrorNotice error={error} />
      {!killed && <MintToken agent={agent} />}
      {!killed && <NarrowScopes agent={agent} onSaved={reload} />}
      <AuditLog agentId={agent.id} />
      {!killed && <KillSwitch agent={agent} onKilled={reload} />}
    </>
  )
}

/** Takes scopes away (the API would take new ones too, but widening is done by creating an Agent, so a
 *  token someone holds never gains power unnoticed); tokens already minted lose them within a second. */
function NarrowScopes({ agent, onSaved }: { agent: AgentRecord; onSaved: () => Promise<void> }) {
  const [kept, setKept] = useState<string[]>(agent.scopes)
  const [saved, setSaved] = useState(false)
  // Only the error is shown: the button is enabled by what is ticked, not by a call on its way.
  const { error, run } = useSubmit()
  const options = Object.fromEntries(agent.scopes.map((s) => [s, GRANTABLE_SCOPES[s] ?? ''])) as Record<string, string>
  const save = (event: Event) => {
    event.preventDefault()
    setSaved(false)
    void run(async () => {
      must(await api.PATCH('/api/v1/agents/{agentId}', { params: { path: { agentId: agent.id } }, body: { scopes: kept } }))
      await onSaved()
      setSaved(true)
    })
  }
  return (
    <section aria-labelledby="narrow-title" class="card">
      <h2 id="narrow-title">Narrow its scopes</h2>
      <form onSubmit={save}>
        <Choices legend="Scopes it keeps" hint="Untick a scope to take it away, from the tokens it already holds too." options={options} chosen={kept} onChange={setKept} />
        <div class="actions">
          <button type="submit" disabled={kept.length === agent.scopes.length}>
            Save scopes
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
      {saved && (
        <p class="success" role="status">
          Saved: it now has {scopeList(agent.scopes)}.
        </p>
      )}
    </section>
  )
}

function KillSwitch({ agent, onKilled }: { agent: AgentRecord; onKilled: () => Promise<void> }) {
  const [asking, setAsking] = useState(false)
  const { error, run } = useSubmit()
  const kill = () => {
    setAsking(false)
    void run(async () => {
      must(await api.POST('/api/v1/agents/{agentId}/kill', { params: { path: { agentId: agent.id } } }))
      await onKilled()
    })
  }
  return (
    <section aria-labelledby="kill-title">
      <h2 id="kill-title">Kill switch</h2>
      <p>Stops this Agent for good: every token it holds is refused within a second, its pending approvals expire and it gets no new token.</p>
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        Kill Agent
      </button>
      <ErrorNotice error={error} />
      <ConfirmDialog open={asking} title="Kill this Agent?" confirm="Kill Agent" onConfirm={kill} onCancel={() => setAsking(false)}>
        <p>
          <strong>{agent.name}</strong> and every token it holds stop working at once. This cannot be undone: to let the program in again, create a new Agent.
        </p>
      </ConfirmDialog>
    </section>
  )
}
