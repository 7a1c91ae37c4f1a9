// A link's statistics for a period the person picks. Pro: the API's figures (StatsView). Free: the API
// answers 403 STATS_REQUIRES_PRO with basic totals in its body; those are shown with what Pro adds.
// Bots are shown apart: the API leaves them out unless include_bots=true, so the page asks both ways
// and the difference is the bots' share.
import { useEffect, useState } from 'preact/hooks'
import { api, must } from '../api'
import { ErrorNotice, formatDate, Loading } from '../components/ui'
import { PERIODS, periodLabel, type Period } from '../lib/periods'
import { BASE, Link } from '../router'
import type { StatsData } from '../types'
import { StatsView } from './StatsView'

type Outcome = { plan: 'pro'; people: StatsData; everyone: StatsData } | { plan: 'free'; totalClicks: number | null; lastClickedAt: string | null }

async function loadStats(alias: string, domain: string, period: Period): Promise<Outcome> {
  const ask = (include_bots: boolean) => api.GET('/api/v1/links/{alias}/stats', { params: { path: { alias }, query: { period, domain, include_bots } } })
  const [people, everyone] = await Promise.all([ask(false), ask(true)])
  if (people.response.status === 403 && people.error?.error === 'STATS_REQUIRES_PRO') {
    const basic = (people.error.data ?? {}) as { total_clicks?: number | null; last_clicked_at?: string | null }
    return { plan: 'free', totalClicks: basic.total_clicks ?? null, lastClickedAt: basic.last_clicked_at ?? null }
  }
  return { plan: 'pro', people: must(people).data, everyone: must(everyone).data }
}

export function LinkStats({ alias, domain, onRefresh }: { alias: string; domain: string; onRefresh: () => void }) {
  const [period, setPeriod] = useState<Period>('7D')
  const [outcome, setOutcome] = useState<Outcome | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [reload, setReload] = useState(0)

  useEffect(() => {
    let current = true
    setBusy(true)
    setError(null)
    loadStats(alias, domain, period)
      .then((found) => current && setOutcome(found))
      .catch((failure) => current && setError(failure))
      .finally(() => current && setBusy(false))
    return () => {
      current = false
    }
  }, [alias, domain, period, reload])

  return (
    <section aria-labelledby="stats-title" class="card" aria-busy={busy}>
      <h2 id="stats-title">Statistics</h2>
      <div class="toolbar">
        <fieldset class="periods">
          <legend>Period</legend>
          {PERIODS.map((p) => (
            <label key={p.value}>
              <input type="radio" name="period" value={p.value} checked={period === p.value} onChange={() => setPeriod(p.value)} /> {p.label}
            </label>
          ))}
        </fieldset>
        <button
          type="button"
          onClick={() => {
            setReload((n) => n + 1)
            onRefresh()
          }}
          disabled={busy}
        >
          Refresh statistics
        </button>
      </div>
      <ErrorNotice error={error} />
      {!outcome ? (
        !error && <Loading what="statistics" />
      ) : outcome.plan === 'free' ? (
        <ProOffer totalClicks={outcome.totalClicks} lastClickedAt={outcome.lastClickedAt} />
      ) : (
        <StatsView people={outcome.people} everyone={outcome.everyone} periodLabel={periodLabel(outcome.people.period)} />
      )}
    </section>
  )
}

/** A Free account's totals, and what upgrading would show here. */
function ProOffer({ totalClicks, lastClickedAt }: { totalClicks: number | null; lastClickedAt: string | null }) {
  return (
    <>
      <dl class="facts">
        <dt>Clicks of all time</dt>
        <dd>{totalClicks === null ? 'not available right now' : totalClicks.toLocaleString()}</dd>
        <dt>Last click</dt>
        <dd>{formatDate(lastClickedAt)}</dd>
      </dl>
      <div class="offer">
        <h3>More with Pro</h3>
        <p>Detailed statistics are part of Pro. For each period, Pro shows:</p>
        <ul>
          <li>clicks over time, hour by hour or day by day</li>
          <li>countries, referrers, devices, browsers and operating systems</li>
          <li>clicks by bots and crawlers, counted apart from people</li>
          <li>conversions by type, and revenue net of refunds</li>
        </ul>
        <p>
          <Link href={`${BASE}/account`}>Upgrade to Pro on the account page</Link>
        </p>
      </div>
    </>
  )
}
