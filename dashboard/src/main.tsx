// The dashboard: a client of the public API (api.ts), one page per section (routes.tsx).
import { render } from 'preact'
import './styles.css'
import { Layout } from './components/Layout'
import { useOperator } from './pages/moderation/operator'
import { useLocation } from './router'
import { MODERATION_SECTION, routeOf, SECTIONS } from './routes'

function App() {
  const { path } = useLocation()
  const operator = useOperator()
  const route = routeOf(path)
  // The moderation pages are for operators: anyone else finds no page there, as the API finds no route.
  const moderation = route?.section === MODERATION_SECTION.label
  return (
    <Layout sections={operator ? [...SECTIONS, MODERATION_SECTION] : SECTIONS} current={route?.section ?? null}>
      {!route ? <NotFound /> : !moderation || operator ? route.render() : <NotFound />}
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
