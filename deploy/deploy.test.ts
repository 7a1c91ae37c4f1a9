// The alert rules and the Grafana dashboard name only metrics the processes export: every metric name in
// their PromQL expressions is a family (or a histogram's _bucket/_sum/_count) of a real scrape of the
// embedded default, which renders both the API's and the redirector's families.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { METRICS_TEST_TOKEN } from '../test/support/metrics'
import { freePort, startEntry, type Child } from '../test/support/processes'

let product: Child
let exported: Set<string>

/** The families of a scrape, from its # TYPE lines, with a histogram's series names. */
function familiesOf(text: string): Set<string> {
  const names = new Set<string>()
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(match[1]!)
    if (match[2] === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(match[1]! + suffix)
  }
  return names
}

/** Metric names in a PromQL expression: identifiers of ours (the linkservice_ prefix). */
const metricsIn = (expr: string) => [...expr.matchAll(/\blinkservice_[a-z0-9_]+/g)].map((m) => m[0])

beforeAll(async () => {
  const port = await freePort()
  product = await startEntry('src/main.ts', { PORT: String(port), DATA_DIR: join(mkdtempSync(join(tmpdir(), 'deploy-')), 'data'), METRICS_TOKEN: METRICS_TEST_TOKEN }, port)
  const response = await fetch(`${product.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TEST_TOKEN}` } })
  exported = familiesOf(await response.text())
}, 120_000)

afterAll(async () => {
  await product?.stop()
})

describe('deploy/', () => {
  test('prometheus/alerts.yml: every rule has a name, an expression of exported metrics and a summary', () => {
    const rules = Bun.YAML.parse(readFileSync(join(import.meta.dir, 'prometheus/alerts.yml'), 'utf8')) as { groups: { name: string; rules: { alert: string; expr: string; annotations: { summary: string } }[] }[] }
    const all = rules.groups.flatMap((g) => g.rules)
    expect(all.length).toBeGreaterThan(5)
    for (const rule of all) {
      expect(rule.alert, JSON.stringify(rule)).toMatch(/^LinkService[A-Za-z]+$/)
      expect(rule.annotations.summary.length, rule.alert).toBeGreaterThan(0)
      const names = metricsIn(rule.expr)
      expect(names.length, rule.alert).toBeGreaterThan(0)
      expect(names.filter((n) => !exported.has(n)), `${rule.alert}: ${rule.expr}`).toEqual([])
    }
    // The promise the service makes: no dropped click goes unnoticed.
    expect(all.some((r) => r.expr.includes('linkservice_clicks_dropped_total'))).toBe(true)
  })

  test('grafana/linkservice.json: a dashboard whose every query names exported metrics', () => {
    const dashboard = JSON.parse(readFileSync(join(import.meta.dir, 'grafana/linkservice.json'), 'utf8')) as { uid: string; panels: { title: string; targets: { expr: string }[] }[] }
    expect(dashboard.uid).toBe('linkservice')
    expect(dashboard.panels.length).toBeGreaterThan(5)
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        const names = metricsIn(target.expr)
        expect(names.length, panel.title).toBeGreaterThan(0)
        expect(names.filter((n) => !exported.has(n)), `${panel.title}: ${target.expr}`).toEqual([])
      }
    }
  })
})
