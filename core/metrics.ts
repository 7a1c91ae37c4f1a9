// Metrics in the Prometheus text format (version 0.0.4), for /metrics of both processes. Small on
// purpose: the redirector's hot path may pay no more than an increment, so most figures are read at
// scrape time from counters the code keeps anyway (collect callbacks), and the one thing observed per
// request, the latency histogram, is an array of bucket counts bumped by a short loop. No allocation on
// observe or inc once a label set has been seen.

export type Labels = Readonly<Record<string, string>>

/** One figure of a family at scrape time. */
export interface Sample {
  labels?: Labels
  value: number
}

interface Family {
  name: string
  help: string
  type: 'counter' | 'gauge' | 'histogram'
  /** The lines of its samples, `name{labels} value`. */
  lines(): string[]
}

/** Prometheus' label value escaping: backslash, double quote and line feed. */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

function labelText(labels: Labels | undefined, extra?: [string, string]): string {
  const pairs = Object.entries(labels ?? {})
  if (extra) pairs.push(extra)
  if (pairs.length === 0) return ''
  return `{${pairs.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`
}

function number(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Infinity) return '+Inf'
  if (value === -Infinity) return '-Inf'
  return String(value)
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/

/** A counter with a fixed set of label names; each label set's count is found by one Map lookup. */
export class Counter {
  private readonly counts = new Map<string, { labels: Labels; value: number }>()

  constructor(private readonly labelNames: readonly string[] = []) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = this.labelNames.length === 0 ? '' : this.labelNames.map((n) => labels[n] ?? '').join('\u0000')
    const entry = this.counts.get(key)
    if (entry) entry.value += by
    else this.counts.set(key, { labels: Object.fromEntries(this.labelNames.map((n) => [n, labels[n] ?? ''])), value: by })
  }

  samples(): Sample[] {
    return [...this.counts.values()].map(({ labels, value }) => ({ labels, value }))
  }
}

/**
 * Cumulative buckets (upper bounds in the unit observed, ascending), a sum and a count. observe() is a
 * loop over the bounds and two additions.
 */
export class Histogram {
  readonly counts: Float64Array
  sum = 0
  count = 0

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length)
  }

  observe(value: number): void {
    const bounds = this.bounds
    let i = 0
    while (i < bounds.length && value > bounds[i]!) i++
    if (i < bounds.length) this.counts[i]!++
    this.sum += value
    this.count++
  }

  lines(name: string, labels?: Labels): string[] {
    const out: string[] = []
    let cumulative = 0
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i]!
      out.push(`${name}_bucket${labelText(labels, ['le', number(this.bounds[i]!)])} ${cumulative}`)
    }
    out.push(`${name}_bucket${labelText(labels, ['le', '+Inf'])} ${this.count}`)
    out.push(`${name}_sum${labelText(labels)} ${this.sum}`)
    out.push(`${name}_count${labelText(labels)} ${this.count}`)
    return out
  }
}

/** Histograms by label set (the API's latency by route and status): one Map lookup an observation. */
export class LabeledHistogram {
  private readonly series = new Map<string, { labels: Labels; histogram: Histogram }>()

  constructor(
    private readonly bounds: readonly number[],
    private readonly labelNames: readonly string[],
  ) {}

  observe(labels: Labels, value: number): void {
    const key = this.labelNames.map((n) => labels[n] ?? '').join('\u0000')
    let entry = this.series.get(key)
    if (!entry) {
      entry = { labels: Object.fromEntries(this.labelNames.map((n) => [n, labels[n] ?? ''])), histogram: new Histogram(this.bounds) }
      this.series.set(key, entry)
    }
    entry.histogram.observe(value)
  }

  lines(name: string): string[] {
    return [...this.series.values()].flatMap(({ labels, histogram }) => histogram.lines(name, labels))
  }
}

/** Latency buckets in seconds, as Prometheus names them: 0.5 ms to 10 s. */
export const LATENCY_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const

/** The families of one process, rendered on each scrape in the order they were added. */
export class MetricsRegistry {
  private readonly families: Family[] = []

  private add(family: Family): void {
    if (!NAME.test(family.name)) throw new Error(`metric name ${family.name} is not a Prometheus name`)
    if (this.families.some((f) => f.name === family.name)) throw new Error(`metric ${family.name} registered twice`)
    this.families.push(family)
  }

  /** A counter whose samples are read when scraped (a field the code increments anyway). */
  counterFrom(name: string, help: string, collect: () => number | Sample[]): void {
    this.add({ name, help, type: 'counter', lines: () => sampleLines(name, collect()) })
  }

  gaugeFrom(name: string, help: string, collect: () => number | Sample[]): void {
    this.add({ name, help, type: 'gauge', lines: () => sampleLines(name, collect()) })
  }

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    const counter = new Counter(labelNames)
    this.counterFrom(name, help, () => counter.samples())
    return counter
  }

  histogram(name: string, help: string, bounds: readonly number[]): Histogram {
    const histogram = new Histogram(bounds)
    this.add({ name, help, type: 'histogram', lines: () => histogram.lines(name) })
    return histogram
  }

  labeledHistogram(name: string, help: string, bounds: readonly number[], labelNames: readonly string[]): LabeledHistogram {
    const histogram = new LabeledHistogram(bounds, labelNames)
    this.add({ name, help, type: 'histogram', lines: () => histogram.lines(name) })
    return histogram
  }

  /** The exposition text: HELP, TYPE and samples of every family. */
  render(): string {
    const out: string[] = []
    for (const family of this.families) {
      out.push(`# HELP ${family.name} ${family.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`)
      out.push(`# TYPE ${family.name} ${family.type}`)
      out.push(...family.lines())
    }
    return `${out.join('\n')}\n`
  }
}

function sampleLines(name: string, collected: number | Sample[]): string[] {
  const samples = typeof collected === 'number' ? [{ value: collected }] : collected
  return samples.map((s) => `${name}${labelText(s.labels)} ${number(s.value)}`)
}

/** The content type of the text format. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

/**
 * Whether a request may read /metrics: `Authorization: Bearer <METRICS_TOKEN>`, compared in constant
 * time. Without a configured token /metrics is off (404), so nothing is exposed by default.
 */
export function metricsAllowed(request: Request, token: string | undefined): boolean {
  if (!token) return false
  const given = request.headers.get('authorization') ?? ''
  const expected = `Bearer ${token}`
  if (given.length !== expected.length) return false
  let diff = 0
  for (let i = 0; i < given.length; i++) diff |= given.charCodeAt(i) ^ expected.charCodeAt(i)
  return diff === 0
}

/** The answer to GET /metrics: 404 when off, 401 without the token, else the text. */
export function metricsResponse(request: Request, token: string | undefined, registry: Pick<MetricsRegistry, 'render'>): Response {
  if (!token) return new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } })
  if (!metricsAllowed(request, token)) {
    return new Response('Send Authorization: Bearer <METRICS_TOKEN>', { status: 401, headers: { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Bearer realm="metrics"' } })
  }
  return new Response(registry.render(), { headers: { 'content-type': METRICS_CONTENT_TYPE, 'cache-control': 'no-store' } })
}
