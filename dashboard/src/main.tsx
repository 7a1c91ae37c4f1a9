// The dashboard: a client of the public API (api.ts), one page per section.
import { render } from 'preact'
import './styles.css'
import { Layout } from './components/Layout'
import { AccountPage } from './pages/AccountPage'
import { LinksPage } from './pages/LinksPage'
import { LinkPage, parseLinkPath } from './pages/LinkPage'
import { useLocation } from './router'

function App() {
  const { path } = useLocation()
  const link = parseLinkPath(path)
  const page = link ? <LinkPage key={`${link.domain}/${link.alias}`} {...link} /> : path.startsWith('/account') ? <AccountPage /> : path === '/' ? <LinksPage /> : <NotFound />
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

render(<App />, document.getElementById('app')!)
