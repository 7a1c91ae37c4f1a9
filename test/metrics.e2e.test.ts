// /metrics and /ready of both processes, scraped as Prometheus would while a load is driven: N redirects
// are N clicks in the redirector's counter and N observations in its latency histogram; a ClickHouse
// outage makes the click queue rise, and it falls to 0 once ClickHouse is back; the API's request
// histogram and error counter move with the calls made. Without the token nothing is shown.
import { describe, expect, test } from 'bun:test'
import { clickFigures, scrapeMetrics } from './support/metrics'
import { eventually, redisServerBinary, shorten, startStack } from './support/stack'

const N = 40

/** N GET redirects of the short URL, each answered with its 302 before the next. */
async function redirects(shortUrl: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const response = await fetch(shortUrl, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' } })
    if (response.status !== 302) throw new Error(`redirect ${i}: ${response.status}`)
  }
}

// The stack needs a redis-server binary (startStack runs its own); .ci/run installs it, so both passes run
// this. Skipped only on a machine without one.
describe.skipIf(!redisServerBinary)('metrics and readiness of the two processes', () => {
  test('N redirects move the counters by N; an outage raises the click queue, which falls to 0 after it; the API counts its requests and errors', async () => {
    const stack = await startStack({ prefix: 'metrics-' })
    try {
      // Without the token, or with another, nothing is shown.
      for (const url of [stack.api.url, stack.redirector.url]) {
        const bare = await fetch(`${url}/metrics`)
        expect(bare.status, url).toBe(401)
        expect(await bare.text(), url).not.toContain('linkservice_')
        const wrong = await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer e2e-metrics-token-0123456789abcdefghijkX' } })
        expect(wrong.status, url).toBe(401)
      }

      const link = await shorten(stack.api.url, 'https://example.com/metrics')
      await redirects(link.short_url, 1) // the link reaches the L1
      const before = await scrapeMetrics(stack.redirector.url)
      const clicksBefore = await clickFigures(stack.redirector.url)
      await redirects(link.short_url, N)
      const after = await scrapeMetrics(stack.redirector.url)
      const clicksAfter = await clickFigures(stack.redirector.url)
      expect(clicksAfter.pushed - clicksBefore.pushed, 'clicks recorded').toBe(N)
      expect(clicksAfter.dropped).toBe(0)
      // The scrape between the two readings is observed too.
      const observed = after.get('linkservice_redirect_duration_seconds_count')! - before.get('linkservice_redirect_duration_seconds_count')!
      expect(observed, 'latency observations').toBeGreaterThanOrEqual(N)
      expect(observed).toBeLessThanOrEqual(N + 2)
      expect(after.get('linkservice_redirect_lookups_total{layer="l1"}')! - before.get('linkservice_redirect_lookups_total{layer="l1"}')!).toBe(N)
      await eventually(
        () => clickFigures(stack.redirector.url),
        (c) => c.written >= clicksAfter.pushed && c.pendingRows === 0,
        20_000,
        { what: 'every click written' },
      )

      // ClickHouse away: the clicks wait in the log, the queue rises; back: it falls to 0.
      await stack.chdb.stop()
      await redirects(link.short_url, N)
      const { value: during } = await eventually(
        () => clickFigures(stack.redirector.url),
        (c) => c.pendingRows >= N,
        20_000,
        { what: "the queue holding the outage's clicks" },
      )
      expect(during.written).toBe(clicksAfter.pushed)
      const readyDuring = await fetch(`${stack.redirector.url}/ready`)
      const readyBody = (await readyDuring.json()) as { checks: Record<string, { status: string }> }
      expect(readyDuring.status, 'a ClickHouse outage alone leaves the redirector ready: its clicks wait').toBe(200)
      expect(readyBody.checks.clickhouse?.status).toBe('failing')
      await stack.restartChdb()
      const { value: settled } = await eventually(
        () => clickFigures(stack.redirector.url),
        (c) => c.pendingRows === 0 && c.spooledFiles === 0,
        30_000,
        { what: 'the queue back at 0' },
      )
      expect(settled.written).toBe(settled.pushed)
      expect(settled.failedAttempts).toBeGreaterThan(0)

      // The API: its request histogram by route, its errors by code.
      const api = await scrapeMetrics(stack.api.url)
      const shortens = [...api].filter(([k]) => k.startsWith('linkservice_http_request_duration_seconds_count{') && k.includes('route="/api/v1/shorten"') && k.includes('status="200"'))
      expect(shortens.length, [...api.keys()].filter((k) => k.includes('count{')).join('\n')).toBe(1)
      expect(shortens[0]![1]).toBeGreaterThanOrEqual(1)
      const unauthorizedBefore = api.get('linkservice_http_errors_total{code="UNAUTHORIZED"}') ?? 0
      expect((await fetch(`${stack.api.url}/api/v1/links`, { headers: { authorization: 'Bearer mk_nothing_like_a_key' } })).status).toBe(401)
      expect((await scrapeMetrics(stack.api.url)).get('linkservice_http_errors_total{code="UNAUTHORIZED"}')).toBe(unauthorizedBefore + 1)

      // Readiness of the API: its dependencies answer.
      const ready = await fetch(`${stack.api.url}/ready`)
      expect(ready.status, await ready.clone().text()).toBe(200)
    } finally {
      await stack.stop()
    }
  }, 120_000)
})
