// The dashboard: a client of the public API (api.ts), one page per section.
import { render } from 'preact'
import './styles.css'
import { Layout } from './components/Layout'
import { AccountPage } from './pages/AccountPage'
import { ImportExportPage } from './pages/ImportExportPage'
import { LinksPage } from './pages/LinksPage'
import { useLocation } from './router'

function App() {
  const { path } = useLocation()
  const page = path.startsWith('/account') ? <AccountPage /> : path === '/import' ? <ImportExportPage /> : path === '/' ? <LinksPage /> : <NotFound />
  return <Layout path={path}>{page}</Layout>
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
