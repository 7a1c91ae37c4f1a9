// The account's Agents, loaded once per page (the API lists them all, newest first; there is no route
// for a single one, so a page about one Agent finds it in the list).
import { useEffect, useState } from 'preact/hooks'
import { api, must, type Schemas } from '../../api'

export type AgentRecord = Schemas['AgentListResponse']['data']['agents'][number]

export function useAgents(): { agents: AgentRecord[] | null; error: unknown; reload: () => Promise<void> } {
  const [agents, setAgents] = useState<AgentRecord[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const reload = () =>
    api
      .GET('/api/v1/agents')
      .then((result) => {
        setAgents(must(result).data.agents)
        setError(null)
      })
      .catch(setError)
  useEffect(() => void reload(), [])
  return { agents, error, reload }
}

/** The status in words (never by colour alone). */
export const statusWords = (status: AgentRecord['status']) => (status === 'killed' ? 'Killed: its tokens are refused' : 'Active')
