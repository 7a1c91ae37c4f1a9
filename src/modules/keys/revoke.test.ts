// Revoking a key through DELETE /api/v1/account/keys/{keyId}: refused by this process from the next
// request on, and by another process (an app with its own store, sharing only the database) within the
// key's verdict lifetime. And last_used_at, written at most once a minute per key.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { openAdapters, type Adapters } from '../../adapters'
import { apiKeys } from '../../db/schema'
import { call, show, testApi, type TestApp } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { KEY_VERDICT_TTL_MS, LAST_USED_GRANULARITY_MS } from './verdicts'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
/** The other process's clock, moved by the tests. */
let otherClock = Date.now()
let other: TestApp
let otherAdapters: Adapters

beforeAll(async () => {
  api = await testApi()
  app = api.app
  // Another process: its own store (no in-process announcement reaches it), the same database.
  otherAdapters = await openAdapters({ redisUrl: process.env.REDIS_URL })
  other = (await testApi({ kv: otherAdapters.kv, limiter: otherAdapters.limiter, idempotency: otherAdapters.idempotency, now: () => otherClock })).app
})
afterAll(() => otherAdapters.close())

const KEYS = '/api/v1/account/keys'
const links = (target: TestApp, token: string) => call(target, 'GET', '/api/v1/links', { token })

async function newKey(token: string, name = 'to revoke') {
  const res = await call(app, 'POST', KEYS, { token, body: { name } })
  if (res.status !== 201) throw new Error(show(res))
  return res.body.data as { id: string; key: string }
}

/** Polls `read` until `done` holds, for at most `ms` (generous: the machine is shared). */
async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await read()
    if (done(value) || Date.now() > deadline) return value
    await Bun.sleep(25)
  }
}

describe('revoking a key', () => {
  test('security: refused (401) on the next request in this process, the cached verdict dropped', async () => {
    const human = await newAccount(api.deps.db)
    const { id, key } = await newKey(human.key)
    expect((await links(app, key)).status).toBe(200)
    const revoked = await call(app, 'DELETE', `${KEYS}/${id}`, { token: human.key })
    expect(revoked.status, show(revoked)).toBe(200)
    const after = await links(app, key)
    expect(after.status, show(after)).toBe(401)
    expect(after.body.error).toBe('UNAUTHORIZED')
    expect((await links(app, human.key)).status).toBe(200)
  })

  test('a key may revoke itself: that answer is its last', async () => {
    const human = await newAccount(api.deps.db)
    const { id, key } = await newKey(human.key)
    const self = await call(app, 'DELETE', `${KEYS}/${id}`, { token: key })
    expect(self.status, show(self)).toBe(200)
    expect(self.body.data.id).toBe(id)
    const after = await call(app, 'GET', KEYS, { token: key })
    expect(after.status, show(after)).toBe(401)
  })

  test('security: another process refuses it once its verdict lifetime has passed, and within a generous wait in real time', async () => {
    const human = await newAccount(api.deps.db)
    const { id, key } = await newKey(human.key)
    const warm = await links(other, key)
    expect(warm.status, show(warm)).toBe(200)
    expect((await call(app, 'DELETE', `${KEYS}/${id}`, { token: human.key })).status).toBe(200)
    otherClock += KEY_VERDICT_TTL_MS
    const refused = await links(other, key)
    expect(refused.status, show(refused)).toBe(401)

    // The same with the other process on the real clock: nothing announced reaches it, the TTL does.
    const second = await newKey(human.key, 'second')
    otherClock = Date.now()
    const realClock = (await testApi({ kv: otherAdapters.kv, limiter: otherAdapters.limiter, idempotency: otherAdapters.idempotency })).app
    expect((await links(realClock, second.key)).status).toBe(200)
    expect((await call(app, 'DELETE', `${KEYS}/${second.id}`, { token: human.key })).status).toBe(200)
    const eventually = await waitFor(
      () => links(realClock, second.key),
      (r) => r.status === 401,
    )
    expect(eventually.status, show(eventually)).toBe(401)
  })
})

describe('last_used_at', () => {
  test('null until used; then the time of a use, rewritten at most once a minute', async () => {
    let clock = Date.now()
    const timed = (await testApi({ now: () => clock })).app
    const human = await newAccount(api.deps.db)
    const { id, key } = await newKey(human.key)
    const storedOf = async (keyId: string) => (await api.deps.db.select({ at: apiKeys.lastUsedAt }).from(apiKeys).where(eq(apiKeys.id, keyId)))[0]!.at?.getTime() ?? null
    const stored = () => storedOf(id)
    expect(await stored()).toBeNull()

    const first = clock
    expect((await links(timed, key)).status).toBe(200)
    expect(await waitFor(stored, (at) => at !== null)).toBe(first)

    // Half a minute later (the verdict long expired, so the key was looked up again): not rewritten.
    // A key used for the first time right after it is written at this time: once that write has landed,
    // a write of the first key's use, started before it, would have landed too.
    clock += LAST_USED_GRANULARITY_MS / 2
    const marker = await newKey(human.key, 'marker')
    expect((await links(timed, key)).status).toBe(200)
    expect((await links(timed, marker.key)).status).toBe(200)
    expect(
      await waitFor(
        () => storedOf(marker.id),
        (at) => at !== null,
      ),
      'the later use written',
    ).toBe(clock)
    expect(await stored(), 'rewritten within the minute').toBe(first)

    clock += LAST_USED_GRANULARITY_MS / 2 + KEY_VERDICT_TTL_MS
    expect((await links(timed, key)).status).toBe(200)
    expect(await waitFor(stored, (at) => at !== first)).toBe(clock)
    const listed = await call(app, 'GET', KEYS, { token: human.key })
    expect(listed.body.data.keys.find((k: { id: string }) => k.id === id).last_used_at).toBe(new Date(clock).toISOString())
  })
})
