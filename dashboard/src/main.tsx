// The dashboard: a client of the public API (api.ts), one page per section.
import { render } from 'preact'
import './styles.css'
import { Layout } from './components/Layout'
import { AccountPage } from './pages/AccountPage'
import { AgentPage } from './pages/agents/AgentPage'
import { AgentsPage } from './pages/agents/AgentsPage'
import { ApprovalsPage } from './pages/ApprovalsPage'
import { LinksPage } from './pages/LinksPage'
import { useLocation } from './router'

function App() {
  const { path } = useLocation()
  const page = path.startsWith('/account') ? <AccountPage /> : path === '/' ? <LinksPage /> : agentsRoute(path) ?? <NotFound />
  return <Layout path={path}>{page}</Layout>
}

/** /agents, /agents/{id} and /approvals. */
function agentsRoute(path: string) {
  const agent = /^\/agents\/([^/]+)$/.exec(path)
  if (agent) return <AgentPage key={agent[1]} agentId={decodeURIComponent(agent[1]!)} />
  if (path === '/agents') return <AgentsPage />
  if (path === '/approvals') return <ApprovalsPage />
  return null
}

function NotFound() {
  return (
    <>
      <h1>Page not found</h1>
      <p>There is no dashboard page at this address.</p>
    </>
  )
}

render(<App />, document.getElementById('app')!)
