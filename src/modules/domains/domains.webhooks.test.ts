// The domain events, each committed with its change: domain.verified when a verify succeeds (once),
// domain.unverified when the daily re-check unverifies a domain whose record stayed missing, and
// link.deleted for every link a removed domain takes with it. A DNS server on loopback, a clock the test
// moves, and a PGlite of this file's own (the re-check takes every due domain of its database).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase, type Database } from '../../db/client'
import { links } from '../../db/schema'
import { createTxtResolver } from '../../dns/resolver'
import { newId } from '../../lib/ids'
import { outboxMailer } from '../../mail/mailer'
import { createServices, type Services } from '../../services'
import { call, show, testApi, testConfig, type TestApp } from '../../../test/support/api'
import { startTestDnsServer, type TestDnsServer } from '../../../test/support/dns'
import { newAccount, type TestAccount } from '../../../test/support/fixtures'
import { eventsOf, subscribe } from '../webhooks/events-kit.test'
import { subscribers, writeEvents } from '../webhooks/outbox'
import { recheckDomains, RECHECK_EVERY_MS, UNVERIFY_AFTER_MS } from './recheck'

let database: Database
let dns: TestDnsServer
let app: TestApp
let services: Services
let clock = Date.now()
const mailer = outboxMailer(join(mkdtempSync(join(tmpdir(), 'domain-events-')), 'outbox.log'), 'Link service <no-reply@sho.rt>', () => {})

beforeAll(async () => {
  database = await openDatabase({ databaseUrl: undefined, dataDir: ':memory:' })
  await database.migrate()
  dns = await startTestDnsServer()
  const api = await testApi({ db: database.db, now: () => clock, config: testConfig({ DNS_SERVERS: dns.server, DNS_TIMEOUT_MS: '400' }) })
  app = api.app
  // The re-check runs beside the API with its own services; the outbox is wired as createApi wires it.
  services = { ...createServices({ ...api.deps, now: () => clock }), webhookOutbox: { subscribers, write: writeEvents } }
}, 60_000)

afterAll(async () => {
  await dns?.close()
  await database?.close()
})

/** An account subscribed to `events` with a domain added, its TXT record in DNS. */
async function withDomain(events: string[]): Promise<{ account: TestAccount; hostname: string; record: { name: string; value: string } }> {
  const account = await newAccount(database.db)
  await subscribe(app, account.key, events)
  const hostname = `ev-${crypto.randomUUID().slice(0, 8)}.example.com`
  const added = await call(app, 'POST', '/api/v1/domains', { token: account.key, body: { hostname } })
  if (added.status !== 201) throw new Error(show(added))
  const record = added.body.data.verification
  dns.setTxt(record.name, [record.value])
  return { account, hostname, record }
}

const verify = (account: TestAccount, hostname: string) => call(app, 'POST', `/api/v1/domains/${hostname}/verify`, { token: account.key })

describe('domain events', () => {
  test('domain.verified: once, with the domain as the API returns it', async () => {
    const { account, hostname } = await withDomain(['domain.verified', 'domain.unverified'])
    const first = await verify(account, hostname)
    expect(first.status, show(first)).toBe(200)
    expect((await verify(account, hostname)).status).toBe(200)
    const events = await eventsOf(database.db, account.id)
    expect(events.map((e) => e.type)).toEqual(['domain.verified'])
    expect(events[0]!.data).toEqual(first.body.data)
  })

  test('domain.unverified: when the re-check unverifies a domain whose record stayed missing seven days', async () => {
    const { account, hostname, record } = await withDomain(['domain.unverified'])
    const start = clock
    expect((await verify(account, hostname)).status).toBe(200)
    dns.setTxt(record.name, null)
    clock = start + RECHECK_EVERY_MS + 1000
    expect(await recheckDomains(services, createTxtResolver(services.config), mailer)).toMatchObject({ first_miss: 1 })
    expect(await eventsOf(database.db, account.id), 'a first miss only warns').toEqual([])
    clock += UNVERIFY_AFTER_MS
    expect(await recheckDomains(services, createTxtResolver(services.config), mailer)).toMatchObject({ unverified: 1 })
    const events = await eventsOf(database.db, account.id)
    expect(events.map((e) => [e.type, e.data.hostname, e.data.verified, e.data.verified_at])).toEqual([['domain.unverified', hostname, false, null]])
  })

  test('a removed domain: link.deleted for each of its links, with the link as it was', async () => {
    const { account, hostname } = await withDomain(['link.deleted'])
    expect((await verify(account, hostname)).status).toBe(200)
    const aliases = ['one', 'two']
    await database.db.insert(links).values(aliases.map((alias) => ({ id: newId('link'), domain: hostname, alias, url: `https://example.com/${alias}`, accountId: account.id })))
    const removed = await call(app, 'DELETE', `/api/v1/domains/${hostname}`, { token: account.key })
    expect(removed.status, show(removed)).toBe(200)
    const events = await eventsOf(database.db, account.id)
    expect(events.map((e) => [e.type, e.data.short_url, e.data.full_url]).sort()).toEqual(aliases.map((alias) => ['link.deleted', `https://${hostname}/${alias}`, `https://example.com/${alias}`]))
  })
})
