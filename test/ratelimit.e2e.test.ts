// The per-key request limit of README, decisions: "Plans" and "Rate headers": 30 a minute on Free, 120 on Pro,
// counted in the auth plugin before any handler, with X-RateLimit-* on every answer and Retry-After on
// every 429, holding across processes.
// 1. In-process (app.handle), on whatever engines the test run has: Free 30 and Pro 120 of 200.
// 2. Two real API processes (src/api.ts) sharing Redis and Postgres: 30 of 200 on one Free key.
//
// The endpoint is GET /api/v1/account/status: its limit is applied in auth, before the handler, so
// what counts is 429 or not 429 (the handler's own answer to an API key does not matter here).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connectRedis } from '../src/adapters/redis-kv'
import { RATE_LIMIT_PREFIX } from '../src/adapters/redis-limiter'
import { openDatabase, type Database, type Db } from '../src/db/client'
import { apiKeys, type Plan } from '../src/db/schema'
import { call, show, testApi, type TestApp } from './support/api'
import { newAccount } from './support/fixtures'
import { spawnChdbHttp, type ChdbHttpProcess } from './support/chdb-http-process'
import { freePort, startEntry, TEST_SECRETS, type Child } from './support/processes'

const STATUS_PATH = '/api/v1/account/status'
const BURST = 200

/** A new account on `plan` with one API key, straight in the database; returns the key and its id. */
async function newApiKey(db: Db, plan: Plan): Promise<{ key: string; keyId: string }> {
  const { id: accountId, key } = await newAccount(db, plan)
  const [row] = await db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.accountId, accountId))
  return { key, keyId: row!.id }
}

interface Answer {
  status: number
  headers: Headers
  text: string
}

/** What the spec demands of every answer to an API key, whether it got through or not. */
function expectRateHeaders(answers: Answer[], limit: number): void {
  for (const a of answers) {
    const what = `${a.status} ${a.text.slice(0, 300)}`
    expect(a.headers.get('x-ratelimit-limit'), what).toBe(String(limit))
    expect(a.headers.get('x-ratelimit-remaining'), what).toMatch(/^\d+$/)
    expect(Number(a.headers.get('x-ratelimit-reset')), `X-RateLimit-Reset is unix seconds: ${what}`).toBeGreaterThan(Date.now() / 1000 - 1)
    if (a.status === 429) {
      expect(Number(a.headers.get('retry-after')), `Retry-After on a 429: ${what}`).toBeGreaterThanOrEqual(1)
      expect(a.headers.get('x-ratelimit-remaining'), what).toBe('0')
    }
  }
  // Each request that got through saw its own place in the window.
  const remaining = answers.filter((a) => a.status !== 429).map((a) => Number(a.headers.get('x-ratelimit-remaining')))
  expect(remaining.sort((x, y) => x - y)).toEqual(Array.from({ length: limit }, (_, i) => i))
}

describe('per-key rate limit in one process (app.handle)', () => {
  let app: TestApp
  let db: Db

  beforeAll(async () => {
    const api = await testApi()
    app = api.app
    db = api.database.db
  })

  for (const [plan, limit] of [
    ['free', 30],
    ['pro', 120],
  ] as const) {
    test(`${BURST} concurrent requests on one ${plan} key allow exactly ${limit}`, async () => {
      const { key } = await newApiKey(db, plan)
      const answers = await Promise.all(Array.from({ length: BURST }, () => call(app, 'GET', STATUS_PATH, { token: key })))
      const through = answers.filter((a) => a.status !== 429)
      expect(
        through.length,
        answers
          .filter((a) => a.status !== 429)
          .slice(0, 3)
          .map(show)
          .join('\n'),
      ).toBe(limit)
      for (const a of answers.filter((x) => x.status === 429)) expect(a.body, show(a)).toMatchObject({ error: 'RATE_LIMITED', limit, remaining: 0 })
      expectRateHeaders(answers, limit)
    })
  }
})

// Two API processes need a store both can count in: Redis and Postgres. Skipped without them; CI's
// second pass (scripts/services.sh, REDIS_URL and DATABASE_URL set) runs it.
const shared = Boolean(process.env.REDIS_URL && process.env.DATABASE_URL)

describe.skipIf(!shared)('per-key rate limit across two API processes (REDIS_URL + DATABASE_URL)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ratelimit-e2e-'))
  let chdb: ChdbHttpProcess
  const apis: Child[] = []
  let database: Database

  beforeAll(async () => {
    // Both APIs reach one ClickHouse over HTTP, as in production (chDB binds a directory per process).
    chdb = await spawnChdbHttp({ path: join(dir, 'chdb') })
    const env = {
      ...TEST_SECRETS,
      REDIS_URL: process.env.REDIS_URL!,
      DATABASE_URL: process.env.DATABASE_URL!,
      CLICKHOUSE_URL: chdb.url,
      DATA_DIR: join(dir, 'data'),
    }
    // One after the other: both migrate at start, and the second then finds nothing to do.
    for (let i = 0; i < 2; i++) {
      const port = await freePort()
      apis.push(await startEntry('src/api.ts', { ...env, PORT: String(port) }, port))
    }
    database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: dir })
  }, 90_000)

  afterAll(async () => {
    await Promise.all(apis.map((api) => api.stop()))
    await chdb?.stop()
    await database?.close()
  }, 60_000)

  test(`${BURST} concurrent requests on one Free key over two API processes allow exactly 30`, async () => {
    const { key, keyId } = await newApiKey(database.db, 'free')
    const answers: Answer[] = await Promise.all(
      Array.from({ length: BURST }, async (_, i) => {
        const response = await fetch(apis[i % 2]!.url + STATUS_PATH, { headers: { authorization: `Bearer ${key}` } })
        return { status: response.status, headers: response.headers, text: await response.text() }
      }),
    )
    const through = answers.filter((a) => a.status !== 429)
    const byProcess = [0, 1].map((p) => answers.filter((a, i) => i % 2 === p && a.status !== 429).length)
    expect(through.length, `got through per process: ${byProcess}; ${apis.map((a) => a.output()).join('\n')}`).toBe(30)
    expect(
      answers.every((a) => a.status === 429 || a.status < 500),
      answers.find((a) => a.status >= 500)?.text,
    ).toBe(true)
    expectRateHeaders(answers, 30)

    // The counter itself, and every other one in Redis, carries an expiry.
    const redis = connectRedis(process.env.REDIS_URL!, { commandTimeoutMs: 2_000, name: 'test-admin' })
    try {
      const own = await redis.pttl(`${RATE_LIMIT_PREFIX}mk:${keyId}`)
      expect(own, "PTTL of this key's counter").toBeGreaterThan(0)
      expect(own).toBeLessThanOrEqual(60_000)
      const withoutExpiry: string[] = []
      let cursor = '0'
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${RATE_LIMIT_PREFIX}*`, 'COUNT', 1000)
        cursor = next
        for (const k of keys) if ((await redis.pttl(k)) === -1) withoutExpiry.push(k) // -2: expired meanwhile
      } while (cursor !== '0')
      expect(withoutExpiry, 'rl:* keys without an expiry').toEqual([])
    } finally {
      await redis.quit()
    }
  }, 60_000)
})
