// The Agents: one identity per machine client, with the scopes its tokens may hold and the operations
// held for your approval. This page lists them and creates one; each has its own page (AgentPage).
import { useState } from 'preact/hooks'
import { api, must } from '../../api'
import { DEFAULT_HELD, GRANTABLE_SCOPES, OPERATION_WORDS, scopeList, type Operation } from '../../access'
import { Choices } from '../../components/Choices'
import { ErrorNotice, formatDate, Loading } from '../../components/ui'
import { useSubmit } from '../../lib/useSubmit'
import { BASE, Link, navigate } from '../../router'
import { statusWords, useAgents, type AgentRecord } from './data'

export function AgentsPage() {
  const { agents, error } = useAgents()
  return (
    <>
      <h1>Agents</h1>
      <p>An Agent is a program acting for you (a bot, an AI assistant). Its tokens can do only what its scopes allow, and the operations you choose wait for your approval.</p>
      <CreateAgentForm />
      <section aria-labelledby="agents-title">
        <h2 id="agents-title">Your Agents</h2>
        <ErrorNotice error={error} />
        {agents === null ? !error && <Loading what="your Agents" /> : agents.length === 0 ? <p class="empty">No Agent yet: create one above.</p> : <AgentTable agents={agents} />}
      </section>
    </>
  )
}

function CreateAgentForm() {
  const [name, setName] = useState('')
  const [scopes, setScopes] = useState<string[]>([])
  const [held, setHeld] = useState<Operation[]>(DEFAULT_HELD)
  // Its page is where a token is minted, the next thing a person does with a new Agent: this page is left.
  const { busy, error, run } = useSubmit({ leavesPage: true })
  const submit = (event: Event) => {
    event.preventDefault()
    void run(async () => {
      const body = { name: name.trim(), scopes, policy: { require_approval: held } }
      const { data } = must(await api.POST('/api/v1/agents', { body }))
      navigate(`${BASE}/agents/${data.id}`)
    })
  }
  return (
    <section aria-labelledby="create-agent-title" class="card">
      <h2 id="create-agent-title">Create an Agent</h2>
      <form onSubmit={submit}>
        <div class="field wide">
          <label for="agent-name">Agent name</label>
          <input id="agent-name" required maxLength={100} placeholder="Release bot" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <Choices legend="Scopes" hint="What its tokens may do." options={GRANTABLE_SCOPES} chosen={scopes} onChange={setScopes} />
        <Choices legend="Wait for my approval before it may" hint="Its call is held until you approve it in Approvals." options={OPERATION_WORDS} chosen={held} onChange={setHeld} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create Agent'}
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
    </section>
  )
}

function AgentTable({ agents }: { agents: AgentRecord[] }) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">Your Agents</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Scopes</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
          </tr>
        </thead>
        <tbody>
          {agents.map((agent) => (
            <tr key={agent.id}>
              <th scope="row">
                <Link href={`${BASE}/agents/${agent.id}`}>{agent.name}</Link>
              </th>
              <td class="scopes">{scopeList(agent.scopes)}</td>
              <td>
                <span class={`state ${agent.status}`}>{statusWords(agent.status)}</span>
              </td>
              <td>{formatDate(agent.created_at)}</td>
              <td>{agent.last_used_at ? formatDate(agent.last_used_at) : 'Never'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
