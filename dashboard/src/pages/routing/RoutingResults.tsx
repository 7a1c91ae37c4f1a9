// What each route of a link did in a period: the statistics call's routingStats (one row per rule,
// A/B variant and the default, with its clicks and the leads, sales and conversions those clicks
// brought) and routingSummary. Pro only, as the statistics are; bots are left out.
import { useEffect, useState } from 'preact/hooks'
import { api, must } from '../../api'
import { ErrorNotice, formatDate, Loading } from '../../components/ui'
import { PERIODS, periodLabel, type Period } from '../../lib/periods'
import type { RouteResult, RoutingSummary } from '../../types'

interface Results {
  period: string
  routes: RouteResult[]
  summary: RoutingSummary
}

/** `reload` changes when the routing was saved or removed: the routes configured now are listed. */
export function RoutingResults({ alias, domain, reload }: { alias: string; domain: string; reload: number }) {
  // All time by default: an A/B test is judged over its whole run.
  const [period, setPeriod] = useState<Period>('ALL')
  const [results, setResults] = useState<Results | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [refresh, setRefresh] = useState(0)

  useEffect(() => {
    let current = true
    setBusy(true)
    setError(null)
    api
      .GET('/api/v1/links/{alias}/stats', { params: { path: { alias }, query: { period, domain } } })
      .then((answer) => {
        const data = must(answer).data
        // Free-form in the API document; their shapes are documented with it (types.ts).
        if (current) setResults({ period: data.period, routes: data.routingStats as unknown as RouteResult[], summary: data.routingSummary as unknown as RoutingSummary })
      })
      .catch((failure) => current && setError(failure))
      .finally(() => current && setBusy(false))
    return () => {
      current = false
    }
  }, [alias, domain, period, reload, refresh])

  return (
    <div class="routing-results" aria-busy={busy}>
      <h3>Results by route</h3>
      <div class="toolbar">
        <div class="filter">
          <label for="routing-period">Period</label>
          <select id="routing-period" value={period} onChange={(e) => setPeriod(e.currentTarget.value as Period)}>
            {PERIODS.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
          </select>
        </div>
        <button type="button" onClick={() => setRefresh((n) => n + 1)} disabled={busy}>
          Refresh results
        </button>
      </div>
      <ErrorNotice error={error} />
      {!results ? !error && <Loading what="the results" /> : <ResultsTable results={results} />}
    </div>
  )
}

const plural = (n: number, one: string, many: string) => `${n.toLocaleString()} ${n === 1 ? one : many}`

function routeName(result: RouteResult): string {
  const id = result.route.slice(result.route.indexOf(':') + 1)
  if (result.kind === 'rule') return `Rule ${id}`
  if (result.kind === 'variant') return `Variant ${id}`
  return "The link's URL"
}

function ResultsTable({ results }: { results: Results }) {
  const { summary, routes } = results
  const when = periodLabel(results.period).toLowerCase()
  const ab = summary.ab
  return (
    <>
      <p class="summary" aria-live="polite">
        {plural(summary.routed_clicks, 'click', 'clicks')} sent by a rule or the A/B test and {plural(summary.default_clicks, 'click', 'clicks')} to the link's URL, {when}
      </p>
      {ab && (
        <p>
          {ab.status === 'completed'
            ? `The A/B test has ended: variant ${ab.winner ?? '—'} won${ab.winner_by ? ` on ${ab.winner_by}` : ''}.`
            : `The A/B test is running with ${ab.variants} variants${ab.ends_at ? `; it ends ${formatDate(ab.ends_at)}, and the variant with the most ${ab.winner_by ?? 'conversions'} wins` : ' until it is changed'}.`}
        </p>
      )}
      <div class="table-wrap">
        <table class="routes">
          <caption>Results by route, {when}</caption>
          <thead>
            <tr>
              <th scope="col">Route</th>
              <th scope="col">Destination</th>
              <th scope="col" class="num">
                Clicks
              </th>
              <th scope="col" class="num">
                Leads
              </th>
              <th scope="col" class="num">
                Sales
              </th>
              <th scope="col" class="num">
                Conversions
              </th>
            </tr>
          </thead>
          <tbody>
            {routes.map((r) => (
              <tr key={r.route}>
                <th scope="row">{routeName(r)}</th>
                <td class="destination">{r.url ?? <span class="muted">No longer configured</span>}</td>
                <td class="num" data-label="Clicks">
                  {r.clicks.toLocaleString()}
                </td>
                <td class="num" data-label="Leads">
                  {r.leads.toLocaleString()}
                </td>
                <td class="num" data-label="Sales">
                  {r.sales.toLocaleString()}
                </td>
                <td class="num" data-label="Conversions">
                  {r.conversions.toLocaleString()}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="hint">Bots are left out; leads, sales and conversions are counted through the click that brought them.</p>
    </>
  )
}
