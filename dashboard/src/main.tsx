// The dashboard: a client of the public API (api.ts), one page per section.
import { render } from 'preact'
import './styles.css'
import { Layout } from './components/Layout'
import { AccountPage } from './pages/AccountPage'
import { AgentPage } from './pages/agents/AgentPage'
import { AgentsPage } from './pages/agents/AgentsPage'
import { ApprovalsPage } from './pages/ApprovalsPage'
import { DomainsPage } from './pages/DomainsPage'
import { ImportExportPage } from './pages/ImportExportPage'
import { LinkPage, parseLinkPath } from './pages/LinkPage'
import { LinksPage } from './pages/LinksPage'
import { TagsPage } from './pages/TagsPage'
import { useLocation } from './router'

function App() {
  const { path } = useLocation()
  return <Layout path={path}>{pageOf(path)}</Layout>
}

/** The page of an /app path (without /app). */
function pageOf(path: string) {
  const link = parseLinkPath(path)
  if (link) return <LinkPage key={`${link.domain}/${link.alias}`} {...link} />
  if (path.startsWith('/account')) return <AccountPage />
  if (path === '/import') return <ImportExportPage />
  if (path === '/tags') return <TagsPage />
  if (path === '/domains') return <DomainsPage />
  const agent = /^\/agents\/([^/]+)$/.exec(path)
  if (agent) return <AgentPage key={agent[1]} agentId={decodeURIComponent(agent[1]!)} />
  if (path === '/agents') return <AgentsPage />
  if (path === '/approvals') return <ApprovalsPage />
  if (path === '/') return <LinksPage />
  return <NotFound />
}

function NotFound() {
  return (
    <>
      <h1>Page not found</h1>
      <p>There is no dashboard page at this address.</p>
    </>
  )
}

// The shell's "Loading…" is for the moment before this script runs; Preact keeps DOM it did not make.
const root = document.getElementById('app')!
root.replaceChildren()
render(<App />, root)
