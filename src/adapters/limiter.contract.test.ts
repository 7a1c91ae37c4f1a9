// One contract for every Limiter adapter: the in-process one always, Redis when REDIS_URL is set.
import { afterEach, describe, expect, it, setSystemTime } from 'bun:test'
import type { RedisClient } from '../../core/redis'
import { MemoryLimiter } from './memory-limiter'
import type { LimitResult, Limiter } from './ports'
import { RATE_LIMIT_PREFIX, RedisLimiter } from './redis-limiter'
import { connectRedis } from './redis-kv'
import { canStartTopologies, keysOnEveryNode, startedForBlock, startRedisCluster } from '../../test/support/redis-topologies'

const REDIS_URL = process.env.REDIS_URL
/** For inspecting Redis from the outside; fails fast, like the adapters, when Redis is not there. */
const adminClient = (url: string): RedisClient => connectRedis(url, { commandTimeoutMs: 2_000, name: 'test-admin' })

interface LimiterFactory {
  open(): Limiter
  /** A second client counting in the same store as `first` (for the in-process adapter: `first` itself). */
  openSecond(first: Limiter): Limiter
  /** How a test lets a window end on this limiter's clock. */
  clock: LimiterClock
}

/**
 * The in-process limiter reads Date.now(): the test freezes it and moves it (setSystemTime), so no window
 * depends on how fast the machine runs. Redis expires its counters on its own clock: the test waits for
 * real, with a window of seconds so the hits made right after the first one fall inside it however
 * loaded the machine is.
 */
interface LimiterClock {
  freeze(): void
  pass(ms: number): Promise<void>
  release(): void
}

const frozenClock: LimiterClock = {
  freeze: () => setSystemTime(new Date()),
  pass: async (ms) => void setSystemTime(new Date(Date.now() + ms)),
  release: () => setSystemTime(),
}
const realClock: LimiterClock = { freeze: () => {}, pass: (ms) => Bun.sleep(ms), release: () => {} }

/** The window the tests let end, and what they wait to be past it. */
const WINDOW_MS = 2_000
const PAST_WINDOW_MS = WINDOW_MS + 200

const allowedCount = (results: LimitResult[]) => results.filter((r) => r.allowed).length

function limiterContract(name: string, factory: LimiterFactory): void {
  describe(`Limiter contract: ${name}`, () => {
    // Unique per run: the Redis in CI is shared with other test files.
    const ns = `test:${crypto.randomUUID()}:`
    const opened = new Set<Limiter>()
    const track = (l: Limiter) => (opened.add(l), l)

    afterEach(async () => {
      factory.clock.release()
      await Promise.all([...opened].map((l) => l.close()))
      opened.clear()
    })

    it('allows exactly `limit` of 200 concurrent hits', async () => {
      const limiter = track(factory.open())
      const results = await Promise.all(Array.from({ length: 200 }, () => limiter.hit(`${ns}burst`, 30, 60_000)))
      expect(allowedCount(results), 'allowed of 200 hits at limit 30').toBe(30)
      for (const r of results) {
        expect(r.remaining, `remaining never negative: ${JSON.stringify(r)}`).toBeGreaterThanOrEqual(0)
        expect(r.limit).toBe(30)
        if (!r.allowed) expect(r.remaining, 'a refused hit has nothing left').toBe(0)
      }
      const remainingOfAllowed = results
        .filter((r) => r.allowed)
        .map((r) => r.remaining)
        .sort((x, y) => x - y)
      expect(remainingOfAllowed, 'each allowed hit sees its own remaining').toEqual(Array.from({ length: 30 }, (_, i) => i))
    })

    it('counts hits from two clients together (100 each, limit 30)', async () => {
      const a = track(factory.open())
      const b = track(factory.openSecond(a))
      const hits = (l: Limiter) => Array.from({ length: 100 }, () => l.hit(`${ns}shared`, 30, 60_000))
      const results = await Promise.all([...hits(a), ...hits(b)])
      expect(allowedCount(results), 'allowed of 200 hits across two clients').toBe(30)
    })

    it('reports remaining and resetAt (unix seconds at the end of the window)', async () => {
      const limiter = track(factory.open())
      const before = Date.now()
      const first = await limiter.hit(`${ns}fields`, 3, 10_000)
      const after = Date.now()
      expect(first, 'first hit').toMatchObject({ allowed: true, limit: 3, remaining: 2 })
      expect(first.resetAt, `resetAt ${first.resetAt} vs now ${before}`).toBeGreaterThanOrEqual(Math.floor((before + 10_000) / 1000))
      expect(first.resetAt).toBeLessThanOrEqual(Math.ceil((after + 10_000) / 1000))
      const second = await limiter.hit(`${ns}fields`, 3, 10_000)
      expect(second.remaining).toBe(1)
      expect(second.resetAt, 'the window does not slide with later hits').toBe(first.resetAt)
      await limiter.hit(`${ns}fields`, 3, 10_000)
      expect(await limiter.hit(`${ns}fields`, 3, 10_000), 'fourth hit').toMatchObject({ allowed: false, remaining: 0 })
    })

    it('keeps keys apart', async () => {
      const limiter = track(factory.open())
      await limiter.hit(`${ns}one`, 1, 60_000)
      expect((await limiter.hit(`${ns}two`, 1, 60_000)).allowed, 'another key has its own window').toBe(true)
    })

    it('starts a new window after windowMs', async () => {
      const limiter = track(factory.open())
      factory.clock.freeze()
      expect((await limiter.hit(`${ns}reset`, 1, WINDOW_MS)).allowed).toBe(true)
      expect((await limiter.hit(`${ns}reset`, 1, WINDOW_MS)).allowed, 'second hit in the window').toBe(false)
      await factory.clock.pass(PAST_WINDOW_MS)
      const next = await limiter.hit(`${ns}reset`, 1, WINDOW_MS)
      expect(next, 'first hit of the next window').toMatchObject({ allowed: true, remaining: 0 })
    })
  })
}

limiterContract('MemoryLimiter', { open: () => new MemoryLimiter(), openSecond: (first) => first, clock: frozenClock })

describe('MemoryLimiter housekeeping', () => {
  it('purges ended windows instead of growing without bound', async () => {
    const limiter = new MemoryLimiter()
    try {
      for (let i = 0; i < 1_000; i++) await limiter.hit(`ip:${i}`, 10, 1_000)
      expect(limiter.size).toBe(1_000)
      setSystemTime(new Date(Date.now() + 60_000)) // past every window and past the sweep interval
      await limiter.hit('ip:new', 10, 1_000)
      expect(limiter.size, 'only the window just opened is left').toBe(1)
    } finally {
      setSystemTime()
    }
  })
})

// Skipped, not silently passed, without Redis: the Redis half runs in CI's second pass, where
// scripts/services.sh provides Redis and sets REDIS_URL.
describe.skipIf(!REDIS_URL)('Redis (REDIS_URL)', () => redisTests(() => REDIS_URL!))

// The same on a three-node Redis Cluster started here (.ci/run installs redis-server for both passes): the
// Lua scripts name one key each, so a cluster runs them wherever that key's slot lives.
describe.skipIf(!canStartTopologies)('Redis Cluster, three nodes started by this test', () => {
  const cluster = startedForBlock(startRedisCluster, 'limiter-cluster-')
  redisTests(() => cluster().url)
})

function redisTests(urlOf: () => string): void {
  // Each limiter opens its own connection, so "two clients" really are two connections.
  limiterContract('RedisLimiter', { open: () => new RedisLimiter(urlOf()), openSecond: () => new RedisLimiter(urlOf()), clock: realClock })

  it('leaves every counter it creates with an expiry', async () => {
    const ns = `test:${crypto.randomUUID()}:`
    const limiter = new RedisLimiter(urlOf())
    const admin = adminClient(urlOf())
    try {
      await Promise.all(Array.from({ length: 50 }, (_, i) => limiter.hit(`${ns}${i % 10}`, 3, 60_000)))
      const keys = await keysOnEveryNode(admin, `${RATE_LIMIT_PREFIX}${ns}*`)
      expect(keys.length, 'one counter per limited key').toBe(10)
      for (const key of keys) {
        const pttl = await admin.pttl(key)
        expect(pttl, `PTTL ${key}`).toBeGreaterThan(0)
        expect(pttl, `PTTL ${key}`).toBeLessThanOrEqual(60_000)
      }
    } finally {
      await limiter.close()
      await admin.quit()
    }
  })

  it('gives an expiry back to a counter that lost it', async () => {
    const key = `test:${crypto.randomUUID()}`
    const limiter = new RedisLimiter(urlOf())
    const admin = adminClient(urlOf())
    try {
      await admin.set(RATE_LIMIT_PREFIX + key, '5') // as if written without expiry by something else
      const result = await limiter.hit(key, 10, 60_000)
      expect(result.remaining, 'the existing count is kept').toBe(4)
      expect(await admin.pttl(RATE_LIMIT_PREFIX + key), 'PTTL after the hit').toBeGreaterThan(0)
    } finally {
      await admin.del(RATE_LIMIT_PREFIX + key)
      await limiter.close()
      await admin.quit()
    }
  })
}
