// How the statistics are drawn: every chart has a visible title and the same numbers as a table (a
// screen reader, or anyone who wants the figures, gets them without reading the picture); breakdowns are
// tables whose bar is decoration beside the number. Chart.js is loaded on first use (../charts.ts).
import { useEffect, useRef, useState } from 'preact/hooks'

let chartsModule: Promise<typeof import('../charts')> | null = null
const loadCharts = () => (chartsModule ??= import('../charts'))

export interface Series {
  /** Row headers of the table and the chart's axis labels. */
  labels: string[]
  values: number[]
}

/** A titled bar chart with a "Show as table" equivalent. `id` names the title for aria-labelledby. */
export function BarChart({ id, title, column, valueName, series }: { id: string; title: string; column: string; valueName: string; series: Series }) {
  const canvas = useRef<HTMLCanvasElement>(null)
  const [failed, setFailed] = useState(false)
  useEffect(() => {
    let chart: { destroy(): void } | null = null
    let current = true
    loadCharts()
      .then(({ drawBars }) => {
        if (current && canvas.current) chart = drawBars(canvas.current, series.labels, series.values, valueName)
      })
      // Without the chart the table below still has every number.
      .catch(() => current && setFailed(true))
    return () => {
      current = false
      chart?.destroy()
    }
  }, [series, valueName])
  const total = series.values.reduce((sum, n) => sum + n, 0)
  return (
    <figure class="chart" aria-labelledby={id}>
      <figcaption id={id} class="chart-title">
        {title}
      </figcaption>
      <div class="chart-box">
        <canvas ref={canvas} role="img" aria-label={`${title}: bar chart, ${total.toLocaleString()} in all; the table below has every value`} />
      </div>
      {failed && <p class="hint">The chart could not be drawn; the table has the numbers.</p>}
      <details>
        <summary>Show as table</summary>
        <CountTable caption={title} column={column} valueName={valueName} rows={series.labels.map((label, i) => [label, series.values[i] ?? 0])} />
      </details>
    </figure>
  )
}

/** A table of counts; with `bars`, each count also drawn as a bar beside its number (hidden from screen readers). */
export function CountTable({ caption, column, valueName, rows, bars = false }: { caption: string; column: string; valueName: string; rows: Array<[string, number]>; bars?: boolean }) {
  const max = Math.max(1, ...rows.map(([, n]) => n))
  return (
    <div class="table-wrap">
      <table class="counts">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{column}</th>
            <th scope="col" class="num">
              {valueName}
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([label, n]) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              <td class="num">
                {bars && <meter aria-hidden="true" min={0} max={max} value={n} />} {n.toLocaleString()}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
