// The idempotent macro: which answers are stored and replayed (other statuses, empty bodies, 4xx) and
// which give the key up (5xx, 429); a route without auth; the lease and the ttl with short durations.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, testApi, type CallResult, type TestApp } from '../../test/support/api'
import { createServices, type Services } from '../services'
import { REPLAYED_HEADER } from './idempotency'
import { app, countingApp, newApiKey, post, proKey, runs, setUp } from '../../test/support/suites/idempotency'

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

describe('lease and expiry (short durations)', () => {
  let services: Services
  let app: TestApp
  let runs: Record<string, number>
  let key: string

  beforeAll(async () => {
    services = createServices((await testApi()).deps)
    ;({ app, runs } = countingApp(services, { leaseMs: 200, ttlMs: 500 }))
    key = await newApiKey(services, 'pro')
  })

  test('a request that outlives its lease no longer blocks the key', async () => {
    const idem = crypto.randomUUID()
    const hanging = post(app, '/t/hang', key, idem)
    await Bun.sleep(50)
    const during = await post(app, '/t/hang', key, idem)
    expect(during.status, show(during)).toBe(409)
    await Bun.sleep(250) // past the 200 ms lease; the first request still runs
    const after = post(app, '/t/hang', key, idem)
    const results: CallResult[] = [await hanging, await after]
    expect(results.map((r) => r.status), results.map(show).join('\n')).toEqual([200, 200])
    expect(runs.hang, 'the lease ran out, so the key ran again').toBe(2)
  })

  test('a stored response is forgotten after the ttl', async () => {
    const idem = crypto.randomUUID()
    await post(app, '/t/count', key, idem)
    const replayed = await post(app, '/t/count', key, idem)
    expect(replayed.headers.get(REPLAYED_HEADER), show(replayed)).toBe('true')
    const before = runs.count!
    await Bun.sleep(600)
    const fresh = await post(app, '/t/count', key, idem)
    expect(fresh.headers.get(REPLAYED_HEADER), show(fresh)).toBeNull()
    expect(runs.count).toBe(before + 1)
  })
})
