// Custom domains end to end, over real HTTP between real processes: the API (src/api.ts) and the
// redirector (redirect/main.ts) sharing a Redis of the test's own, ClickHouse as chDB behind its HTTP
// shim, and a real DNS server on loopback (dns2) that the API asks for the verification TXT record.
// add a domain → set its TXT record → verify → the redirector serves the domain's links by Host; an
// unknown host is 404; removing the domain takes its links down.
//
// Postgres is the run's DATABASE_URL, or else PGlite under the API's DATA_DIR. PGlite belongs to one
// process at a time, so everything the test writes straight to the database (an account, its API key,
// the link on the custom domain) is written before the API starts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../src/db/client'
import { links } from '../src/db/schema'
import { startTestDnsServer, type TestDnsServer } from './support/dns'
import { newAccount, newLink, type TestAccount } from './support/fixtures'
import { freePort, startEntry } from './support/processes'
import { apiCall, clicksOf, eventually, redisServerBinary, startStack, type Stack } from './support/stack'
import { ANSWER_DEADLINE_MS } from './support/wait'
import { scrapeMetrics } from './support/metrics'

describe('custom domains in the embedded default (one process, nothing configured but DNS_SERVERS)', () => {
  test('a verified domain serves its links, and on it every path is a short link, /api and /health included', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'e2e-domains-embedded-'))
    const host = `embedded-${crypto.randomUUID().slice(0, 8)}.example.com`
    const database = await openDatabase({ databaseUrl: undefined, dataDir })
    await database.migrate()
    const account = await newAccount(database.db)
    const link = await newLink(database.db, account.id, host, 'health', 'https://example.com/on-custom-domain')
    await database.close()

    const dns = await startTestDnsServer()
    const port = await freePort()
    const app = await startEntry('one-process/main.ts', { PORT: String(port), DATA_DIR: dataDir, DNS_SERVERS: dns.server }, port)
    try {
      const auth = { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }
      const added = await fetch(`${app.url}/api/v1/domains`, { method: 'POST', headers: auth, body: JSON.stringify({ hostname: host }) })
      const body = (await added.json()) as { data: { verification: { name: string; value: string } } }
      expect(added.status, JSON.stringify(body)).toBe(201)
      dns.setTxt(body.data.verification.name, [body.data.verification.value])
      const verified = await fetch(`${app.url}/api/v1/domains/${host}/verify`, { method: 'POST', headers: auth })
      expect(verified.status, await verified.text()).toBe(200)

      const onHost = (path: string) => fetch(`${app.url}${path}`, { headers: { host }, redirect: 'manual' })
      const { value: served } = await eventually(
        () => onHost('/health'),
        (r) => r.status === 302,
        ANSWER_DEADLINE_MS,
        { what: 'alias "health" on the custom domain' },
      )
      expect(served.headers.get('location')).toBe(link.url)
      expect((await onHost('/api/v1/domains')).status, 'the API does not answer on a custom domain').toBe(404)
      expect((await fetch(`${app.url}/health`)).status, "the service's own /health is untouched").toBe(200)
      expect((await fetch(`${app.url}/health`, { headers: { host: 'unknown.example.org' } })).status).toBe(200)
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
      await dns.close()
    }
  }, 60_000)
})

describe.skipIf(!redisServerBinary)('custom domains across the API and the redirector', () => {
  const host = `go-${crypto.randomUUID().slice(0, 8)}.example.com`
  let dns: TestDnsServer
  let stack: Stack
  let account: TestAccount
  let link: { id: string; alias: string; url: string }

  beforeAll(async () => {
    dns = await startTestDnsServer()
    stack = await startStack({
      prefix: 'e2e-domains-',
      prepare: async (where) => {
        const database = await openDatabase(where)
        await database.migrate()
        account = await newAccount(database.db)
        // One character: custom domains allow aliases of 1-64 (4-64 on the default domain).
        link = await newLink(database.db, account.id, host, 'z', 'https://example.com/custom-landing?c=1')
        await database.close()
      },
      apiEnv: { DNS_SERVERS: dns.server, DNS_TIMEOUT_MS: '2000' },
    })
  }, 90_000)

  afterAll(async () => {
    await stack?.stop()
    await dns?.close()
  }, 60_000)

  const call = (method: string, path: string, body?: unknown) => apiCall(stack.api.url, account.key, method, path, body)

  /** GET /<alias> at the redirector as a browser on `hostHeader` would send it. */
  const visit = (alias: string, hostHeader: string) =>
    fetch(`${stack.redirector.url}/${alias}`, { headers: { host: hostHeader }, redirect: 'manual' }).then(async (r) => ({
      status: r.status,
      location: r.headers.get('location'),
      body: await r.text(),
    }))

  test('add → TXT record → verify → the link answers on its host; unknown hosts are 404; removal takes it down', async () => {
    const added = await call('POST', '/api/v1/domains', { hostname: host })
    expect(added.status, added.text).toBe(201)
    const record = added.body.data.verification as { name: string; value: string }
    expect(record.name).toBe(`_linkservice.${host}`)

    // Not verified yet: the redirector does not serve the host.
    expect((await visit(link.alias, host)).status, stack.redirector.output()).toBe(404)
    const early = await call('POST', `/api/v1/domains/${host}/verify`)
    expect(early.status, early.text).toBe(400)
    expect(early.body.error, early.text).toBe('DOMAIN_NOT_VERIFIED')
    expect(early.body.hint, early.text).toContain(record.value)

    dns.setTxt(record.name, [record.value])
    const verified = await call('POST', `/api/v1/domains/${host}/verify`)
    expect(verified.status, `${verified.text}\n${stack.api.output()}`).toBe(200)
    expect(verified.body.data.verified, verified.text).toBe(true)
    expect(dns.questions, 'the API asked the DNS server').toContain(record.name)

    const { value: served } = await eventually(
      () => visit(link.alias, host),
      (r) => r.status === 302,
      ANSWER_DEADLINE_MS,
      { what: 'custom domain served' },
    )
    expect(served.location).toBe(link.url)
    // The Host header as browsers may send it: another case, a port, a trailing dot.
    expect((await visit(link.alias, `${host.toUpperCase()}:80`)).location).toBe(link.url)
    expect((await visit(link.alias, `${host}.`)).location).toBe(link.url)

    // The click is stored under the custom domain.
    await eventually(
      () => clicksOf(stack.clickhouse, link.alias, host),
      (n) => n >= 1,
      20_000,
      { what: 'click on the custom domain in ClickHouse' },
    )

    // Unknown hosts and the alias on the default domain: 404, cheaply and without side effects.
    for (const other of ['unknown.example.net', `www.${host}`, 'evil.example.com:8080']) {
      expect((await visit(link.alias, other)).status, other).toBe(404)
    }
    expect((await visit(link.alias, new URL(stack.redirector.url).host)).status, 'the alias does not exist on the default domain').toBe(404)
    expect((await scrapeMetrics(stack.redirector.url)).get('linkservice_custom_domains')).toBeGreaterThanOrEqual(1)

    const removed = await call('DELETE', `/api/v1/domains/${host}`)
    expect(removed.status, removed.text).toBe(200)
    expect(removed.body.data.links_deleted, removed.text).toBe(1)
    await eventually(
      () => visit(link.alias, host),
      (r) => r.status === 404,
      ANSWER_DEADLINE_MS,
      { what: 'removed domain no longer served' },
    )
    if (stack.databaseUrl) {
      const database = await openDatabase({ databaseUrl: stack.databaseUrl, dataDir: stack.dataDir })
      expect(await database.db.select().from(links).where(eq(links.id, link.id))).toEqual([])
      await database.close()
    }
  }, 60_000)
})
