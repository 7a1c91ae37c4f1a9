// checkLater: links created through the API, checked in the background against both services' stand-ins
// (the system resolver faked), flagged when a check says unsafe (Postgres and the cached record), left
// alone when every check says safe or none answers; the queue's bound drops and counts; nothing runs
// when neither service is configured.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { decodeCachedLink, linkCacheKey } from '../../../core/link-cache'
import { MetricsRegistry } from '../../../core/metrics'
import { call, newGuestToken, show, testApi, testConfig, type TestApp } from '../../../test/support/api'
import { links, reports, type LinkRow } from '../../db/schema'
import type { Services } from '../../services'
import { reputationMetrics } from './metrics'
import { checkLater, configuredChecks, createReputation, reputationOf, type LinkToCheck, type Reputation } from './service'
import type { Resolve } from './service-fetch'
import { startDohStandIn, startWebRiskStandIn, type DohStandIn, type WebRiskStandIn } from '../../../test/support/reputation-stand-ins'
import { webRiskCheck } from './web-risk'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
let services: Services
let reputation: Reputation
let doh: DohStandIn
let webRisk: WebRiskStandIn
let guest: string

/** The system resolver: every name of these tests resolves publicly. */
const systemResolve: Resolve = async () => ['93.184.215.14']

const servicesOf = (made: Awaited<ReturnType<typeof testApi>>) => (made.app as unknown as { decorator: { services: Services } }).decorator.services

beforeAll(async () => {
  doh = startDohStandIn()
  webRisk = startWebRiskStandIn()
  api = await testApi({
    config: testConfig({ SAFE_DNS_URL: doh.url, WEB_RISK_URL: webRisk.url, WEB_RISK_KEY: webRisk.key, REPUTATION_ALLOW_HTTP_LOOPBACK: 'true' }),
  })
  app = api.app
  services = servicesOf(api)
  // Made before the first checkLater, so checkLater uses it: the fake system resolver, a short budget.
  reputation = reputationOf(services, { resolve: systemResolve, timeoutMs: 300 })
  guest = await newGuestToken(app)
}, 120_000)

afterAll(async () => {
  await Promise.all([doh.stop(), webRisk.stop()])
})

/** A destination on a host no other test uses; the stand-in resolver knows its real address. */
function freshUrl(label: string): string {
  const host = `${label}-${crypto.randomUUID().slice(0, 8)}.example`
  doh.set(host, { a: ['93.184.215.14'] })
  return `https://${host}/landing`
}

/** A guest link of `url`, made through the API (which queues its checks), once those checks are done. */
async function shorten(url: string): Promise<{ alias: string; link: LinkToCheck }> {
  const made = await shortenAnswered(url)
  await reputation.idle()
  return made
}

/** The same, as soon as the API answered: its checks may still be queued or running. */
async function shortenAnswered(url: string): Promise<{ alias: string; link: LinkToCheck }> {
  const made = await call(app, 'POST', '/api/v1/shorten', { token: guest, body: { url } })
  if (made.status !== 200) throw new Error(show(made))
  const [row] = await api.deps.db.select().from(links).where(eq(links.alias, made.body.data.alias))
  return { alias: made.body.data.alias, link: { id: row!.id, url, routingUrls: [] } }
}

const rowOf = async (id: string): Promise<LinkRow> => (await api.deps.db.select().from(links).where(eq(links.id, id)))[0]!
const cached = async (alias: string) => decodeCachedLink((await api.adapters.kv.get(linkCacheKey('sho.rt', alias))) ?? '')

/**
 * The link's row once it is flagged (fails after 10 s of polling), and once the checks are done: the
 * row is committed before its record is written through to the cache.
 */
async function flagged(id: string): Promise<LinkRow> {
  for (let i = 0; i < 200; i++) {
    const row = await rowOf(id)
    if (row.state === 'flagged') {
      await reputation.idle()
      return row
    }
    await Bun.sleep(50)
  }
  throw new Error(`link ${id} was not flagged: ${JSON.stringify(await rowOf(id))}`)
}

describe('checkLater on links created through the API', () => {
  test('creating a link queues its checks: the API answers while they wait; Web Risk listing it flags it (Postgres, reason, cached record)', async () => {
    const url = freshUrl('phish')
    webRisk.list(url, ['SOCIAL_ENGINEERING'])
    const held = webRisk.hold(url)
    const { alias, link } = await shortenAnswered(url)
    // The lookup reached the stand-in, which holds it: the answer above came before the check's.
    await held.arrived
    expect((await rowOf(link.id)).state, 'the request itself flags nothing').toBe('ok')
    held.release()
    const row = await flagged(link.id)
    expect(row.stateReason).toBe(`reputation check web_risk: Web Risk lists it as SOCIAL_ENGINEERING (its destination ${url})`)
    expect(await cached(alias)).toMatchObject({ v: 3, st: 'flagged' })
    const filed = await api.deps.db.select().from(reports).where(eq(reports.linkId, link.id))
    expect(filed, 'the flagged link waits in the reports queue').toMatchObject([{ status: 'open', reason: 'phishing', reporterHash: 'check:web_risk', details: row.stateReason }])
  })

  test("the filtering resolver's block flags the link too", async () => {
    const host = `malware-${crypto.randomUUID().slice(0, 8)}.example`
    doh.set(host, { a: ['0.0.0.0'] })
    const { alias, link } = await shorten(`https://${host}/payload`)
    const row = await flagged(link.id)
    expect(row.stateReason).toContain(`reputation check safe_dns: the filtering resolver answers 0.0.0.0 for ${host}`)
    expect(await cached(alias)).toMatchObject({ st: 'flagged' })
  })

  test('a safe destination stays ok: checked first, and a later unsafe link is flagged', async () => {
    const safe = await shorten(freshUrl('fine'))
    const unsafeUrl = freshUrl('bad')
    webRisk.list(unsafeUrl, ['MALWARE'])
    const bad = await shorten(unsafeUrl)
    await flagged(bad.link.id)
    await reputation.idle()
    expect(
      webRisk.lookups.some((lookup) => lookup.uri === safe.link.url),
      'the safe destination was looked up',
    ).toBe(true)
    expect(
      doh.questions.some((question) => safe.link.url.includes(question.name)),
      'and its host asked about',
    ).toBe(true)
    expect((await rowOf(safe.link.id)).state).toBe('ok')
    expect(await cached(safe.alias)).not.toHaveProperty('st')
  })

  test('a routing destination found unsafe flags the link; the reason says which destination', async () => {
    const { link } = await shorten(freshUrl('routed'))
    const variant = freshUrl('variant')
    webRisk.list(variant, ['MALWARE'])
    checkLater(services, [{ ...link, routingUrls: [freshUrl('rule'), variant] }])
    const row = await flagged(link.id)
    expect(row.stateReason).toBe(`reputation check web_risk: Web Risk lists it as MALWARE (a routing destination ${variant})`)
  })

  test('no answer never flags: a 500 and a timeout leave the link ok and are counted as failures', async () => {
    const url = freshUrl('flaky')
    webRisk.list(url, ['MALWARE'])
    webRisk.fail(url, 'http500')
    doh.fail(new URL(url).hostname, 'hang')
    const { link } = await shorten(url)
    const before = structuredClone(reputation.counters.byCheck)
    checkLater(services, [link])
    await reputation.idle()
    expect(reputation.counters.byCheck.web_risk!.failures).toBe(before.web_risk!.failures + 1)
    expect(reputation.counters.byCheck.safe_dns!.failures).toBe(before.safe_dns!.failures + 1)
    expect(reputation.counters.byCheck.web_risk!.checks).toBe(before.web_risk!.checks + 1)
    expect((await rowOf(link.id)).state).toBe('ok')
  })

  test('an unsafe destination of a link an operator already disabled leaves it disabled', async () => {
    const url = freshUrl('disabled')
    webRisk.list(url, ['MALWARE'])
    const { link } = await shorten(url)
    await api.deps.db.update(links).set({ state: 'disabled', stateReason: 'operator' }).where(eq(links.id, link.id))
    const unsafeBefore = reputation.counters.byCheck.web_risk!.unsafe
    checkLater(services, [link])
    await reputation.idle()
    expect(reputation.counters.byCheck.web_risk!.unsafe, 'the check did find it unsafe').toBe(unsafeBefore + 1)
    expect(await rowOf(link.id)).toMatchObject({ state: 'disabled', stateReason: 'operator' })
  })
})

describe('the queue', () => {
  test('past its bound links are dropped and counted, never checked', async () => {
    const bounded = createReputation(services, { checks: [webRiskCheck({ url: webRisk.url, key: webRisk.key, allowHttpLoopback: true })], concurrency: 1, maxQueued: 2 })
    const [first, ...rest] = Array.from({ length: 5 }, (_, i) => ({ id: `link_queue${i}`, url: freshUrl(`queued${i}`), routingUrls: [] }))
    const held = webRisk.hold(first!.url)
    bounded.checkLater([first!])
    await held.arrived
    bounded.checkLater(rest)
    expect(bounded.counters.dropped).toBe(2)
    expect(bounded.pending()).toBe(3)
    held.release()
    await bounded.idle()
    const looked = new Set(webRisk.lookups.map((lookup) => lookup.uri))
    expect([first!, ...rest].map((link) => looked.has(link.url))).toEqual([true, true, true, false, false])
    expect(bounded.counters.byCheck.web_risk).toEqual({ checks: 3, unsafe: 0, failures: 0 })
  })

  test('its counters are on /metrics under the names the lead wires', () => {
    const registry = new MetricsRegistry()
    reputationMetrics(registry, () => reputation)
    const text = registry.render()
    const checks = reputation.counters.byCheck.web_risk!.checks
    expect(checks).toBeGreaterThan(0)
    expect(text).toContain(`linkservice_reputation_checks_total{check="web_risk"} ${checks}`)
    expect(text).toContain(`linkservice_reputation_unsafe_total{check="safe_dns"} ${reputation.counters.byCheck.safe_dns!.unsafe}`)
    expect(text).toContain(`linkservice_reputation_failures_total{check="web_risk"} ${reputation.counters.byCheck.web_risk!.failures}`)
    expect(text).toContain(`linkservice_reputation_dropped_total ${reputation.counters.dropped}`)
    expect(text).toContain('linkservice_reputation_pending 0')
  })
})

describe('configuration', () => {
  test('each service is on only when configured: the Web Risk key turns its lookup on, SAFE_DNS_URL the resolver', () => {
    const names = (env: Record<string, string>) => configuredChecks(testConfig(env)).map((check) => check.name)
    expect(names({})).toEqual([])
    expect(names({ WEB_RISK_KEY: 'k' })).toEqual(['web_risk'])
    expect(names({ SAFE_DNS_URL: 'https://security.resolver.example/dns-query' })).toEqual(['safe_dns'])
    expect(names({ SAFE_DNS_URL: 'https://security.resolver.example/dns-query', WEB_RISK_KEY: 'k' })).toEqual(['safe_dns', 'web_risk'])
  })

  test('nothing runs when neither service is configured', async () => {
    const plain = await testApi()
    const plainServices = servicesOf(plain)
    const { link } = await shorten(freshUrl('unchecked'))
    webRisk.list(link.url, ['MALWARE'])
    checkLater(plainServices, [link])
    const idle = reputationOf(plainServices)
    expect(idle.enabled).toBe(false)
    expect(idle.pending()).toBe(0)
    expect(idle.counters).toEqual({ byCheck: {}, dropped: 0 })
    expect((await rowOf(link.id)).state).toBe('ok')
  })
})
