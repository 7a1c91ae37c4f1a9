import { describe, expect, test } from 'bun:test'
import { parseMetrics } from '../test/support/metrics'
import { Histogram, metricsAllowed, metricsResponse, MetricsRegistry } from './metrics'

describe('the Prometheus text format', () => {
  test('HELP and TYPE before each family; counters, gauges, labels escaped; histograms cumulative with +Inf, sum and count', () => {
    const registry = new MetricsRegistry()
    const errors = registry.counter('app_errors_total', 'Errors by code', ['code'])
    errors.inc({ code: 'RATE_LIMITED' })
    errors.inc({ code: 'RATE_LIMITED' })
    errors.inc({ code: 'we"ird\\\n' })
    registry.gaugeFrom('app_queue_rows', 'Rows waiting', () => 7)
    const latency = registry.histogram('app_duration_seconds', 'Latency', [0.01, 0.1, 1])
    for (const v of [0.005, 0.01, 0.05, 0.5, 3]) latency.observe(v)
    const text = registry.render()
    expect(text).toContain('# HELP app_errors_total Errors by code\n# TYPE app_errors_total counter\n')
    expect(text).toContain('app_errors_total{code="RATE_LIMITED"} 2\n')
    expect(text).toContain('app_errors_total{code="we\\"ird\\\\\\n"} 1\n')
    expect(text).toContain('# TYPE app_queue_rows gauge\napp_queue_rows 7\n')
    const samples = parseMetrics(text)
    expect(samples.get('app_duration_seconds_bucket{le="0.01"}')).toBe(2)
    expect(samples.get('app_duration_seconds_bucket{le="0.1"}')).toBe(3)
    expect(samples.get('app_duration_seconds_bucket{le="1"}')).toBe(4)
    expect(samples.get('app_duration_seconds_bucket{le="+Inf"}')).toBe(5)
    expect(samples.get('app_duration_seconds_count')).toBe(5)
    expect(samples.get('app_duration_seconds_sum')).toBeCloseTo(3.565, 9)
    expect(text.endsWith('\n')).toBe(true)
  })

  test('a name Prometheus would refuse, or a family registered twice, is a programming error at start', () => {
    const registry = new MetricsRegistry()
    expect(() => registry.gaugeFrom('app-rows', 'x', () => 1)).toThrow(/not a Prometheus name/)
    registry.gaugeFrom('app_rows', 'x', () => 1)
    expect(() => registry.gaugeFrom('app_rows', 'x', () => 1)).toThrow(/twice/)
  })

  test('a histogram observation is a bucket bump: no allocation once built', () => {
    const h = new Histogram([1, 2, 3])
    h.observe(2)
    h.observe(2.5)
    expect([...h.counts]).toEqual([0, 1, 1])
    expect(h.count).toBe(2)
  })
})

describe('who may read /metrics', () => {
  const TOKEN = 'metrics-token-0123456789abcdefghijklmn'
  const registry = new MetricsRegistry()
  registry.gaugeFrom('app_secret_figure', 'x', () => 42)
  const get = (authorization?: string) => new Request('http://x/metrics', { headers: authorization ? { authorization } : {} })

  test('only with the bearer token; without a configured token /metrics does not exist', async () => {
    expect(metricsResponse(get(`Bearer ${TOKEN}`), TOKEN, registry).status).toBe(200)
    for (const header of [undefined, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, TOKEN, `Basic ${TOKEN}`, `bearer ${TOKEN}`]) {
      const refused = metricsResponse(get(header), TOKEN, registry)
      expect(refused.status, String(header)).toBe(401)
      expect(await refused.text()).not.toContain('42')
    }
    expect(metricsResponse(get(`Bearer ${TOKEN}`), undefined, registry).status).toBe(404)
    expect(metricsAllowed(get('Bearer '), '')).toBe(false)
  })
})
