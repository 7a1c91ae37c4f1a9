// Pro statistics of one period: clicks over time (chart + table), the breakdowns as tables with bars,
// bots apart from people, conversions by type and revenue net of refunds.
import { useMemo } from 'preact/hooks'
import { BarChart, CountTable } from '../components/charts'
import { formatDate } from '../components/ui'
import type { StatsData } from '../types'

const BUCKET_FORMAT: Record<string, Intl.DateTimeFormatOptions> = {
  hour: { weekday: 'short', hour: '2-digit', minute: '2-digit' },
  day: { month: 'short', day: 'numeric' },
  month: { year: 'numeric', month: 'short' },
}
const BUCKET_WORD: Record<string, { title: string; column: string }> = {
  hour: { title: 'Clicks per hour', column: 'Hour starting' },
  day: { title: 'Clicks per day', column: 'Day' },
  month: { title: 'Clicks per month', column: 'Month' },
}

type Breakdown = { title: string; column: string; rows: Array<[string, number]> }

/** The API's top-10 lists; an empty key means the click did not say (no referrer: a direct visit). */
function breakdowns(stats: StatsData): Breakdown[] {
  const rows = <T extends { clicks: number }>(list: T[], key: (item: T) => string, empty = 'Unknown'): Array<[string, number]> => list.map((item) => [key(item) || empty, item.clicks])
  return [
    { title: 'Countries', column: 'Country', rows: rows(stats.countries, (c) => c.country) },
    { title: 'Referrers', column: 'Referrer', rows: rows(stats.referrers, (r) => r.referrer, 'Direct (no referrer)') },
    { title: 'Devices', column: 'Device', rows: rows(stats.devices, (d) => d.device) },
    { title: 'Browsers', column: 'Browser', rows: rows(stats.browsers, (b) => b.browser) },
    { title: 'Operating systems', column: 'Operating system', rows: rows(stats.os, (o) => o.os) },
  ]
}

export function StatsView({ people, everyone, periodLabel }: { people: StatsData; everyone: StatsData; periodLabel: string }) {
  const format = new Intl.DateTimeFormat(undefined, BUCKET_FORMAT[people.bucket] ?? BUCKET_FORMAT.day)
  const words = BUCKET_WORD[people.bucket] ?? BUCKET_WORD.day!
  // Memoised so the chart is redrawn only when the figures change, not on every render.
  const series = useMemo(() => ({ labels: people.timeseries.map((b) => format.format(new Date(b.date))), values: people.timeseries.map((b) => b.clicks) }), [people])
  const bots = Math.max(0, everyone.total_clicks - people.total_clicks)
  return (
    <>
      <p class="summary" aria-live="polite">
        <strong>{people.total_clicks.toLocaleString()}</strong> {people.total_clicks === 1 ? 'click' : 'clicks'} by people, {periodLabel.toLowerCase()}
        {people.last_clicked_at && <> (last one {formatDate(people.last_clicked_at)})</>}
      </p>
      {people.timeseries.length === 0 ? (
        <p class="empty">No clicks yet.</p>
      ) : (
        <BarChart id="clicks-chart-title" title={`${words.title}, ${periodLabel.toLowerCase()}`} column={words.column} valueName="Clicks" series={series} />
      )}
      <div class="breakdowns">
        {breakdowns(people).map((b) => (
          <div key={b.title}>
            {b.rows.length === 0 ? (
              <>
                <h3>{b.title}</h3>
                <p class="empty">No clicks in this period.</p>
              </>
            ) : (
              <CountTable caption={b.title} column={b.column} valueName="Clicks" rows={b.rows} bars />
            )}
          </div>
        ))}
      </div>
      <h3>Bots</h3>
      <p>{bots === 0 ? 'No clicks by bots or crawlers' : `${bots.toLocaleString()} ${bots === 1 ? 'click' : 'clicks'} by bots and crawlers`} in this period, not counted in the figures above.</p>
      <Conversions stats={people} />
    </>
  )
}

/** Conversions by type and currency, and revenue per currency with refunds subtracted (Pro fields). */
function Conversions({ stats }: { stats: StatsData }) {
  const conversions = stats.conversions ?? []
  const revenue = stats.revenue ?? []
  const money = (value: number, currency: string | null) => (currency ? `${value.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${currency}` : '—')
  return (
    <>
      <h3>Conversions</h3>
      {conversions.length === 0 ? (
        <p class="empty">No conversions reported in this period.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption>Conversions by type</caption>
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col" class="num">
                  Count
                </th>
                <th scope="col" class="num">
                  Value
                </th>
              </tr>
            </thead>
            <tbody>
              {conversions.map((c) => (
                <tr key={`${c.type} ${c.currency}`}>
                  <th scope="row">{c.type}</th>
                  <td class="num">{c.count.toLocaleString()}</td>
                  <td class="num">{money(c.value, c.currency)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {revenue.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption>Revenue net of refunds</caption>
            <thead>
              <tr>
                <th scope="col">Currency</th>
                <th scope="col" class="num">
                  Gross
                </th>
                <th scope="col" class="num">
                  Refunds
                </th>
                <th scope="col" class="num">
                  Net
                </th>
              </tr>
            </thead>
            <tbody>
              {revenue.map((r) => (
                <tr key={r.currency}>
                  <th scope="row">{r.currency}</th>
                  <td class="num">{money(r.gross, r.currency)}</td>
                  <td class="num">{money(r.refunds, r.currency)}</td>
                  <td class="num">{money(r.net, r.currency)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  )
}
