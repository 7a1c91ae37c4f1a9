// One contract for every IdempotencyStore adapter: the in-process one always, Redis when REDIS_URL is set.
import { afterEach, describe, expect, it, setSystemTime } from 'bun:test'
import type { RedisClient } from '../../core/redis'
import { openAdapters } from './index'
import { MemoryIdempotencyStore } from './memory-idempotency'
import type { IdempotencyClaim, IdempotencyStore, StoredResponse } from './ports'
import { IDEMPOTENCY_PREFIX, RedisIdempotencyStore } from './redis-idempotency'
import { connectRedis } from './redis-kv'
import { canStartTopologies, keysOnEveryNode, startedForBlock, startRedisCluster } from '../../test/support/redis-topologies'

const REDIS_URL = process.env.REDIS_URL
/** For inspecting Redis from the outside; fails fast, like the adapters, when Redis is not there. */
const adminClient = (url: string): RedisClient => connectRedis(url, { commandTimeoutMs: 2_000, name: 'test-admin' })

interface StoreFactory {
  open(): IdempotencyStore
  /** A second client on the same store as `first` (for the in-process adapter: `first` itself). */
  openSecond(first: IdempotencyStore): IdempotencyStore
  /** How a test lets a lease or a ttl run out on this store's clock. */
  clock: StoreClock
}

/**
 * The in-process store reads Date.now(): the test freezes it and moves it (setSystemTime), so no window
 * depends on how fast the machine runs. Redis expires keys on its own clock: the test waits for real,
 * and the windows are seconds long so the checks made right after a claim are inside them however
 * loaded the machine is.
 */
interface StoreClock {
  freeze(): void
  pass(ms: number): Promise<void>
  release(): void
}

const frozenClock: StoreClock = {
  freeze: () => setSystemTime(new Date()),
  pass: async (ms) => void setSystemTime(new Date(Date.now() + ms)),
  release: () => setSystemTime(),
}
const realClock: StoreClock = { freeze: () => {}, pass: (ms) => Bun.sleep(ms), release: () => {} }

/** A lease or ttl the tests let run out; `PAST_WINDOW_MS` is what they wait to be past it. */
const WINDOW_MS = 2_000
const PAST_WINDOW_MS = WINDOW_MS + 200
const DAY_MS = 24 * 60 * 60 * 1000
const RESPONSE: StoredResponse = { status: 201, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' }

function tokenOf(claim: IdempotencyClaim): string {
  if (claim.state !== 'claimed') throw new Error(`expected a claim, got ${JSON.stringify(claim)}`)
  return claim.token
}

function idempotencyContract(name: string, factory: StoreFactory): void {
  describe(`IdempotencyStore contract: ${name}`, () => {
    // Unique per run: the Redis in CI is shared with other test files.
    const ns = `test:${crypto.randomUUID()}:`
    const opened = new Set<IdempotencyStore>()
    const track = (s: IdempotencyStore) => (opened.add(s), s)
    const open = () => track(factory.open())

    afterEach(async () => {
      factory.clock.release()
      await Promise.all([...opened].map((s) => s.close()))
      opened.clear()
    })

    it('claims a free key once; a second claim sees it in flight with the first fingerprint', async () => {
      const store = open()
      const first = await store.claim(`${ns}a`, 'fp-1', 60_000)
      expect(first.state, JSON.stringify(first)).toBe('claimed')
      expect(await store.claim(`${ns}a`, 'fp-2', 60_000)).toEqual({ state: 'in_flight', fingerprint: 'fp-1' })
    })

    it('gives exactly one of 50 concurrent claims the key', async () => {
      const store = open()
      const claims = await Promise.all(Array.from({ length: 50 }, () => store.claim(`${ns}race`, 'fp', 60_000)))
      expect(claims.filter((c) => c.state === 'claimed').length, JSON.stringify(claims.slice(0, 3))).toBe(1)
      expect(claims.filter((c) => c.state === 'in_flight').length).toBe(49)
    })

    it('counts claims from two clients together', async () => {
      const a = open()
      const b = track(factory.openSecond(a))
      const claims = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).claim(`${ns}two`, 'fp', 60_000)))
      expect(claims.filter((c) => c.state === 'claimed').length, 'claimed across two clients').toBe(1)
    })

    it('replays the completed response with its fingerprint', async () => {
      const store = open()
      const token = tokenOf(await store.claim(`${ns}done`, 'fp-1', 60_000))
      expect(await store.complete(`${ns}done`, token, RESPONSE, DAY_MS), 'complete with its own token').toBe(true)
      expect(await store.claim(`${ns}done`, 'fp-1', 60_000)).toEqual({ state: 'done', fingerprint: 'fp-1', response: RESPONSE })
      expect(await store.claim(`${ns}done`, 'fp-other', 60_000), 'another payload still sees the first one').toEqual({
        state: 'done',
        fingerprint: 'fp-1',
        response: RESPONSE,
      })
    })

    it('keeps bodies byte for byte (unicode, quotes, empty)', async () => {
      const store = open()
      for (const body of ['', '{"x":"é \\" 🎉"}', 'a|b|c']) {
        const key = `${ns}bytes:${crypto.randomUUID()}`
        const token = tokenOf(await store.claim(key, 'fp', 60_000))
        await store.complete(key, token, { status: 200, headers: {}, body }, DAY_MS)
        const again = await store.claim(key, 'fp', 60_000)
        expect(again.state === 'done' && again.response.body, JSON.stringify(again)).toBe(body)
      }
    })

    it('refuses to complete or release with a token that is not the claim', async () => {
      const store = open()
      tokenOf(await store.claim(`${ns}wrong`, 'fp', 60_000))
      expect(await store.complete(`${ns}wrong`, `${crypto.randomUUID()}|fp`, RESPONSE, DAY_MS)).toBe(false)
      await store.release(`${ns}wrong`, `${crypto.randomUUID()}|fp`)
      expect((await store.claim(`${ns}wrong`, 'fp', 60_000)).state, 'still held by its claim').toBe('in_flight')
    })

    it('frees the key on release, so the next claim runs', async () => {
      const store = open()
      const token = tokenOf(await store.claim(`${ns}release`, 'fp', 60_000))
      await store.release(`${ns}release`, token)
      expect((await store.claim(`${ns}release`, 'fp', 60_000)).state).toBe('claimed')
    })

    it('does not let release undo a completed response', async () => {
      const store = open()
      const token = tokenOf(await store.claim(`${ns}keep`, 'fp', 60_000))
      await store.complete(`${ns}keep`, token, RESPONSE, DAY_MS)
      await store.release(`${ns}keep`, token)
      expect((await store.claim(`${ns}keep`, 'fp', 60_000)).state).toBe('done')
    })

    it('frees a key whose lease ran out (a crashed request), and the late claim cannot overwrite the new one', async () => {
      const store = open()
      factory.clock.freeze()
      const crashed = tokenOf(await store.claim(`${ns}lease`, 'fp', WINDOW_MS))
      expect((await store.claim(`${ns}lease`, 'fp', WINDOW_MS)).state, 'within the lease').toBe('in_flight')
      await factory.clock.pass(PAST_WINDOW_MS)
      const next = tokenOf(await store.claim(`${ns}lease`, 'fp', 60_000))
      expect(await store.complete(`${ns}lease`, crashed, RESPONSE, DAY_MS), 'the expired claim').toBe(false)
      expect(await store.complete(`${ns}lease`, next, { ...RESPONSE, body: 'second' }, DAY_MS)).toBe(true)
      const seen = await store.claim(`${ns}lease`, 'fp', 60_000)
      expect(seen.state === 'done' && seen.response.body, JSON.stringify(seen)).toBe('second')
    })

    it('still stores the response of a request that outlived its lease while nobody claimed the key', async () => {
      const store = open()
      factory.clock.freeze()
      const slow = tokenOf(await store.claim(`${ns}slow`, 'fp-slow', WINDOW_MS))
      await factory.clock.pass(PAST_WINDOW_MS)
      expect(await store.complete(`${ns}slow`, slow, RESPONSE, DAY_MS)).toBe(true)
      expect(await store.claim(`${ns}slow`, 'fp-slow', 60_000)).toMatchObject({ state: 'done', fingerprint: 'fp-slow' })
    })

    it('forgets a completed response after its ttl', async () => {
      const store = open()
      factory.clock.freeze()
      const token = tokenOf(await store.claim(`${ns}ttl`, 'fp', 60_000))
      await store.complete(`${ns}ttl`, token, RESPONSE, WINDOW_MS)
      expect((await store.claim(`${ns}ttl`, 'fp', 60_000)).state, 'before the ttl').toBe('done')
      await factory.clock.pass(PAST_WINDOW_MS)
      expect((await store.claim(`${ns}ttl`, 'fp', 60_000)).state, 'after the ttl').toBe('claimed')
    })

    it('keeps keys apart', async () => {
      const store = open()
      await store.claim(`${ns}apart:one`, 'fp', 60_000)
      expect((await store.claim(`${ns}apart:two`, 'fp', 60_000)).state).toBe('claimed')
    })

    it('rejects durations Redis would reject (0, negative, fractional)', async () => {
      const store = open()
      for (const ms of [0, -1, 1.5]) {
        await expect(store.claim(`${ns}bad`, 'fp', ms), `leaseMs ${ms}`).rejects.toThrow(RangeError)
      }
      const token = tokenOf(await store.claim(`${ns}bad`, 'fp', 60_000))
      await expect(store.complete(`${ns}bad`, token, RESPONSE, 0)).rejects.toThrow(RangeError)
    })
  })
}

idempotencyContract('MemoryIdempotencyStore', { open: () => new MemoryIdempotencyStore(), openSecond: (first) => first, clock: frozenClock })

describe('MemoryIdempotencyStore housekeeping', () => {
  it('purges expired records instead of growing without bound', async () => {
    const store = new MemoryIdempotencyStore()
    try {
      for (let i = 0; i < 1_000; i++) await store.claim(`k:${i}`, 'fp', 1_000)
      expect(store.size).toBe(1_000)
      setSystemTime(new Date(Date.now() + 60_000)) // past every lease and past the sweep interval
      await store.claim('k:new', 'fp', 1_000)
      expect(store.size, 'only the claim just made is left').toBe(1)
    } finally {
      setSystemTime()
    }
  })
})

describe('openAdapters', () => {
  it('hands out an idempotency store of the same engine as the limiter', async () => {
    const adapters = await openAdapters({ redisUrl: REDIS_URL })
    try {
      expect(adapters.idempotency).toBeInstanceOf(REDIS_URL ? RedisIdempotencyStore : MemoryIdempotencyStore)
      const key = `test:${crypto.randomUUID()}`
      expect((await adapters.idempotency.claim(key, 'fp', 1_000)).state).toBe('claimed')
    } finally {
      await adapters.close()
    }
  })
})

// Skipped, not silently passed, without Redis: the Redis half runs in CI's second pass, where
// scripts/services.sh provides Redis and sets REDIS_URL.
describe.skipIf(!REDIS_URL)('Redis (REDIS_URL)', () => redisTests(() => REDIS_URL!))

// The same on a three-node Redis Cluster started here (.ci/run installs redis-server for both passes): the
// Lua scripts name one key each, so a cluster runs them wherever that key's slot lives.
describe.skipIf(!canStartTopologies)('Redis Cluster, three nodes started by this test', () => {
  const cluster = startedForBlock(startRedisCluster, 'idempotency-cluster-')
  redisTests(() => cluster().url)
})

function redisTests(urlOf: () => string): void {
  // Each store opens its own connection, so "two clients" really are two connections.
  idempotencyContract('RedisIdempotencyStore', { open: () => new RedisIdempotencyStore(urlOf()), openSecond: () => new RedisIdempotencyStore(urlOf()), clock: realClock })

  it('leaves every record with an expiry: the lease while in flight, the ttl once done', async () => {
    const ns = `test:${crypto.randomUUID()}:`
    const store = new RedisIdempotencyStore(urlOf())
    const admin = adminClient(urlOf())
    try {
      const tokens = await Promise.all(Array.from({ length: 10 }, async (_, i) => tokenOf(await store.claim(`${ns}${i}`, 'fp', 30_000))))
      await Promise.all(tokens.slice(0, 5).map((token, i) => store.complete(`${ns}${i}`, token, RESPONSE, DAY_MS)))
      const keys = await keysOnEveryNode(admin, `${IDEMPOTENCY_PREFIX}${ns}*`)
      expect(keys.length, 'one record per key').toBe(10)
      for (const key of keys) {
        const pttl = await admin.pttl(key)
        const done = Number(key.slice(-1)) < 5
        expect(pttl, `PTTL ${key}`).toBeGreaterThan(done ? 30_000 : 0)
        expect(pttl, `PTTL ${key}`).toBeLessThanOrEqual(done ? DAY_MS : 30_000)
      }
    } finally {
      await store.close()
      await admin.quit()
    }
  })

  it('refuses a record it did not write instead of overwriting it', async () => {
    const key = `test:${crypto.randomUUID()}`
    const store = new RedisIdempotencyStore(urlOf())
    const admin = adminClient(urlOf())
    try {
      await admin.set(IDEMPOTENCY_PREFIX + key, 'something else', 'PX', 60_000)
      await expect(store.claim(key, 'fp', 60_000)).rejects.toThrow(/not one of ours/)
      expect(await admin.get(IDEMPOTENCY_PREFIX + key)).toBe('something else')
    } finally {
      await admin.del(IDEMPOTENCY_PREFIX + key)
      await store.close()
      await admin.quit()
    }
  })
}
