// The in-process cache of live mk_ keys (verdicts.ts): what it must not let through. A key revoked in
// Postgres is refused once KEY_VERDICT_TTL_MS has passed, every request still counts against the
// key's rate limit, two accounts' keys never see each other's account, and an upgrade shows at once.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { accounts, apiKeys } from '../../db/schema'
import { hashSecret } from '../../lib/secrets'
import { call, show, testApi, type TestApp } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { announceRevocation } from '../../plugins/revocations'
import { KEY_VERDICT_TTL_MS } from './verdicts'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
let clock = Date.now()

beforeAll(async () => {
  api = await testApi({ now: () => clock })
  app = api.app
})

const status = (key: string) => call(app, 'GET', '/api/v1/account/status', { token: key })

describe('cached API keys', () => {
  test('security: a key revoked in Postgres is refused once the cache lifetime has passed, in this process too', async () => {
    const account = await newAccount(api.deps.db)
    const first = await status(account.key)
    expect(first.status, show(first)).toBe(200)
    await api.deps.db
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(eq(apiKeys.keyHash, hashSecret(account.key)))
    clock += KEY_VERDICT_TTL_MS
    const revoked = await status(account.key)
    expect(revoked.status, show(revoked)).toBe(401)
    expect(revoked.body.error, show(revoked)).toBe('UNAUTHORIZED')
    // A refusal is never cached as a verdict either way: the key stays refused.
    const again = await status(account.key)
    expect(again.status, show(again)).toBe(401)
  })

  test('the cache lifetime is at most the one second a revocation may take', () => {
    expect(KEY_VERDICT_TTL_MS).toBeLessThanOrEqual(1_000)
  })

  test('security: every request of a cached key counts against its rate limit', async () => {
    const account = await newAccount(api.deps.db)
    clock += 60_000 // a fresh minute for this key
    const limit = api.deps.config.limits.plans.free.requestsPerMinute
    for (let i = 0; i < limit; i++) {
      const res = await status(account.key)
      expect(res.status, show(res)).toBe(200)
      expect(res.headers.get('x-ratelimit-remaining'), show(res)).toBe(String(limit - i - 1))
    }
    const over = await status(account.key)
    expect(over.status, show(over)).toBe(429)
  })

  test("security: two accounts' keys used in turn each see their own account", async () => {
    const [a, b] = [await newAccount(api.deps.db), await newAccount(api.deps.db)]
    for (let round = 0; round < 3; round++) {
      for (const account of [a, b]) {
        const res = await status(account.key)
        expect(res.status, show(res)).toBe(200)
        expect(res.body.data.email, show(res)).toBe(`${account.id.toLowerCase()}@example.test`)
      }
    }
  })

  test("an account change this process announces (an upgrade) shows on the key's next request", async () => {
    const account = await newAccount(api.deps.db)
    const before = await status(account.key)
    expect(before.body.data.account_type, show(before)).toBe('free')
    await api.deps.db.update(accounts).set({ plan: 'pro' }).where(eq(accounts.id, account.id))
    await announceRevocation(api.deps, `account:${account.id}`)
    const after = await status(account.key)
    expect(after.body.data.account_type, show(after)).toBe('pro')
  })
})
