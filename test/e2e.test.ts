// End to end over real HTTP: guest token → shorten → redirect → click stored in ClickHouse.
// 1. The embedded default: `bun src/main.ts`, one process, nothing configured.
// 2. The production shape: the API (src/api.ts) and the redirector (redirect/main.ts) as two processes,
//    sharing links through Redis. ClickHouse across processes is chDB served behind a small loopback
//    HTTP endpoint (test/support/chdb-http.ts) — for tests only; production uses a ClickHouse server.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createClient, type ClickHouseClient } from '@clickhouse/client'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnChdbHttp, type ChdbHttpProcess } from './support/chdb-http-process'
import { freePort, startEntry, startOwnRedis, TEST_SECRETS, type Child } from './support/processes'

async function json(response: Response) {
  const text = await response.text()
  try {
    return JSON.parse(text)
  } catch {
    throw new Error(`not JSON (${response.status}): ${text}`)
  }
}

async function shorten(apiUrl: string, url: string) {
  const token = await json(await fetch(`${apiUrl}/api/v1/guest/token`, { method: 'POST' }))
  expect(token.data?.guest_token, JSON.stringify(token)).toStartWith('gt_')
  const created = await fetch(`${apiUrl}/api/v1/shorten`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token.data.guest_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  })
  const body = await json(created)
  expect(created.status, JSON.stringify(body)).toBe(200)
  return body.data as { alias: string; short_url: string; full_url: string }
}

async function clicksOf(client: ClickHouseClient, alias: string): Promise<number> {
  const result = await client.query({ query: 'SELECT count() AS n FROM clicks_v1 WHERE alias = {alias:String}', query_params: { alias }, format: 'JSONEachRow' })
  const [row] = await result.json<{ n: string | number }>()
  return Number(row?.n ?? 0)
}

async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now()
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not true within ${timeoutMs} ms`)
    await Bun.sleep(50)
  }
  return Date.now() - started
}

describe('embedded default: one process, nothing configured', () => {
  test('guest → shorten → redirect → click, drained to ClickHouse on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'e2e-embedded-'))
    const port = await freePort()
    const app = await startEntry('src/main.ts', { PORT: String(port), DATA_DIR: dataDir }, port)
    let alias = ''
    try {
      const link = await shorten(app.url, 'https://example.com/page?x=1')
      alias = link.alias
      expect(link.short_url).toBe(`http://localhost:${port}/${alias}`)
      const redirect = await fetch(`${app.url}/${alias}`, { redirect: 'manual' })
      expect(redirect.status, app.output()).toBe(302)
      expect(redirect.headers.get('location')).toBe('https://example.com/page?x=1')
      expect((await fetch(`${app.url}/${alias}`, { method: 'HEAD', redirect: 'manual' })).status).toBe(302)
      expect((await fetch(`${app.url}/swagger/json`)).status).toBe(200)
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
    }
    // The process drained its batch on SIGTERM: the GET is stored, the HEAD is not.
    const counted = Bun.spawnSync([process.execPath, join(import.meta.dir, 'support/count-clicks.ts'), dataDir, alias])
    expect(counted.stdout.toString().trim(), counted.stderr.toString()).toBe('1')
  }, 120_000)
})

// Two processes share links only through Redis; this half needs a redis-server binary (CI's second
// pass installs it through scripts/services.sh). The test runs its own Redis so it may stop it.
const redisBinary = Bun.which('redis-server')

describe.skipIf(!redisBinary)('API and redirector as two processes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-split-'))
  let redis: Awaited<ReturnType<typeof startOwnRedis>>
  let chdb: ChdbHttpProcess
  let api: Child
  let redirector: Child
  let clickhouse: ClickHouseClient

  beforeAll(async () => {
    redis = await startOwnRedis(dir)
    chdb = await spawnChdbHttp({ path: join(dir, 'chdb') })
    const apiPort = await freePort()
    const redirectPort = await freePort()
    const env = {
      ...TEST_SECRETS,
      REDIS_URL: redis!.url,
      CLICKHOUSE_URL: chdb.url,
      DATA_DIR: join(dir, 'data'), // the API's Postgres is PGlite here unless DATABASE_URL is given
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
      SHORT_DOMAIN: `127.0.0.1:${redirectPort}`,
      CLICK_FLUSH_MS: '200',
    }
    api = await startEntry('src/api.ts', { ...env, PORT: String(apiPort) }, apiPort)
    redirector = await startEntry('redirect/main.ts', { ...env, REDIRECT_PORT: String(redirectPort), API_INTERNAL_URL: api.url }, redirectPort)
    clickhouse = createClient({ url: chdb.url, request_timeout: 5000 })
  }, 90_000)

  afterAll(async () => {
    const timed = async (what: string, step: () => Promise<unknown>) => {
      const started = Date.now()
      await step()
      if (Date.now() - started > 5000) console.warn(`e2e teardown: ${what} took ${Date.now() - started} ms`)
    }
    await timed('clickhouse client', async () => clickhouse?.close())
    await timed('redirector', async () => redirector?.stop())
    await timed('api', async () => api?.stop())
    await timed('chdb', async () => chdb?.stop())
    await redis?.stop()
  }, 60_000)

  test('a link made through the API redirects at the redirector, and its click reaches ClickHouse', async () => {
    const link = await shorten(api.url, 'https://example.com/two?y=2#frag')
    expect(link.short_url).toBe(`${redirector.url}/${link.alias}`)
    const response = await fetch(link.short_url, { redirect: 'manual' })
    expect(response.status, redirector.output()).toBe(302)
    expect(response.headers.get('location')).toBe('https://example.com/two?y=2#frag')
    expect(response.headers.get('cache-control')).toBe('private, max-age=0')
    await fetch(link.short_url, { method: 'HEAD', redirect: 'manual' })
    const waited = await eventually(async () => (await clicksOf(clickhouse, link.alias)) === 1, 5000)
    expect(waited).toBeLessThan(2000)
    await Bun.sleep(300) // one more flush interval: the HEAD must still not be counted
    expect(await clicksOf(clickhouse, link.alias)).toBe(1)
  }, 30_000)

  test('with ClickHouse stopped, clicks wait and are all stored exactly once after it returns', async () => {
    const link = await shorten(api.url, 'https://example.com/outage')
    await chdb.stop()
    const sent = 300
    for (let i = 0; i < sent; i += 30) {
      const batch = Array.from({ length: 30 }, () => fetch(link.short_url, { redirect: 'manual' }))
      for (const response of await Promise.all(batch)) expect(response.status).toBe(302)
    }
    await Bun.sleep(1500) // several failed flushes while it is down
    chdb = await spawnChdbHttp({ path: join(dir, 'chdb'), port: chdb.port })
    await eventually(async () => (await clicksOf(clickhouse, link.alias)) >= sent, 20_000)
    await Bun.sleep(1000)
    expect(await clicksOf(clickhouse, link.alias)).toBe(sent)
  }, 60_000)

  test('with Redis stopped, links keep redirecting and no request hangs', async () => {
    const warm = await shorten(api.url, 'https://example.com/warm')
    const cold = await shorten(api.url, 'https://example.com/cold')
    expect((await fetch(warm.short_url, { redirect: 'manual' })).status).toBe(302)
    await redis!.stop()
    for (const link of [warm, cold, warm, cold]) {
      const started = performance.now()
      const response = await fetch(link.short_url, { redirect: 'manual', signal: AbortSignal.timeout(3000) })
      expect(response.status, redirector.output()).toBe(302)
      expect(response.headers.get('location')).toBe(link.full_url)
      expect(performance.now() - started).toBeLessThan(1500)
    }
  }, 60_000)
})
