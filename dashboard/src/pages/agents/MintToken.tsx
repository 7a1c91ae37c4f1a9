// A token for an Agent: its lifetime chosen here (the API takes 60-3600 s), shown once with a copy button.
import { useState } from 'preact/hooks'
import { api, must } from '../../api'
import { ShownOnce } from '../../components/Choices'
import { ErrorNotice, formatDate } from '../../components/ui'
import { useSubmit } from '../../lib/useSubmit'
import type { AgentRecord } from './data'

const LIFETIMES = [
  { seconds: 300, words: '5 minutes' },
  { seconds: 900, words: '15 minutes' },
  { seconds: 1800, words: '30 minutes' },
  { seconds: 3600, words: '1 hour' },
]

export function MintToken({ agent }: { agent: AgentRecord }) {
  const [ttl, setTtl] = useState(900)
  const [minted, setMinted] = useState<{ token: string; expires_at: string } | null>(null)
  const { busy, error, run } = useSubmit()
  const mint = (event: Event) => {
    event.preventDefault()
    void run(async () => {
      const { data } = must(await api.POST('/api/v1/agents/{agentId}/tokens', { params: { path: { agentId: agent.id } }, body: { ttl_seconds: ttl } }))
      setMinted(data)
    })
  }
  return (
    <section aria-labelledby="mint-title" class="card">
      <h2 id="mint-title">Mint a token</h2>
      <p>Give the program a token to call the API as this Agent (Authorization: Bearer). It has all the Agent's scopes and no refresh: mint another when it expires.</p>
      <form onSubmit={mint}>
        <div class="field">
          <label for="mint-ttl">Token lifetime</label>
          <select id="mint-ttl" value={String(ttl)} onChange={(e) => setTtl(Number(e.currentTarget.value))}>
            {LIFETIMES.map((l) => (
              <option key={l.seconds} value={String(l.seconds)}>
                {l.words}
              </option>
            ))}
          </select>
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Minting…' : 'Mint token'}
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
      {minted && (
        <ShownOnce title="Your new token" secret={minted.token} copyLabel="Copy the new token" onDone={() => setMinted(null)}>
          <p>It expires {formatDate(minted.expires_at)}.</p>
        </ShownOnce>
      )}
    </section>
  )
}
