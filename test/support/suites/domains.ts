// Shared by the domains tests (src/modules/domains/domains.*.test.ts): an API whose DNS lookups go to a
// real DNS server on loopback (./dns.ts) with TXT records the tests set, every domain and cache
// announcement it published, and the helpers the tests share. Each test file calls setUp in beforeAll and
// tearDown in afterAll; the exported bindings are live, so they hold the running file's API.
import { eq } from 'drizzle-orm'
import { DOMAIN_CHANNEL, INVALIDATION_CHANNEL } from '../../../core/link-cache'
import { domains } from '../../../src/db/schema'
import { startTestDnsServer, type TestDnsServer } from '../dns'
import { call, show, testApi, testConfig, type TestApp } from '../api'
import type { TestAccount } from '../fixtures'

export let dns: TestDnsServer
export let api: Awaited<ReturnType<typeof testApi>>
export let app: TestApp
export const published: { channel: string; message: string }[] = []
const unsubscribe: (() => Promise<void>)[] = []

export async function setUp() {
  dns = await startTestDnsServer()
  api = await testApi({ config: testConfig({ DNS_SERVERS: dns.server, DNS_TIMEOUT_MS: '400' }) })
  app = api.app
  for (const channel of [DOMAIN_CHANNEL, INVALIDATION_CHANNEL]) {
    unsubscribe.push(await api.adapters.kv.subscribe(channel, (message) => published.push({ channel, message })))
  }
}

export async function tearDown() {
  for (const stop of unsubscribe.splice(0)) await stop()
  await dns.close()
}

/** A host name no other test (or earlier run against the same Postgres) has used. */
export const uniqueHost = (label = 'links') => `${label}-${crypto.randomUUID().slice(0, 8)}.example.com`

export async function addDomain(account: TestAccount, hostname: string, target: TestApp = app) {
  const res = await call(target, 'POST', '/api/v1/domains', { token: account.key, body: { hostname } })
  if (res.status !== 201) throw new Error(`add domain: ${show(res)}`)
  return res.body.data as { hostname: string; verification: { type: string; name: string; value: string } }
}

export async function domainRow(hostname: string) {
  const [row] = await api.deps.db.select().from(domains).where(eq(domains.hostname, hostname))
  return row
}
