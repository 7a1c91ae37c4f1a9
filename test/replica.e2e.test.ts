// DATABASE_REPLICA_URL against a real streaming replica of the run's PostgreSQL (test/support/pg-standby.ts):
// with the standby's replay paused, what the API reads from it is visibly behind. The list is (it reads
// the replica); one link and its statistics are not (a miss there is asked of the primary); nor is
// authentication (a revoked key is refused at once). A standby that goes down fails none of those reads.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openDatabase, type Database } from '../src/db/client'
import { call, show, testApi, type TestApp } from './support/api'
import { newAccount, type TestAccount } from './support/fixtures'
import { startStandby, type Standby } from './support/pg-standby'
import { until } from './support/wait'

const PRIMARY_URL = process.env.DATABASE_URL
/** A standby catching up after its replay resumes, on a shared 2-core machine: generous. */
const CATCH_UP_MS = 30_000

let standby: Standby
let database: Database
let app: TestApp

const aliasesOf = async (account: TestAccount) => {
  const list = await call(app, 'GET', '/api/v1/links?limit=100', { token: account.key })
  expect(list.status, show(list)).toBe(200)
  return (list.body.data.links as { alias: string }[]).map((link) => link.alias)
}

async function shorten(account: TestAccount, url: string): Promise<string> {
  const created = await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url } })
  expect(created.status, show(created)).toBe(200)
  return created.body.data.alias
}

/** Runs `body` with the standby's replay paused, resuming it whatever happens. */
async function whilePaused(body: () => Promise<void>): Promise<void> {
  await standby.pauseReplay()
  try {
    await body()
  } finally {
    await standby.resumeReplay()
  }
}

describe.skipIf(!PRIMARY_URL)('read replica (DATABASE_URL): a streaming standby behind DATABASE_REPLICA_URL', () => {
  beforeAll(async () => {
    // The schema is migrated (testApi's engines) before the copy, so the standby starts with it.
    await testApi()
    standby = await startStandby(PRIMARY_URL!)
    database = await openDatabase({ databaseUrl: PRIMARY_URL, databaseReplicaUrl: standby.url, dataDir: ':memory:' })
    app = (await testApi({ db: database.db, readDb: database.readDb })).app
  }, 180_000)

  afterAll(async () => {
    await database?.close()
    await standby?.remove()
  })

  test('/ready shows the replica, not required', async () => {
    const ready = await call(app, 'GET', '/ready')
    expect(ready.status, show(ready)).toBe(200)
    expect(ready.body.checks.postgres_replica, show(ready)).toMatchObject({ status: 'ok', required: false })
  })

  test('the list reads the replica (behind while replay is paused); one link and its statistics are found at once on the primary', async () => {
    const human = await newAccount(database.db)
    const before = await shorten(human, 'https://example.com/replicated')
    await standby.caughtUp()
    let fresh = ''
    await whilePaused(async () => {
      fresh = await shorten(human, 'https://example.com/not-yet-replicated')
      const listed = await aliasesOf(human)
      expect(listed, 'the list comes from the paused replica').toContain(before)
      expect(listed, 'the list comes from the paused replica').not.toContain(fresh)

      const one = await call(app, 'GET', `/api/v1/links/${fresh}`, { token: human.key })
      expect(one.status, show(one)).toBe(200)
      expect(one.body.data).toMatchObject({ alias: fresh, full_url: 'https://example.com/not-yet-replicated' })
      // A Free account's statistics are 403 with the link's totals: the link was found (404 otherwise).
      const stats = await call(app, 'GET', `/api/v1/links/${fresh}/stats`, { token: human.key })
      expect(stats.status, show(stats)).toBe(403)
      expect(stats.body).toMatchObject({ success: false, error: 'STATS_REQUIRES_PRO', data: { alias: fresh } })

      // A link that exists on neither is still 404, in the shape of every error.
      const missing = await call(app, 'GET', '/api/v1/links/nowhere-replica', { token: human.key })
      expect(missing.status, show(missing)).toBe(404)
      expect(missing.body, show(missing)).toMatchObject({ success: false, error: 'LINK_NOT_FOUND' })
      expect(typeof missing.body.hint).toBe('string')
    })
    await until(async () => (await aliasesOf(human)).includes(fresh), `the list showing ${fresh} once replay resumed`, CATCH_UP_MS)
  })

  test('a tag made a moment ago filters the list (no 404 TAG_NOT_FOUND from a replica that lacks it)', async () => {
    const human = await newAccount(database.db)
    await whilePaused(async () => {
      const tag = await call(app, 'POST', '/api/v1/tags', { token: human.key, body: { name: 'fresh' } })
      expect(tag.status, show(tag)).toBe(201)
      const list = await call(app, 'GET', `/api/v1/links?tag=${tag.body.tag.id}`, { token: human.key })
      expect(list.status, show(list)).toBe(200)
      expect(list.body.data.links).toEqual([])
    })
  })

  test('security: an API key revoked on the primary is refused at once though the paused replica still holds it', async () => {
    const human = await newAccount(database.db)
    const made = await call(app, 'POST', '/api/v1/account/keys', { token: human.key, body: { name: 'to revoke' } })
    expect(made.status, show(made)).toBe(201)
    const { id, key } = made.body.data as { id: string; key: string }
    expect((await call(app, 'GET', '/api/v1/links', { token: key })).status).toBe(200)
    await standby.caughtUp()
    await whilePaused(async () => {
      const revoked = await call(app, 'DELETE', `/api/v1/account/keys/${id}`, { token: human.key })
      expect(revoked.status, show(revoked)).toBe(200)
      for (const path of ['/api/v1/links', `/api/v1/links/anything`]) {
        const refused = await call(app, 'GET', path, { token: key })
        expect(refused.status, show(refused)).toBe(401)
        expect(refused.body, show(refused)).toMatchObject({ success: false, error: 'UNAUTHORIZED' })
      }
      // And a key made while replay is paused works at once.
      const fresh = await call(app, 'POST', '/api/v1/account/keys', { token: human.key, body: { name: 'new' } })
      expect(fresh.status, show(fresh)).toBe(201)
      const listed = await call(app, 'GET', '/api/v1/links', { token: fresh.body.data.key })
      expect(listed.status, show(listed)).toBe(200)
    })
  })

  test("security: another account's link is 404 on both paths, the replica's (replicated) and the primary's (not yet)", async () => {
    const owner = await newAccount(database.db)
    const intruder = await newAccount(database.db, 'pro')
    const replicated = await shorten(owner, 'https://example.com/owner-replicated')
    await standby.caughtUp()
    await whilePaused(async () => {
      const fresh = await shorten(owner, 'https://example.com/owner-fresh')
      for (const alias of [replicated, fresh]) {
        for (const path of [`/api/v1/links/${alias}`, `/api/v1/links/${alias}/stats`]) {
          const seen = await call(app, 'GET', path, { token: intruder.key })
          expect(seen.status, `${path}: ${show(seen)}`).toBe(404)
          expect(seen.body, show(seen)).toMatchObject({ success: false, error: 'LINK_NOT_FOUND' })
        }
      }
      expect(await aliasesOf(intruder), "the intruder's list").toEqual([])
    })
  })

  // Last: the standby stays down.
  test('a replica that is down fails none of its reads: the primary answers them, /ready stays 200 and shows it failing', async () => {
    const human = await newAccount(database.db)
    const alias = await shorten(human, 'https://example.com/replica-down')
    await standby.stop()
    expect(await aliasesOf(human)).toEqual([alias])
    const one = await call(app, 'GET', `/api/v1/links/${alias}`, { token: human.key })
    expect(one.status, show(one)).toBe(200)
    const missing = await call(app, 'GET', '/api/v1/links/nowhere-replica', { token: human.key })
    expect(missing.status, show(missing)).toBe(404)
    expect(missing.body).toMatchObject({ success: false, error: 'LINK_NOT_FOUND' })
    const ready = await call(app, 'GET', '/ready')
    expect(ready.status, show(ready)).toBe(200)
    expect(ready.body.checks.postgres_replica, show(ready)).toMatchObject({ status: 'failing', required: false })
  })
})
