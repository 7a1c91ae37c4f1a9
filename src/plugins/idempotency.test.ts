// The idempotent macro on a tiny app of its own (test/support/suites/idempotency.ts): one run under
// concurrency, replays, reused and malformed keys, keys scoped to the credential, the option left out.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show } from '../../test/support/api'
import { createGuestSession } from '../modules/guest/service'
import { REPLAYED_HEADER } from './idempotency'
import { app, holdFor, newApiKey, post, proKey, runs, services, setUp } from '../../test/support/suites/idempotency'

describe('idempotent routes', () => {
  beforeAll(setUp)

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
    expect(Number(again.headers.get('x-ratelimit-remaining')), 'a replay is a request of its own').toBe(Number(first.headers.get('x-ratelimit-remaining')) - 1)
  })

  test('the same key with another body, query or path is 400 IDEMPOTENCY_KEY_REUSED and runs nothing', async () => {
    const key = crypto.randomUUID()
    expect((await post(app, '/t/count', proKey, key, { n: 1 })).status).toBe(200)
    const before = { count: runs.count, other: runs.other }
    const reused = [await post(app, '/t/count', proKey, key, { n: 2 }), await post(app, '/t/count?variant=b', proKey, key, { n: 1 }), await post(app, '/t/other', proKey, key, { n: 1 })]
    for (const r of reused) expect(r.body, show(r)).toMatchObject({ success: false, error: 'IDEMPOTENCY_KEY_REUSED' })
    for (const r of reused) expect(r.status).toBe(400)
    expect({ count: runs.count, other: runs.other }, 'nothing ran').toEqual(before)
  })

  test('another payload while the first is in flight is also 400, not 409', async () => {
    const key = crypto.randomUUID()
    const before = runs.held ?? 0
    const hold = holdFor(key)
    const first = post(app, '/t/held', proKey, key, { n: 1 })
    try {
      await hold.reached(1) // the first run holds the key until the hold opens
      const other = await post(app, '/t/held', proKey, key, { n: 2 })
      expect(other.status, show(other)).toBe(400)
      expect(other.body, show(other)).toMatchObject({ error: 'IDEMPOTENCY_KEY_REUSED' })
    } finally {
      hold.open()
    }
    const answered = await first
    expect(answered.status, show(answered)).toBe(200)
    expect(answered.body, show(answered)).toMatchObject({ n: 1 })
    expect((runs.held ?? 0) - before, 'only the first payload ran').toBe(1)
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
    expect(
      results.map((r) => r.status),
      results.map(show).join('\n'),
    ).toEqual([200, 200, 200, 400])
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
    const longest = await post(app, '/t/count', proKey, `${'~ '.repeat(127)}!`)
    expect(longest.status, `255 printable characters: ${show(longest)}`).toBe(200)
  })
})
