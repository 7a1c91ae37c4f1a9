// The dashboard: a client of the public API (api.ts), one page per section.
import { render } from 'preact'
import './styles.css'
import { Layout } from './components/Layout'
import { AccountPage } from './pages/AccountPage'
import { DomainsPage } from './pages/DomainsPage'
import { LinksPage } from './pages/LinksPage'
import { TagsPage } from './pages/TagsPage'
import { useLocation } from './router'

function App() {
  const { path } = useLocation()
  const page = path.startsWith('/account') ? <AccountPage /> : path === '/' ? <LinksPage /> : pageOf(path)
  return <Layout path={path}>{page}</Layout>
}

/** The pages added after the first ones: one line each. */
function pageOf(path: string) {
  if (path === '/tags') return <TagsPage />
  if (path === '/domains') return <DomainsPage />
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

render(<App />, document.getElementById('app')!)
