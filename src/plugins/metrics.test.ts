// The API's /metrics in one app: the figures move as the calls made say they should. Idempotency
// replays, Agent calls by outcome (counted at the audit, so REST and MCP alike), the token endpoint's
// refusals, errors by code; a route's series is its pattern, never the path (an alias in a path cannot
// mint series).
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, testApi, testConfig, type TestApp } from '../../test/support/api'
import { agentToken, newAccount, newLink } from '../../test/support/fixtures'
import { parseMetrics } from '../../test/support/metrics'
import { until } from '../../test/support/wait'

const TOKEN = 'api-metrics-test-token-0123456789abcdef'
let app: TestApp
let api: Awaited<ReturnType<typeof testApi>>

beforeAll(async () => {
  api = await testApi({ config: testConfig({ METRICS_TOKEN: TOKEN }) })
  app = api.app
})

async function scrape(): Promise<Map<string, number>> {
  const res = await call(app, 'GET', '/metrics', { token: TOKEN })
  expect(res.status, res.text.slice(0, 200)).toBe(200)
  return parseMetrics(res.text)
}

const delta = (after: Map<string, number>, before: Map<string, number>, key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0)

describe('the API /metrics', () => {
  test('replays, Agent outcomes, token refusals and errors move by what was done; routes by pattern', async () => {
    const human = await newAccount(api.deps.db, 'pro')
    const before = await scrape()

    const key = crypto.randomUUID()
    for (let i = 0; i < 2; i++) {
      const res = await call(app, 'POST', '/api/v1/shorten', { token: human.key, headers: { 'idempotency-key': key }, body: { url: 'https://example.com/replayed' } })
      expect(res.status, show(res)).toBe(200)
    }
    const { token } = await agentToken(app, human, ['links:read', 'links:delete'])
    const link = await newLink(api.deps.db, human.id, 'sho.rt')
    expect((await call(app, 'DELETE', `/api/v1/links/${link.alias}`, { token })).status).toBe(202)
    expect((await call(app, 'GET', `/api/v1/links/${link.alias}`, { token })).status).toBe(200)
    expect((await call(app, 'POST', '/api/v1/shorten', { token, body: { url: 'https://example.com/x' } })).status).toBe(403)
    const refused = await call(app, 'POST', '/oauth/token', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=nope&client_id=nobody' })
    expect(refused.status, show(refused)).toBe(401)
    for (const alias of ['aaaa1', 'bbbb2', 'cccc3']) expect((await call(app, 'GET', `/api/v1/links/${alias}`, { token: human.key })).status).toBe(404)

    // A request is observed once its answer is out (onAfterResponse), a moment after app.handle() returns,
    // in the order the answers went out: the last 404 observed, every request before it is.
    const last404 = 'linkservice_http_request_duration_seconds_count{method="GET",route="/api/v1/links/:alias",status="404"}'
    let after = await scrape()
    await until(
      async () => delta((after = await scrape()), before, last404) >= 3,
      () => `the third 404 observed: ${[...after].filter(([k]) => k.includes('status="404"')).join(' ')}`,
    )
    expect(delta(after, before, 'linkservice_idempotency_replays_total')).toBe(1)
    expect(delta(after, before, 'linkservice_agent_calls_total{outcome="held",via="rest"}')).toBe(1)
    expect(delta(after, before, 'linkservice_agent_calls_total{outcome="ok",via="rest"}')).toBe(1)
    expect(delta(after, before, 'linkservice_agent_calls_total{outcome="refused",via="rest"}')).toBe(1)
    expect(delta(after, before, 'linkservice_oauth_tokens_total{outcome="refused"}')).toBe(1)
    expect(
      delta(after, before, 'linkservice_http_errors_total{code="LINK_NOT_FOUND"}'),
      `${[...after].filter(([k]) => k.includes('errors_total')).join(' ')} / ${[...before].filter(([k]) => k.includes('errors_total')).join(' ')}`,
    ).toBe(3)
    // Three aliases, one series: the route pattern.
    expect(delta(after, before, 'linkservice_http_request_duration_seconds_count{method="GET",route="/api/v1/links/:alias",status="404"}')).toBe(3)
    expect([...after.keys()].some((k) => k.includes('aaaa1'))).toBe(false)
  })

  test('without the token: 401, and nothing of the figures', async () => {
    for (const token of [undefined, 'mk_not_the_metrics_token_at_all_0123456789']) {
      const res = await call(app, 'GET', '/metrics', { token })
      expect(res.status, show(res)).toBe(401)
      expect(res.text).not.toContain('linkservice_')
    }
  })
})
