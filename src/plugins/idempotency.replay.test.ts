// The idempotent macro: which answers are stored and replayed (other statuses, empty bodies, 4xx) and
// which give the key up (5xx, 429); a route without auth; the lease and the ttl on a clock the test moves.
import { afterEach, beforeAll, describe, expect, setSystemTime, test } from 'bun:test'
import { call, show, testApi, type CallResult, type TestApp } from '../../test/support/api'
import { createServices, type Services } from '../services'
import { REPLAYED_HEADER } from './idempotency'
import { MemoryIdempotencyStore } from '../adapters/memory-idempotency'
import { app, countingApp, newApiKey, post, proKey, runs, setUp, type HoldPoint } from '../../test/support/suites/idempotency'

describe('idempotent routes', () => {
  beforeAll(setUp)

  test('status codes other than 200 and empty bodies are replayed as they were (auth listed after idempotent)', async () => {
    const key = crypto.randomUUID()
    const created = [await post(app, '/t/created', proKey, key, undefined), await post(app, '/t/created', proKey, key, undefined)]
    expect(created.map((r) => r.status)).toEqual([201, 201])
    expect(created[1]!.text).toBe(created[0]!.text)
    expect(created[1]!.headers.get(REPLAYED_HEADER)).toBe('true')

    const emptyKey = crypto.randomUUID()
    const remove = () => call(app, 'DELETE', '/t/empty', { token: proKey, headers: { 'idempotency-key': emptyKey } })
    const [a, b] = [await remove(), await remove()]
    expect([a.status, b.status, a.text, b.text], `${show(a)} / ${show(b)}`).toEqual([204, 204, '', ''])
    expect(b.headers.get(REPLAYED_HEADER)).toBe('true')
    expect(runs.empty).toBe(1)
  })

  test('a 4xx answer is stored and replayed; the handler does not run again', async () => {
    const key = crypto.randomUUID()
    const before = runs.missing ?? 0
    const [first, second] = [await post(app, '/t/missing', proKey, key), await post(app, '/t/missing', proKey, key)]
    expect([first.status, second.status]).toEqual([404, 404])
    expect(second.text, show(second)).toBe(first.text)
    expect(second.headers.get(REPLAYED_HEADER)).toBe('true')
    expect(second.headers.get('x-ratelimit-limit'), 'rate headers on a replayed error too').toBe('120')
    expect((runs.missing ?? 0) - before).toBe(1)
  })

  test('a 5xx gives the key up, so the retry runs', async () => {
    const key = crypto.randomUUID()
    const first = await post(app, '/t/flaky', proKey, key)
    expect(first.status, show(first)).toBe(500)
    const retry = await post(app, '/t/flaky', proKey, key)
    expect(retry.status, show(retry)).toBe(200)
    expect(retry.headers.get(REPLAYED_HEADER)).toBeNull()
    expect(runs.flaky).toBe(2)
  })

  test('a 429 (nothing done, retry later) gives the key up too', async () => {
    const key = crypto.randomUUID()
    const before = runs.quota ?? 0
    const [first, second] = [await post(app, '/t/quota', proKey, key), await post(app, '/t/quota', proKey, key)]
    expect([first.status, second.status], show(second)).toEqual([429, 429])
    expect(second.headers.get(REPLAYED_HEADER)).toBeNull()
    expect((runs.quota ?? 0) - before).toBe(2)
  })

  test('a route without auth refuses the option loudly (500), never sharing keys across callers', async () => {
    const r = await call(app, 'POST', '/t/noauth', { headers: { 'idempotency-key': 'k' } })
    expect(r.status, show(r)).toBe(500)
  })
})

describe('lease and expiry', () => {
  // The in-process store on a frozen clock (setSystemTime): the lease and the ttl run out when the test
  // moves the clock, never because a loaded machine was slow. That Redis expires its records on time is
  // the store's contract test (src/adapters/idempotency.contract.test.ts).
  const LEASE_MS = 2_000
  const TTL_MS = 5_000
  let services: Services
  let app: TestApp
  let runs: Record<string, number>
  let holdFor: (key: string) => HoldPoint
  let key: string

  beforeAll(async () => {
    services = createServices({ ...(await testApi()).deps, idempotency: new MemoryIdempotencyStore() })
    ;({ app, runs, holdFor } = countingApp(services, { leaseMs: LEASE_MS, ttlMs: TTL_MS }))
    key = await newApiKey(services, 'pro')
  })
  afterEach(() => setSystemTime())

  const moveClock = (ms: number) => setSystemTime(new Date(Date.now() + ms))

  test('a request that outlives its lease no longer blocks the key', async () => {
    setSystemTime(new Date())
    const idem = crypto.randomUUID()
    const hold = holdFor(idem)
    const before = runs.held ?? 0
    const first = post(app, '/t/held', key, idem)
    let after: Promise<CallResult> | undefined
    try {
      await hold.reached(1) // the first run holds the key, and keeps its handler until the hold opens
      const during = await post(app, '/t/held', key, idem)
      expect(during.status, show(during)).toBe(409)
      moveClock(LEASE_MS + 1)
      after = post(app, '/t/held', key, idem)
      // The key runs again (a second run enters the handler) rather than answering at once.
      const answeredFirst = await Promise.race([hold.reached(2).then(() => null), after])
      expect(answeredFirst && show(answeredFirst), 'answered without running, though the lease ran out').toBeNull()
    } finally {
      hold.open()
    }
    const results: CallResult[] = [await first, await after!]
    expect(
      results.map((r) => r.status),
      results.map(show).join('\n'),
    ).toEqual([200, 200])
    expect((runs.held ?? 0) - before, 'the lease ran out, so the key ran again').toBe(2)
  })

  test('a stored response is forgotten after the ttl', async () => {
    setSystemTime(new Date())
    const idem = crypto.randomUUID()
    await post(app, '/t/count', key, idem)
    moveClock(TTL_MS - 1)
    const replayed = await post(app, '/t/count', key, idem)
    expect(replayed.headers.get(REPLAYED_HEADER), `within the ttl: ${show(replayed)}`).toBe('true')
    const before = runs.count!
    moveClock(2)
    const fresh = await post(app, '/t/count', key, idem)
    expect(fresh.headers.get(REPLAYED_HEADER), `past the ttl: ${show(fresh)}`).toBeNull()
    expect(runs.count).toBe(before + 1)
  })
})
