// The alert rules and the Grafana dashboard name only metrics the processes export: every metric name in
// their PromQL expressions is a family (or a histogram's _bucket/_sum/_count) of a real scrape of the
// embedded default, which renders both the API's and the redirector's families.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseConfig } from '../core/config'
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from '../core/shutdown'
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
  product = await startEntry('one-process/main.ts', { PORT: String(port), DATA_DIR: join(mkdtempSync(join(tmpdir(), 'deploy-')), 'data'), METRICS_TOKEN: METRICS_TEST_TOKEN }, port)
  const response = await fetch(`${product.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TEST_TOKEN}` } })
  exported = familiesOf(await response.text())
}, 120_000)

afterAll(async () => {
  await product?.stop()
})

describe('deploy/', () => {
  test('prometheus/alerts.yml: every rule has a name, an expression of exported metrics and a summary', () => {
    const rules = Bun.YAML.parse(readFileSync(join(import.meta.dir, 'prometheus/alerts.yml'), 'utf8')) as {
      groups: { name: string; rules: { alert: string; expr: string; annotations: { summary: string } }[] }[]
    }
    const all = rules.groups.flatMap((g) => g.rules)
    expect(all.length).toBeGreaterThan(5)
    for (const rule of all) {
      expect(rule.alert, JSON.stringify(rule)).toMatch(/^LinkService[A-Za-z]+$/)
      expect(rule.annotations.summary.length, rule.alert).toBeGreaterThan(0)
      const names = metricsIn(rule.expr)
      expect(names.length, rule.alert).toBeGreaterThan(0)
      expect(
        names.filter((n) => !exported.has(n)),
        `${rule.alert}: ${rule.expr}`,
      ).toEqual([])
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
        expect(
          names.filter((n) => !exported.has(n)),
          `${panel.title}: ${target.expr}`,
        ).toEqual([])
      }
    }
  })

  test("kubernetes/linkservice.yaml: each workload's environment parses as the service's configuration; probes, ports and grace period fit", () => {
    type Doc = { kind: string; metadata: { name: string }; data?: Record<string, string>; stringData?: Record<string, string>; spec?: any }
    const docs = Bun.YAML.parse(readFileSync(join(import.meta.dir, 'kubernetes/linkservice.yaml'), 'utf8')) as Doc[]
    const byKind = (kind: string) => docs.filter((d) => d.kind === kind)
    const shared = { ...byKind('Secret')[0]!.stringData, ...byKind('ConfigMap')[0]!.data }
    const workloads = byKind('StatefulSet')
    expect(workloads.map((w) => w.metadata.name).sort()).toEqual(['linkservice-api', 'linkservice-redirect'])
    for (const workload of workloads) {
      const pod = workload.spec.template.spec
      const [container] = pod.containers
      const env: Record<string, string> = { ...shared, ...Object.fromEntries(container.env.map((e: { name: string; value: string }) => [e.name, e.value])) }
      const config = parseConfig(env)
      expect(config.host, workload.metadata.name).toBe('0.0.0.0')
      expect(config.metricsToken, workload.metadata.name).toBeDefined()
      const port = workload.metadata.name === 'linkservice-api' ? config.port : config.redirectPort
      expect(container.ports[0].containerPort, workload.metadata.name).toBe(port)
      expect(container.livenessProbe.httpGet.path).toBe('/health')
      expect(container.readinessProbe.httpGet.path).toBe('/ready')
      // The drain's bound ends before Kubernetes' SIGKILL.
      expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(DEFAULT_SHUTDOWN_TIMEOUT_MS)
      // The spool lives on the pod's own volume, at DATA_DIR.
      expect(container.volumeMounts[0].mountPath).toBe(config.dataDir)
      expect(workload.spec.volumeClaimTemplates[0].metadata.name).toBe(container.volumeMounts[0].name)
    }
    const hpa = byKind('HorizontalPodAutoscaler')[0]!
    expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'StatefulSet', name: 'linkservice-redirect' })
    expect(hpa.spec.metrics[0].resource.name).toBe('cpu')
  })
})
