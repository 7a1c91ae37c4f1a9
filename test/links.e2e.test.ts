// Managed links end to end over real HTTP:
// 1. The API (src/api.ts) and the redirector (redirect/main.ts) as two processes sharing a Redis of the
//    test's own, ClickHouse as chDB behind its HTTP shim: an update and a delete made through the API
//    reach a redirector that holds the link in its L1 long before the L1 would expire (how long they
//    took is printed; the promise is one second, the test's deadline a generous 10 s); a password link
//    shows its form, refuses a wrong password, and redirects (and counts the click) for the right one;
//    a host added to the API's block list file disables a link the redirector holds (410) at the next
//    refresh.
// 2. The embedded default (one-process/main.ts, one process): the password form posts back to the same port.
//
// Postgres is the run's DATABASE_URL, or else PGlite under the API's DATA_DIR. PGlite belongs to one
// process at a time, so the account and its API key are written before the process starts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../src/db/client'
import { newAccount, type TestAccount } from './support/fixtures'

/**
 * The account is on Pro, so every redirect carries the signed attribution parameters: checks they are
 * there and returns the destination without them.
 */
function destination(location: string | null): string | null {
  if (location === null) return null
  const url = new URL(location)
  expect(url.searchParams.get('mu_click'), location).toMatch(/^[A-Za-z0-9_-]{44}$/)
  expect(url.searchParams.get('mu_sig'), location).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
  return location.replace(/[?&]mu_click=[^&#]*&mu_sig=[^&#]*/, '')
}
import { freePort, startEntry } from './support/processes'
import { apiCall as api, clicksOf, eventually, redisServerBinary, startStack, type Stack } from './support/stack'

/**
 * The promise is that every change reaches the redirector within one second; on a loaded machine the test
 * waits up to 10 s, still far inside the 60 s L1 lifetime below, so only the invalidation can explain it.
 */
const PROPAGATION_DEADLINE_MS = 10_000

async function accountIn(where: { dataDir: string; databaseUrl: string | undefined }): Promise<TestAccount> {
  const database = await openDatabase(where)
  await database.migrate()
  const account = await newAccount(database.db, 'pro')
  await database.close()
  return account
}

const manual = { redirect: 'manual' } as const

/** How long until the short link answers `status` (polled every 5 ms; throws past the deadline). */
async function msUntilStatus(shortUrl: string, status: number): Promise<number> {
  const probe = async () => (await fetch(shortUrl, manual)).status
  return (await eventually(probe, (s) => s === status, PROPAGATION_DEADLINE_MS, { everyMs: 5, what: `${shortUrl} answering ${status}` })).ms
}
const postPassword = (url: string, password: string) =>
  fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ password }) })

/** The API's block list file: a test adds a host to it while a redirector holds a link there. */
const run = crypto.randomUUID().slice(0, 8)
const listFile = join(mkdtempSync(join(tmpdir(), 'e2e-list-')), 'blocklist.txt')
/** A list file is read again every BLOCKLIST_REFRESH (10 s), then its new host's links are taken down. */
const TAKEDOWN_DEADLINE_MS = 60_000

describe.skipIf(!redisServerBinary)('managed links across the API and the redirector', () => {
  let stack: Stack
  let account: TestAccount

  beforeAll(async () => {
    writeFileSync(listFile, `# the test's block list\nunrelated-${run}.example\n`)
    stack = await startStack({
      prefix: 'e2e-links-',
      prepare: async (where) => {
        account = await accountIn(where)
      },
      // Long enough that only the invalidation, never the L1's own expiry, can explain a fast change.
      env: { L1_TTL_MS: '60000', BLOCKLIST_FILES: listFile, BLOCKLIST_REFRESH: '10s' },
    })
  }, 90_000)

  afterAll(async () => {
    await stack?.stop()
  }, 60_000)

  test('an update and a delete reach a redirector holding the link, by invalidation', async () => {
    const alias = `e2e-${crypto.randomUUID().slice(0, 10)}`
    const created = await api(stack.api.url, account.key, 'POST', '/api/v1/shorten', { url: 'https://example.com/v1', alias })
    expect(created.status, created.text).toBe(200)
    const shortUrl = created.body.data.short_url as string
    expect(shortUrl).toBe(`${stack.redirector.url}/${alias}`)
    // Warm the redirector's L1.
    for (let i = 0; i < 3; i++) expect(destination((await fetch(shortUrl, manual)).headers.get('location'))).toBe('https://example.com/v1')

    // The first PATCH and DELETE of a fresh process compile their routes; measure the steady state.
    const spare = `e2e-${crypto.randomUUID().slice(0, 10)}`
    await api(stack.api.url, account.key, 'POST', '/api/v1/shorten', { url: 'https://example.com/spare', alias: spare })
    await api(stack.api.url, account.key, 'PATCH', `/api/v1/links/${spare}`, { url: 'https://example.com/spare-2' })
    await api(stack.api.url, account.key, 'DELETE', `/api/v1/links/${spare}`)
    // Measured from the moment the change is sent: the API's commit, write-through and publish count too.
    let started = performance.now()
    const patched = await api(stack.api.url, account.key, 'PATCH', `/api/v1/links/${alias}`, { url: 'https://example.com/v2' })
    expect(patched.status, patched.text).toBe(200)
    const location = async () => destination((await fetch(shortUrl, manual)).headers.get('location'))
    await eventually(location, (l) => l === 'https://example.com/v2', PROPAGATION_DEADLINE_MS, { everyMs: 5, what: 'the update at the redirector' })
    const updateMs = performance.now() - started

    started = performance.now()
    const deleted = await api(stack.api.url, account.key, 'DELETE', `/api/v1/links/${alias}`)
    expect(deleted.status, deleted.text).toBe(200)
    await msUntilStatus(shortUrl, 404)
    const deleteMs = performance.now() - started
    console.log(`propagation to the redirector, from the API call: update ${updateMs.toFixed(0)} ms, delete ${deleteMs.toFixed(0)} ms`)
  }, 60_000)

  test(
    'a block list refresh that adds a host disables a link to it at a redirector holding it: 410',
    async () => {
      const host = `later-${run}.example`
      const created = await api(stack.api.url, account.key, 'POST', '/api/v1/shorten', { url: `https://${host}/landing` })
      expect(created.status, created.text).toBe(200)
      const shortUrl = created.body.data.short_url as string
      // Warm the redirector's L1: it redirects while the host is not listed.
      for (let i = 0; i < 3; i++) expect(destination((await fetch(shortUrl, manual)).headers.get('location'))).toBe(`https://${host}/landing`)
      appendFileSync(listFile, `${host}\n`)
      const probe = async () => (await fetch(shortUrl, manual)).status
      const { ms } = await eventually(probe, (status) => status === 410, TAKEDOWN_DEADLINE_MS, { everyMs: 50, what: `${shortUrl} answering 410 after the list named ${host}` })
      const after = await fetch(shortUrl, manual)
      expect(after.headers.get('location')).toBeNull()
      expect(await after.text()).toContain('disabled')
      const refused = await api(stack.api.url, account.key, 'POST', '/api/v1/shorten', { url: `https://www.${host}/again` })
      expect([refused.status, refused.body.error], refused.text).toEqual([400, 'DESTINATION_BLOCKED'])
      console.log(`block list change to a 410 at the redirector: ${ms.toFixed(0)} ms (refresh every 10 s)`)
    },
    TAKEDOWN_DEADLINE_MS + 30_000,
  )

  test('protecting a link, expiring it and scheduling it reach the redirector by invalidation', async () => {
    const alias = `e2e-${crypto.randomUUID().slice(0, 10)}`
    const created = await api(stack.api.url, account.key, 'POST', '/api/v1/shorten', { url: 'https://example.com/guarded', alias })
    const shortUrl = created.body.data.short_url as string
    expect((await fetch(shortUrl, manual)).status).toBe(302)
    await api(stack.api.url, account.key, 'PATCH', `/api/v1/links/${alias}`, { password: 'e2e secret' })
    const protectedMs = await msUntilStatus(shortUrl, 200)
    await api(stack.api.url, account.key, 'PATCH', `/api/v1/links/${alias}`, { password: null, activated_at: '2098-01-01T00:00:00Z', expiration: '2099-01-01T00:00:00Z' })
    const scheduledMs = await msUntilStatus(shortUrl, 404)
    // An expiry a few seconds ahead (the API refuses one in the past, so the PATCH must land before it).
    const expiresAt = Date.now() + 3000
    const expiring = await api(stack.api.url, account.key, 'PATCH', `/api/v1/links/${alias}`, { activated_at: null, expiration: new Date(expiresAt).toISOString() })
    expect(expiring.status, expiring.text).toBe(200)
    await Bun.sleep(Math.max(0, expiresAt - Date.now()))
    const expiredMs = await msUntilStatus(shortUrl, 410)
    console.log(`seen by the redirector after: password ${protectedMs.toFixed(0)} ms, schedule ${scheduledMs.toFixed(0)} ms, expiry ${expiredMs.toFixed(0)} ms`)
  }, 60_000)

  test('a password link: form, wrong password 401, right password 302 and one click in ClickHouse', async () => {
    const alias = `pw-${crypto.randomUUID().slice(0, 10)}`
    const created = await api(stack.api.url, account.key, 'POST', '/api/v1/shorten', { url: 'https://example.com/members', alias, password: 'e2e secret' })
    expect(created.status, created.text).toBe(200)
    const shortUrl = created.body.data.short_url as string
    const form = await fetch(shortUrl, manual)
    expect(form.status).toBe(200)
    expect(await form.text()).toContain('name="password"')
    const wrong = await postPassword(shortUrl, 'not it')
    expect(wrong.status, stack.redirector.output()).toBe(401)
    expect(wrong.headers.get('location')).toBeNull()
    const right = await postPassword(shortUrl, 'e2e secret')
    expect(right.status, stack.redirector.output()).toBe(302)
    expect(destination(right.headers.get('location'))).toBe('https://example.com/members')
    expect(right.headers.get('set-cookie')).toBeNull()
    const counted = () => clicksOf(stack.clickhouse, alias)
    await eventually(counted, (n) => n === 1, 20_000, { everyMs: 5, what: 'the click in ClickHouse' })
    // A click on another link after it: once that one is stored, a second row of the first would be too.
    const marker = await api(stack.api.url, account.key, 'POST', '/api/v1/shorten', { url: 'https://example.com/after-the-password' })
    expect(marker.status, marker.text).toBe(200)
    expect((await fetch(marker.body.data.short_url, manual)).status, stack.redirector.output()).toBe(302)
    await eventually(
      () => clicksOf(stack.clickhouse, marker.body.data.alias),
      (n) => n === 1,
      20_000,
      { what: 'the later click in ClickHouse' },
    )
    expect(await counted(), 'clicks of the password link').toBe(1)
    expect(stack.api.output() + stack.redirector.output()).not.toContain('e2e secret')
  }, 30_000)
})

describe('embedded default: the password form posts back to the one process', () => {
  test('form → wrong 401 → right 302', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'e2e-links-embedded-'))
    // The embedded default is PGlite under DATA_DIR, whatever the test run's DATABASE_URL.
    const database = await openDatabase({ databaseUrl: undefined, dataDir })
    await database.migrate()
    const account = await newAccount(database.db)
    await database.close()
    const port = await freePort()
    const app = await startEntry('one-process/main.ts', { PORT: String(port), DATA_DIR: dataDir }, port)
    try {
      const created = await api(app.url, account.key, 'POST', '/api/v1/shorten', { url: 'https://example.com/embedded', password: 'one process' })
      expect(created.status, created.text).toBe(200)
      const shortUrl = `${app.url}/${created.body.data.alias}`
      expect((await fetch(shortUrl, manual)).status).toBe(200)
      expect((await postPassword(shortUrl, 'two processes')).status, app.output()).toBe(401)
      const right = await postPassword(shortUrl, 'one process')
      expect(right.status, app.output()).toBe(302)
      expect(right.headers.get('location')).toBe('https://example.com/embedded')
    } finally {
      expect(await app.stop(), app.output()).toBe(0)
    }
  }, 120_000)
})
