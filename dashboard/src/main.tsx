// The dashboard: a client of the public API (api.ts), one page per section (routes.tsx).
import { render } from 'preact'
import './styles.css'
import { Layout } from './components/Layout'
import { useLocation } from './router'
import { routeOf, SECTIONS } from './routes'

function App() {
  const { path } = useLocation()
  const route = routeOf(path)
  return (
    <Layout sections={SECTIONS} current={route?.section ?? null}>
      {route ? route.render() : <NotFound />}
    </Layout>
  )
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
