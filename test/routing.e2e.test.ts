// Routing end to end over real HTTP: the API (src/api.ts) and the redirector (redirect/main.ts) as two
// processes sharing a Redis of the test's own, ClickHouse as chDB behind its HTTP shim. A routed link
// made through the API sends an iPhone, a German visitor and a desktop where its rules and test say; each
// click reaches ClickHouse with its route; a changed routing reaches a redirector that holds the link in
// its L1 by invalidation (the promise is a second; the deadline is generous for a loaded machine).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openDatabase } from '../src/db/client'
import { newAccount, type TestAccount } from './support/fixtures'
import { apiCall as api, eventually, redisServerBinary, startStack, type Stack } from './support/stack'

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'
const DESKTOP = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
const PROPAGATION_DEADLINE_MS = 10_000
const manual = { redirect: 'manual' } as const

/** The destination without the Pro attribution parameters. */
const destination = (location: string | null) => location?.replace(/[?&]mu_click=[^&#]*&mu_sig=[^&#]*/, '') ?? null

describe.skipIf(!redisServerBinary)('routing across the API and the redirector', () => {
  let stack: Stack
  let account: TestAccount

  beforeAll(async () => {
    stack = await startStack({
      prefix: 'e2e-routing-',
      prepare: async (where) => {
        const database = await openDatabase(where)
        await database.migrate()
        account = await newAccount(database.db, 'pro')
        await database.close()
      },
      // The country comes from a trusted CDN header; the L1 lives long, so only invalidation explains a change.
      env: { TRUSTED_COUNTRY_HEADER: 'cf-ipcountry', L1_TTL_MS: '60000' },
    })
  }, 90_000)

  afterAll(async () => {
    await stack?.stop()
  }, 60_000)

  test('each visitor routed as the rules and the test say; each click stored with its route', async () => {
    const alias = `rt-${crypto.randomUUID().slice(0, 10)}`
    const made = await api(stack.api.url, account.key, 'POST', '/api/v1/shorten', {
      url: 'https://example.com/home',
      alias,
      routing: {
        rules: [
          { id: 'ios', url: 'https://apps.example/ios', when: { device: ['ios'] } },
          { id: 'de', url: 'https://example.com/de', when: { country: ['DE'] } },
        ],
        ab: {
          variants: [
            { id: 'a', url: 'https://example.com/a', weight: 50 },
            { id: 'b', url: 'https://example.com/b', weight: 50 },
          ],
        },
      },
    })
    expect(made.status, made.text).toBe(200)
    const shortUrl = made.body.data.short_url as string
    const visit = async (headers: Record<string, string>) => destination((await fetch(shortUrl, { ...manual, headers })).headers.get('location'))
    expect(await visit({ 'user-agent': IPHONE })).toBe('https://apps.example/ios')
    expect(await visit({ 'user-agent': DESKTOP, 'cf-ipcountry': 'DE' })).toBe('https://example.com/de')
    const variant = await visit({ 'user-agent': DESKTOP })
    expect(['https://example.com/a', 'https://example.com/b']).toContain(variant!)
    // HEAD is routed, not counted.
    expect(destination((await fetch(shortUrl, { ...manual, method: 'HEAD', headers: { 'user-agent': IPHONE } })).headers.get('location'))).toBe('https://apps.example/ios')

    const routes = async () => {
      const result = await stack.clickhouse.query({ query: 'SELECT route FROM clicks_v1 WHERE alias = {alias:String} ORDER BY timestamp, route', query_params: { alias }, format: 'JSONEachRow' })
      return (await result.json<{ route: string }>()).map((r) => r.route).sort()
    }
    const stored = await eventually(routes, (r) => r.length >= 3, PROPAGATION_DEADLINE_MS, { what: 'three clicks in ClickHouse' })
    expect(stored.value).toEqual(['rule:de', 'rule:ios', variant!.endsWith('/a') ? 'ab:a' : 'ab:b'].sort())
  }, 60_000)

  test('a changed routing reaches a redirector holding the link, by invalidation; removing it too', async () => {
    const alias = `rt-${crypto.randomUUID().slice(0, 10)}`
    const made = await api(stack.api.url, account.key, 'POST', '/api/v1/shorten', { url: 'https://example.com/home', alias })
    const shortUrl = made.body.data.short_url as string
    const iphone = async () => destination((await fetch(shortUrl, { ...manual, headers: { 'user-agent': IPHONE } })).headers.get('location'))
    // Warm the redirector's L1.
    for (let i = 0; i < 3; i++) expect(await iphone()).toBe('https://example.com/home')
    let started = performance.now()
    const put = await api(stack.api.url, account.key, 'PUT', `/api/v1/links/${alias}/routing`, { rules: [{ url: 'https://apps.example/ios', when: { device: ['ios'] } }] })
    expect(put.status, put.text).toBe(200)
    await eventually(iphone, (l) => l === 'https://apps.example/ios', PROPAGATION_DEADLINE_MS, { everyMs: 5, what: 'the routing at the redirector' })
    const routedMs = performance.now() - started
    started = performance.now()
    const removed = await api(stack.api.url, account.key, 'DELETE', `/api/v1/links/${alias}/routing`)
    expect(removed.status, removed.text).toBe(200)
    await eventually(iphone, (l) => l === 'https://example.com/home', PROPAGATION_DEADLINE_MS, { everyMs: 5, what: 'the routing gone at the redirector' })
    console.log(`routing seen by the redirector after: set ${routedMs.toFixed(0)} ms, removed ${(performance.now() - started).toFixed(0)} ms`)
  }, 60_000)
})
