// The daily re-check of verified custom domains (recheck.ts) against a real DNS server on loopback and a
// clock the test moves: a missing TXT record is recorded and mailed once, unverifies the domain after
// seven days (announced; /tls/ask then 404), and a record seen again clears the miss.
//
// The sweep takes every due domain of its database, so this file has a PGlite of its own: with the
// clock days ahead, a shared database's domains (other test files') would be due too.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DOMAIN_CHANNEL } from '../../../core/link-cache'
import { openDatabase, type Database } from '../../db/client'
import { domains } from '../../db/schema'
import { createTxtResolver } from '../../dns/resolver'
import { outboxMailer, smtpMailer } from '../../mail/mailer'
import { createServices, type Services } from '../../services'
import { call, show, testApi, testConfig, type TestApp } from '../../../test/support/api'
import { startTestDnsServer, type TestDnsServer } from '../../../test/support/dns'
import { newAccount, type TestAccount } from '../../../test/support/fixtures'
import { freePort } from '../../../test/support/processes'
import { until } from '../../../test/support/wait'
import { recheckDomains, RECHECK_EVERY_MS, UNVERIFY_AFTER_MS } from './recheck'

const HOUR = 3600_000

let database: Database
let dns: TestDnsServer
let app: TestApp
let services: Services
let clock = Date.now()
const outbox = join(mkdtempSync(join(tmpdir(), 'domain-recheck-')), 'outbox.log')
const mailer = outboxMailer(outbox, 'Link service <no-reply@sho.rt>', () => {})
const published: string[] = []

beforeAll(async () => {
  database = await openDatabase({ databaseUrl: undefined, dataDir: ':memory:' })
  await database.migrate()
  dns = await startTestDnsServer()
  const api = await testApi({ db: database.db, now: () => clock, config: testConfig({ DNS_SERVERS: dns.server, DNS_TIMEOUT_MS: '400' }) })
  app = api.app
  services = createServices({ ...api.deps, now: () => clock })
  await api.adapters.kv.subscribe(DOMAIN_CHANNEL, (host) => published.push(host))
}, 60_000)

// Each test counts outcomes over the whole (private) database: it starts with no domain.
afterEach(async () => {
  await database.db.delete(domains)
})

afterAll(async () => {
  await dns?.close()
  await database?.close()
})

const recheck = () => recheckDomains(services, createTxtResolver(services.config), mailer)
const row = async (hostname: string) => (await database.db.select().from(domains).where(eq(domains.hostname, hostname)))[0]!
const mailsAbout = (hostname: string) =>
  readOutbox()
    .split('===== DEVELOPMENT DELIVERY')
    .filter((entry) => entry.includes(`Subject: The DNS record of ${hostname} is missing`))
const readOutbox = () => {
  try {
    return readFileSync(outbox, 'utf8')
  } catch {
    return ''
  }
}

/** An account with a custom domain verified through the API at the current clock; the TXT record stays in DNS. */
async function verifiedDomain(label: string): Promise<{ account: TestAccount; hostname: string; record: { name: string; value: string } }> {
  const account = await newAccount(database.db)
  const hostname = `${label}-${crypto.randomUUID().slice(0, 8)}.example.com`
  const added = await call(app, 'POST', '/api/v1/domains', { token: account.key, body: { hostname } })
  if (added.status !== 201) throw new Error(show(added))
  const record = added.body.data.verification as { name: string; value: string }
  dns.setTxt(record.name, [record.value])
  const verified = await call(app, 'POST', `/api/v1/domains/${hostname}/verify`, { token: account.key })
  if (verified.status !== 200) throw new Error(show(verified))
  return { account, hostname, record }
}

describe('the daily re-check of verified custom domains', () => {
  test('a missing record: recorded and mailed once, unverified after 7 days (announced, /tls/ask 404)', async () => {
    const start = clock
    const { account, hostname, record } = await verifiedDomain('lapsed')
    const email = `${account.id.toLowerCase()}@example.test`

    // Within its first day nothing is due; a day after its verification it is checked, and found.
    expect((await recheck()).found, 'nothing due within the day').toBe(0)
    clock = start + RECHECK_EVERY_MS + HOUR
    expect(await recheck()).toMatchObject({ found: 1, first_miss: 0 })
    expect((await row(hostname)).recheckedAt?.getTime()).toBe(clock)

    dns.setTxt(record.name, null)
    clock += RECHECK_EVERY_MS
    const firstMissAt = clock
    expect(await recheck()).toMatchObject({ first_miss: 1, unverified: 0 })
    expect((await row(hostname)).recordMissingSince?.getTime()).toBe(firstMissAt)
    const mails = mailsAbout(hostname)
    expect(mails.length, readOutbox()).toBe(1)
    expect(mails[0]).toContain(`To: ${email}`)
    expect(mails[0]).toContain(`TXT ${record.name} "${record.value}"`)
    expect(mails[0]).toContain(new Date(firstMissAt + UNVERIFY_AFTER_MS).toISOString().slice(0, 10))
    // Still verified and served meanwhile; its owner sees since when the record is missing.
    expect((await call(app, 'GET', `/tls/ask?domain=${hostname}`)).status).toBe(200)
    const listed = await call(app, 'GET', '/api/v1/domains', { token: account.key })
    expect(listed.body.data.domains[0], show(listed)).toMatchObject({ verified: true, record_missing_since: new Date(firstMissAt).toISOString() })

    // A day later: still missing, no second mail.
    clock += RECHECK_EVERY_MS
    expect(await recheck()).toMatchObject({ missing: 1, first_miss: 0, unverified: 0 })
    expect(mailsAbout(hostname).length).toBe(1)

    // Checked daily until the seventh day after the first miss: then unverified.
    while (clock + RECHECK_EVERY_MS < firstMissAt + UNVERIFY_AFTER_MS) {
      clock += RECHECK_EVERY_MS
      expect(await recheck(), new Date(clock).toISOString()).toMatchObject({ missing: 1, unverified: 0 })
    }
    expect((await row(hostname)).verifiedAt, 'verified until the seventh day').not.toBeNull()
    const before = published.length
    clock = firstMissAt + UNVERIFY_AFTER_MS
    expect(await recheck()).toMatchObject({ unverified: 1 })
    const after = await row(hostname)
    expect(after.verifiedAt).toBeNull()
    expect(after.recordMissingSince).toBeNull()
    await until(() => published.slice(before).includes(hostname), 'the unverified domain announced')
    const asked = await call(app, 'GET', `/tls/ask?domain=${hostname}`)
    expect(asked.status, show(asked)).toBe(404)
    expect(mailsAbout(hostname).length, 'one mail in all').toBe(1)

    // An unverified domain is not re-checked; verifying it again (record back) serves it again.
    clock += RECHECK_EVERY_MS
    expect((await recheck()).missing).toBe(0)
    dns.setTxt(record.name, [record.value])
    const again = await call(app, 'POST', `/api/v1/domains/${hostname}/verify`, { token: account.key })
    expect(again.status, show(again)).toBe(200)
    expect((await call(app, 'GET', `/tls/ask?domain=${hostname}`)).status).toBe(200)
  })

  test('a record back clears the miss: the domain stays verified past the seven days', async () => {
    const start = clock
    const { hostname, record } = await verifiedDomain('flaky')
    dns.setTxt(record.name, null)
    clock = start + RECHECK_EVERY_MS
    expect(await recheck()).toMatchObject({ first_miss: 1 })
    expect((await row(hostname)).recordMissingSince).not.toBeNull()

    dns.setTxt(record.name, [record.value])
    clock += RECHECK_EVERY_MS
    expect(await recheck()).toMatchObject({ restored: 1 })
    expect((await row(hostname)).recordMissingSince).toBeNull()

    clock += UNVERIFY_AFTER_MS
    expect(await recheck()).toMatchObject({ found: 1, unverified: 0 })
    expect((await row(hostname)).verifiedAt).not.toBeNull()
    expect(mailsAbout(hostname).length).toBe(1)
  })

  test('our own DNS not answering decides nothing: no miss, checked again within the hour', async () => {
    const start = clock
    const { hostname, record } = await verifiedDomain('silent')
    dns.fail(record.name, 'silent')
    clock = start + RECHECK_EVERY_MS
    expect(await recheck()).toMatchObject({ undecided: 1, first_miss: 0 })
    expect((await row(hostname)).recordMissingSince).toBeNull()
    dns.fail(record.name, null)
    clock += HOUR
    expect(await recheck()).toMatchObject({ found: 1 })
  })

  test("the domain's own DNS failing (SERVFAIL) counts as a missing record", async () => {
    const start = clock
    const { hostname, record } = await verifiedDomain('servfail')
    dns.fail(record.name, 'servfail')
    clock = start + RECHECK_EVERY_MS
    expect(await recheck()).toMatchObject({ first_miss: 1 })
    expect(mailsAbout(hostname).length).toBe(1)
    dns.fail(record.name, null)
  })

  test('a mail that does not go takes the miss back: the seven days count from a miss the owner was told of', async () => {
    const start = clock
    const { hostname, record } = await verifiedDomain('nomail')
    dns.setTxt(record.name, null)
    clock = start + RECHECK_EVERY_MS
    // A relay that refuses the connection: nothing listens on the port.
    const unreachable = smtpMailer(`smtp://127.0.0.1:${await freePort()}`, 'Link service <no-reply@sho.rt>')
    expect(await recheckDomains(services, createTxtResolver(services.config), unreachable)).toMatchObject({ undecided: 1, first_miss: 0 })
    expect((await row(hostname)).recordMissingSince).toBeNull()
    clock += HOUR
    expect(await recheck()).toMatchObject({ first_miss: 1 })
    expect(mailsAbout(hostname).length).toBe(1)
  })

  test('two processes sweeping at once check a domain once and mail its owner once', async () => {
    const start = clock
    const { hostname, record } = await verifiedDomain('twice')
    dns.setTxt(record.name, null)
    clock = start + RECHECK_EVERY_MS
    const [a, b] = await Promise.all([recheck(), recheck()])
    expect(a.first_miss + b.first_miss, JSON.stringify([a, b])).toBe(1)
    expect(a.missing + b.missing, JSON.stringify([a, b])).toBe(0)
    expect(mailsAbout(hostname).length).toBe(1)
  })
})
