// Chart.js, only what the statistics draw: bars on a category axis. Imported with import() by the
// statistics page alone, so the bundler puts it in its own chunk and the first page never loads it; only
// the registered controller, element and scales are bundled (Chart.js is tree-shakable by registration).
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js'

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip)

/** A bar chart of `values` over `labels` on `canvas`; the caller destroys it (Chart#destroy). */
export function drawBars(canvas: HTMLCanvasElement, labels: string[], values: number[], label: string): Chart {
  const accent = getComputedStyle(document.documentElement).getPropertyValue('--accent').trim() || '#1d4ed8'
  return new Chart(canvas, {
    type: 'bar',
    data: { labels, datasets: [{ label, data: values, backgroundColor: accent }] },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      // No animation: the numbers matter, and a reload while clicks arrive should not bounce.
      animation: false,
      scales: { y: { beginAtZero: true, ticks: { precision: 0 } }, x: { ticks: { autoSkip: true, maxRotation: 0 } } },
      plugins: { legend: { display: false } },
    },
  })
}
