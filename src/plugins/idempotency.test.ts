// The idempotent macro on a tiny app of its own: the real auth plugin, real credentials in Postgres (or
// PGlite), the real idempotency store (Redis or in-process) and counting routes, so "ran once" is a
// number we can read.
import { beforeAll, describe, expect, test } from 'bun:test'
import { Elysia, status, t } from 'elysia'
import { call, show, testApi, type CallResult, type TestApp } from '../../test/support/api'
import { newAccount } from '../../test/support/fixtures'
import type { Plan } from '../db/schema'
import { apiKeyAuthenticator } from '../modules/account/keys'
import { createGuestSession, guestAuthenticator } from '../modules/guest/service'
import { createServices, type Services } from '../services'
import { createAuth } from './auth'
import { body } from './body'
import { ApiError, errors } from './errors'
import { idempotencyPlugin, REPLAYED_HEADER, type IdempotencyOptions } from './idempotency'

async function newApiKey(services: Services, plan: Plan): Promise<string> {
  return (await newAccount(services.db, plan)).key
}

/** Each route counts how often its handler really ran. */
function countingApp(services: Services, options: IdempotencyOptions = {}) {
  const runs: Record<string, number> = {}
  const ran = (name: string) => (runs[name] = (runs[name] ?? 0) + 1)
  const routes = new Elysia({ name: 'test.idempotency' })
    .use(errors)
    .use(createAuth([guestAuthenticator(services), apiKeyAuthenticator(services)]).plugin)
    .use(idempotencyPlugin(services, options))
    .post(
      '/t/count',
      async ({ body }) => {
        const run = ran('count')
        await Bun.sleep(100) // long enough that concurrent retries meet the first one in flight
        return { success: true, data: { n: body.n, run, at: crypto.randomUUID() } }
      },
      { guestOrAccount: true, idempotent: true, body: t.Object({ n: t.Number() }) },
    )
    .post('/t/other', () => ({ run: ran('other') }), { guestOrAccount: true, idempotent: true, body: t.Object({ n: t.Number() }) })
    // idempotent listed before auth: the principal must still be there.
    .post('/t/created', () => status(201, { run: ran('created') }), { idempotent: true, account: true })
    .delete('/t/empty', ({ set }) => {
      ran('empty')
      set.status = 204
    }, { guestOrAccount: true, idempotent: true })
    .post('/t/missing', () => {
      ran('missing')
      throw new ApiError('LINK_NOT_FOUND')
    }, { guestOrAccount: true, idempotent: true })
    .post('/t/flaky', () => {
      if (ran('flaky') === 1) throw new Error('first run fails (test)')
      return { ok: true }
    }, { guestOrAccount: true, idempotent: true })
    .post('/t/quota', () => {
      ran('quota')
      throw new ApiError('RATE_LIMITED', undefined, { retryAfter: 5 })
    }, { guestOrAccount: true, idempotent: true })
    .post('/t/hang', async () => {
      ran('hang')
      await Bun.sleep(600)
      return { ok: true }
    }, { guestOrAccount: true, idempotent: true })
    .post('/t/off', () => ({ run: ran('off') }), { idempotent: false, guestOrAccount: true })
    .post('/t/noauth', () => ({ run: ran('noauth') }), { idempotent: true })
  const app = new Elysia().use(errors).use(body).use(routes)
  return { app: app as TestApp, runs }
}

const post = (app: TestApp, path: string, token: string, key: string | undefined, body: unknown = { n: 1 }) =>
  call(app, 'POST', path, { token, body, headers: key === undefined ? {} : { 'idempotency-key': key } })

describe('idempotent routes', () => {
  let services: Services
  let app: TestApp
  let runs: Record<string, number>
  let proKey: string

  beforeAll(async () => {
    services = createServices((await testApi()).deps)
    ;({ app, runs } = countingApp(services))
    // Pro: 120 requests a minute, room for the 50-request burst and its retries.
    proKey = await newApiKey(services, 'pro')
  })

  test('50 concurrent requests with one key run the handler exactly once', async () => {
    const key = crypto.randomUUID()
    const before = runs.count ?? 0
    const results = await Promise.all(Array.from({ length: 50 }, () => post(app, '/t/count', proKey, key, { n: 7 })))
    expect((runs.count ?? 0) - before, 'handler runs').toBe(1)
    const ok = results.filter((r) => r.status === 200)
    const busy = results.filter((r) => r.status === 409)
    expect(ok.length + busy.length, results.map(show).join('\n')).toBe(50)
    expect(ok.filter((r) => r.headers.get(REPLAYED_HEADER) === null).length, 'exactly one original answer').toBe(1)
    for (const r of ok) expect(r.text, 'every 200 is the one result').toBe(ok[0]!.text)
    for (const r of busy) {
      expect(r.body, show(r)).toMatchObject({ success: false, error: 'IDEMPOTENCY_IN_PROGRESS' })
      expect(r.headers.get('retry-after'), show(r)).toBe('1')
    }
    // Once the first has finished, every retry is the replay.
    const retry = await post(app, '/t/count', proKey, key, { n: 7 })
    expect(retry.status, show(retry)).toBe(200)
    expect(retry.text).toBe(ok[0]!.text)
    expect((runs.count ?? 0) - before, 'handler runs after the retry').toBe(1)
  })

  test('a retry replays the identical status and body, marked Idempotent-Replayed, with its own rate headers', async () => {
    const key = crypto.randomUUID()
    const first = await post(app, '/t/count', proKey, key, { n: 1 })
    expect(first.status, show(first)).toBe(200)
    expect(first.headers.get(REPLAYED_HEADER), 'the first answer is not a replay').toBeNull()
    const again = await post(app, '/t/count', proKey, key, { n: 1 })
    expect(again.status, show(again)).toBe(200)
    expect(again.text, 'byte-identical body').toBe(first.text)
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'))
    expect(again.headers.get(REPLAYED_HEADER)).toBe('true')
    expect(Number(again.headers.get('x-ratelimit-remaining')), 'a replay is a request of its own').toBe(
      Number(first.headers.get('x-ratelimit-remaining')) - 1,
    )
  })

  test('the same key with another body, query or path is 400 IDEMPOTENCY_KEY_REUSED and runs nothing', async () => {
    const key = crypto.randomUUID()
    expect((await post(app, '/t/count', proKey, key, { n: 1 })).status).toBe(200)
    const before = { count: runs.count, other: runs.other }
    const reused = [
      await post(app, '/t/count', proKey, key, { n: 2 }),
      await post(app, '/t/count?dry_run=true', proKey, key, { n: 1 }),
      await post(app, '/t/other', proKey, key, { n: 1 }),
    ]
    for (const r of reused) expect(r.body, show(r)).toMatchObject({ success: false, error: 'IDEMPOTENCY_KEY_REUSED' })
    for (const r of reused) expect(r.status).toBe(400)
    expect({ count: runs.count, other: runs.other }, 'nothing ran').toEqual(before)
  })

  test('another payload while the first is in flight is also 400, not 409', async () => {
    const key = crypto.randomUUID()
    const first = post(app, '/t/count', proKey, key, { n: 1 })
    await Bun.sleep(20)
    const other = await post(app, '/t/count', proKey, key, { n: 2 })
    expect(other.body, show(other)).toMatchObject({ error: 'IDEMPOTENCY_KEY_REUSED' })
    expect((await first).status).toBe(200)
  })

  test('the key is scoped to the credential: another key or a guest with the same key runs on its own', async () => {
    const key = crypto.randomUUID()
    const otherKey = await newApiKey(services, 'pro')
    const { token: guest } = await createGuestSession(services)
    const before = runs.count ?? 0
    const results = [
      await post(app, '/t/count', proKey, key, { n: 1 }),
      await post(app, '/t/count', otherKey, key, { n: 1 }),
      await post(app, '/t/count', guest, key, { n: 1 }),
      await post(app, '/t/count', otherKey, key, { n: 2 }), // reused within otherKey's own scope
    ]
    expect(results.map((r) => r.status), results.map(show).join('\n')).toEqual([200, 200, 200, 400])
    expect((runs.count ?? 0) - before, 'one run per credential').toBe(3)
    expect(new Set(results.slice(0, 3).map((r) => r.body.data.run)).size, 'three different results').toBe(3)
  })

  test('without the header the route runs every time', async () => {
    const before = runs.count ?? 0
    await post(app, '/t/count', proKey, undefined)
    await post(app, '/t/count', proKey, undefined)
    expect((runs.count ?? 0) - before).toBe(2)
  })

  test('idempotent: false is the option left out, and keeps the auth of the route', async () => {
    const key = crypto.randomUUID()
    const anonymous = await call(app, 'POST', '/t/off', { headers: { 'idempotency-key': key } })
    expect(anonymous.status, show(anonymous)).toBe(401)
    await post(app, '/t/off', proKey, key)
    await post(app, '/t/off', proKey, key)
    expect(runs.off).toBe(2)
  })

  test('a malformed key is 400 VALIDATION_FAILED naming the header', async () => {
    for (const key of ['', 'x'.repeat(256), 'caf\u00e9', 'tab\there']) {
      const r = await post(app, '/t/count', proKey, key)
      expect(r.status, `${JSON.stringify(key.slice(0, 20))}: ${show(r)}`).toBe(400)
      expect(r.body, show(r)).toMatchObject({ error: 'VALIDATION_FAILED', hint: expect.stringContaining('idempotency-key') })
    }
    const longest = await post(app, '/t/count', proKey, '~ '.repeat(127) + '!')
    expect(longest.status, `255 printable characters: ${show(longest)}`).toBe(200)
  })

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
