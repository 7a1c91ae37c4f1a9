// The dispatcher (dispatcher.ts) against real receivers on loopback: what a receiver gets verifies with
// the npm package standardwebhooks; retries keep the webhook-id and follow the schedule, then fail; a
// rotated secret signs beside the new one for 24 h; every attempt resolves the host again (a name that
// turns private is refused); a slow receiver holds its own slots only; a stop hands a claimed delivery
// back. Time is injected where a test moves it; the receivers' clock is the real one.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, inArray } from 'drizzle-orm'
import { webhookDeliveries, webhookEvents } from '../../db/schema'
import { call, show, testApi, type TestApp } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { METRICS_TEST_TOKEN, parseMetrics } from '../../../test/support/metrics'
import { until } from '../../../test/support/wait'
import { EVENT_RETENTION_MS } from './upkeep'
import { writeEvents } from './outbox'
import { gate, newWebhook, startReceiver, testDispatcher, verified, webhookApi, webhookConfig, type Receiver } from '../../../test/support/webhooks'

let api: Awaited<ReturnType<typeof webhookApi>>
let app: TestApp
const receivers: Receiver[] = []
const receiver = () => {
  const started = startReceiver()
  receivers.push(started)
  return started
}

beforeAll(async () => {
  api = await webhookApi({ METRICS_TOKEN: METRICS_TEST_TOKEN })
  app = api.app
})
afterAll(() => {
  for (const started of receivers) started.stop()
})

async function ping(token: string, webhookId: string): Promise<{ id: string; event_id: string }> {
  const res = await call(app, 'POST', `/api/v1/webhooks/${webhookId}/test`, { token })
  if (res.status !== 201) throw new Error(show(res))
  return res.body.data.delivery
}

async function deliveriesOf(token: string, webhookId: string) {
  const res = await call(app, 'GET', `/api/v1/webhooks/${webhookId}/deliveries`, { token })
  if (res.status !== 200) throw new Error(show(res))
  return res.body.data.deliveries as Record<string, any>[]
}

describe('delivery', () => {
  test('a ping arrives signed the Standard Webhooks way, with the pinned headers and body, and is recorded delivered', async () => {
    const human = await newAccount(api.deps.db)
    const target = receiver()
    const { id, secret } = await newWebhook(app, human.key, target.url)
    const queued = await ping(human.key, id)
    await testDispatcher(api.deps.db, api.deps.config, { only: [id] }).runDue()
    expect(target.received).toHaveLength(1)
    const [got] = target.received
    const event = verified(secret, got!)
    expect(event).toMatchObject({ id: queued.event_id, type: 'ping', data: { webhook_id: id } })
    expect(Object.keys(JSON.parse(got!.body))).toEqual(['id', 'type', 'created_at', 'data'])
    expect(got!.headers['webhook-id']).toBe(queued.event_id)
    expect(got!.headers['content-type']).toBe('application/json')
    expect(got!.headers['user-agent']).toStartWith('linkservice-webhooks/')
    expect(Math.abs(Number(got!.headers['webhook-timestamp']) - Date.now() / 1000), got!.headers['webhook-timestamp']).toBeLessThan(300)
    expect(got!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
    const [delivery] = await deliveriesOf(human.key, id)
    expect(delivery).toMatchObject({ id: queued.id, status: 'delivered', attempt: 1, response_status: 204, error: null, next_attempt_at: null })
    expect(delivery!.duration_ms).toBeGreaterThanOrEqual(0)
  })

  test('retries follow WEBHOOK_RETRY_SCHEDULE with the same webhook-id, and the delivery fails after the last', async () => {
    const config = webhookConfig({ WEBHOOK_RETRY_SCHEDULE: '5,30' })
    const human = await newAccount(api.deps.db)
    const target = receiver()
    target.answer(() => 500)
    const { id, secret } = await newWebhook(app, human.key, target.url)
    const queued = await ping(human.key, id)
    let clock = Date.now()
    const dispatcher = testDispatcher(api.deps.db, config, { now: () => clock, only: [id] })

    await dispatcher.runDue()
    let [delivery] = await deliveriesOf(human.key, id)
    expect(delivery).toMatchObject({ status: 'pending', attempt: 1, response_status: 500, error: 'answered HTTP 500' })
    const due = Date.parse(delivery!.next_attempt_at)
    // 5 s, give or take the 10 % jitter.
    expect(due - clock).toBeGreaterThanOrEqual(4_500)
    expect(due - clock).toBeLessThanOrEqual(5_500)
    await dispatcher.runDue()
    expect(target.received, 'not due yet').toHaveLength(1)

    clock = due
    await dispatcher.runDue()
    ;[delivery] = await deliveriesOf(human.key, id)
    expect(delivery).toMatchObject({ status: 'pending', attempt: 2 })
    clock = Date.parse(delivery!.next_attempt_at)
    await dispatcher.runDue()
    ;[delivery] = await deliveriesOf(human.key, id)
    expect(delivery).toMatchObject({ status: 'failed', attempt: 3, response_status: 500, next_attempt_at: null })

    expect(target.received).toHaveLength(3)
    for (const got of target.received) {
      expect(got.headers['webhook-id']).toBe(queued.event_id)
      expect(verified(secret, got).id).toBe(queued.event_id)
    }
    // The body is the same bytes every time; only the timestamp and signature move.
    expect(new Set(target.received.map((got) => got.body)).size).toBe(1)
  })

  test('a 2xx after a failure ends the retries: delivered on the second attempt', async () => {
    const human = await newAccount(api.deps.db)
    const target = receiver()
    target.answer((_, index) => (index === 0 ? 503 : 200))
    const { id } = await newWebhook(app, human.key, target.url)
    await ping(human.key, id)
    let clock = Date.now()
    const dispatcher = testDispatcher(api.deps.db, api.deps.config, { now: () => clock, only: [id] })
    await dispatcher.runDue()
    const [failed] = await deliveriesOf(human.key, id)
    clock = Date.parse(failed!.next_attempt_at)
    await dispatcher.runDue()
    const [delivery] = await deliveriesOf(human.key, id)
    expect(delivery).toMatchObject({ status: 'delivered', attempt: 2, response_status: 200, error: null, next_attempt_at: null })
    expect(target.received.map((got) => got.headers['webhook-id'])).toEqual([delivery!.event_id, delivery!.event_id])
  })
})

describe('secret rotation', () => {
  /** The webhook's secret, then a rotation made `hoursAgo` hours ago (the API's clock), then a ping sent now. */
  async function rotatedAgo(hoursAgo: number) {
    const past = await testApi({ config: api.deps.config, now: () => Date.now() - hoursAgo * 3_600_000 })
    const human = await newAccount(api.deps.db)
    const target = receiver()
    const { id, secret: old } = await newWebhook(app, human.key, target.url)
    const rotated = await call(past.app, 'POST', `/api/v1/webhooks/${id}/rotate-secret`, { token: human.key })
    expect(rotated.status, show(rotated)).toBe(200)
    await ping(human.key, id)
    await testDispatcher(api.deps.db, api.deps.config, { only: [id] }).runDue()
    expect(target.received).toHaveLength(1)
    return { old, current: rotated.body.data.secret as string, got: target.received[0]! }
  }

  test('for 24 hours both secrets sign: the header carries two signatures, and each secret verifies', async () => {
    const { old, current, got } = await rotatedAgo(23)
    expect(got.headers['webhook-signature']!.split(' ')).toHaveLength(2)
    expect(verified(current, got).type).toBe('ping')
    expect(verified(old, got).type).toBe('ping')
  })

  test('after 24 hours only the new secret signs', async () => {
    const { old, current, got } = await rotatedAgo(25)
    expect(got.headers['webhook-signature']!.split(' ')).toHaveLength(1)
    expect(verified(current, got).type).toBe('ping')
    expect(() => verified(old, got)).toThrow()
  })
})

describe('targets', () => {
  test('each attempt resolves the host again: a name that turns private (DNS rebinding) is refused, and nothing reaches it', async () => {
    const human = await newAccount(api.deps.db)
    const target = receiver()
    const port = new URL(target.url).port
    const { id } = await newWebhook(app, human.key, `http://rebind.example:${port}/hook`)
    let answer = ['127.0.0.1']
    const asked: string[] = []
    const dispatcher = testDispatcher(api.deps.db, api.deps.config, {
      only: [id],
      resolve: async (host) => {
        asked.push(host)
        return answer
      },
    })
    const first = await ping(human.key, id)
    await dispatcher.runDue()
    expect(target.received).toHaveLength(1)
    expect(target.received[0]!.headers.host).toBe(`rebind.example:${port}`)

    for (const addresses of [['10.0.0.7'], ['127.0.0.1', '10.0.0.7'], ['169.254.169.254']]) {
      answer = addresses
      const again = await call(app, 'POST', `/api/v1/webhooks/${id}/deliveries/${first.id}/redeliver`, { token: human.key })
      await dispatcher.runDue()
      const [delivery] = await deliveriesOf(human.key, id)
      expect(delivery!.id, show(again)).toBe(again.body.data.delivery.id)
      expect(delivery, addresses.join(' ')).toMatchObject({ status: 'pending', attempt: 1, response_status: null, error: 'http is used on loopback addresses only' })
    }
    expect(target.received).toHaveLength(1)
    expect(asked).toEqual(['rebind.example', 'rebind.example', 'rebind.example', 'rebind.example'])
    await call(app, 'DELETE', `/api/v1/webhooks/${id}`, { token: human.key })
  })

  test('without WEBHOOKS_ALLOW_PRIVATE_TARGETS a name resolving to loopback or a private address is refused at delivery', async () => {
    const strict = await testApi()
    const human = await newAccount(api.deps.db)
    const { id } = await newWebhook(strict.app, human.key, 'https://hooks.example.test/x')
    const dispatcher = testDispatcher(api.deps.db, strict.deps.config, { only: [id], resolve: async () => ['127.0.0.1'] })
    await ping(human.key, id)
    await dispatcher.runDue()
    const [delivery] = await deliveriesOf(human.key, id)
    expect(delivery).toMatchObject({ status: 'pending', attempt: 1, response_status: null, error: 'the host is not a public address' })
    await call(app, 'DELETE', `/api/v1/webhooks/${id}`, { token: human.key })
  })
})

describe('the sealing key', () => {
  test('a process with another INTERNAL_SECRET leaves the endpoint alone; one that opens its secret sends it', async () => {
    const human = await newAccount(api.deps.db)
    const target = receiver()
    const { id, secret } = await newWebhook(app, human.key, target.url)
    const queued = await ping(human.key, id)
    const other = webhookConfig({ INTERNAL_SECRET: 'another-deployment-secret-0123456789abcd' })
    expect(await testDispatcher(api.deps.db, other, { only: [id] }).runDue()).toBe(0)
    expect(await testDispatcher(api.deps.db, api.deps.config, { only: [id] }).runDue()).toBe(1)
    expect(target.received.map((got) => verified(secret, got).id)).toEqual([queued.event_id])
    const [delivery] = await deliveriesOf(human.key, id)
    expect(delivery).toMatchObject({ status: 'delivered', attempt: 1 })
  })
})

describe('concurrency and shutdown', () => {
  test("a slow receiver holds two slots: another account's deliveries go out while it has not answered", async () => {
    const slowHuman = await newAccount(api.deps.db)
    const quickHuman = await newAccount(api.deps.db)
    const slow = receiver()
    const quick = receiver()
    const held = gate()
    slow.answer(async () => {
      await held.wait
      return 200
    })
    const slowHook = await newWebhook(app, slowHuman.key, slow.url)
    const quickHook = await newWebhook(app, quickHuman.key, quick.url)
    // The slow endpoint's events are older, and more than the dispatcher's 16 slots: without the bound
    // per endpoint they would take every slot before the quick one's.
    const SLOW_EVENTS = 18
    for (let i = 0; i < SLOW_EVENTS; i++) await ping(slowHuman.key, slowHook.id)
    await ping(quickHuman.key, quickHook.id)
    const dispatcher = testDispatcher(api.deps.db, api.deps.config, { pollMs: 20, only: [slowHook.id, quickHook.id] })
    dispatcher.start()
    try {
      await until(
        () => slow.received.length === 2,
        () => `the slow receiver got ${slow.received.length} requests`,
      )
      await until(() => quick.received.length === 1, 'the quick receiver got its ping while the slow one holds two')
      expect(slow.received).toHaveLength(2)
      const waiting = await call(app, 'GET', `/api/v1/webhooks/${slowHook.id}/deliveries?limit=${SLOW_EVENTS}`, { token: slowHuman.key })
      expect(
        waiting.body.data.deliveries.map((d: { status: string }) => d.status),
        show(waiting),
      ).toEqual(Array(SLOW_EVENTS).fill('pending'))
      held.open()
      await until(
        () => slow.received.length === SLOW_EVENTS,
        () => `the slow receiver got ${slow.received.length} of ${SLOW_EVENTS}`,
      )
    } finally {
      held.open()
      await dispatcher.stop()
    }
  })

  test('stopping aborts an attempt in flight and hands its delivery back, uncounted; the next dispatcher sends it', async () => {
    const human = await newAccount(api.deps.db)
    const target = receiver()
    const held = gate()
    target.answer(async (_, index) => {
      if (index === 0) await held.wait
      return 204
    })
    const { id, secret } = await newWebhook(app, human.key, target.url)
    const queued = await ping(human.key, id)
    const first = testDispatcher(api.deps.db, api.deps.config, { pollMs: 20, only: [id] })
    first.start()
    await until(() => target.received.length === 1, 'the first attempt reached the receiver')
    await first.stop()
    held.open()
    const [row] = await api.deps.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.id, queued.id)))
    expect(row).toMatchObject({ status: 'pending', attempt: 0, lockedUntil: null, error: null })

    await testDispatcher(api.deps.db, api.deps.config, { only: [id] }).runDue()
    const [delivery] = await deliveriesOf(human.key, id)
    expect(delivery).toMatchObject({ status: 'delivered', attempt: 1 })
    expect(target.received.map((got) => verified(secret, got).id)).toEqual([queued.event_id, queued.event_id])
  })
})

describe('retention', () => {
  test('events older than 30 days go with their deliveries, unless one is still pending', async () => {
    const human = await newAccount(api.deps.db)
    const { id } = await newWebhook(app, human.key, 'https://hooks.example.com/kept')
    const write = (at: number) => api.deps.db.transaction((tx) => writeEvents(tx, human.id, 'ping', [id], [{ webhook_id: id }], new Date(at)))
    const old = Date.now() - EVENT_RETENTION_MS - 60_000
    const [done] = await write(old)
    const [waiting] = await write(old)
    const [fresh] = await write(Date.now())
    await api.deps.db
      .update(webhookDeliveries)
      .set({ status: 'delivered', nextAttemptAt: null })
      .where(inArray(webhookDeliveries.eventId, [done!, fresh!]))
    expect(await testDispatcher(api.deps.db, api.deps.config).prune()).toBeGreaterThanOrEqual(1)
    const left = await api.deps.db
      .select({ id: webhookEvents.id })
      .from(webhookEvents)
      .where(inArray(webhookEvents.id, [done!, waiting!, fresh!]))
    expect(left.map((row) => row.id).sort()).toEqual([waiting!, fresh!].sort())
    const deliveries = await api.deps.db.select({ eventId: webhookDeliveries.eventId }).from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, id))
    expect(deliveries.map((row) => row.eventId).sort()).toEqual([waiting!, fresh!].sort())
    await call(app, 'DELETE', `/api/v1/webhooks/${id}`, { token: human.key })
  })
})

describe('/metrics', () => {
  test('attempts by outcome and the outbox are exported', async () => {
    const res = await call(app, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TEST_TOKEN}` } })
    expect(res.status, show(res)).toBe(200)
    const samples = parseMetrics(res.text)
    // Earlier tests of this file delivered, retried and failed attempts in this process.
    expect(samples.get('linkservice_webhook_attempts_total{outcome="delivered"}')).toBeGreaterThan(0)
    expect(samples.get('linkservice_webhook_attempts_total{outcome="retry"}')).toBeGreaterThan(0)
    expect(samples.get('linkservice_webhook_attempts_total{outcome="failed"}')).toBeGreaterThan(0)
    expect(samples.has('linkservice_webhook_outbox_pending')).toBe(true)
    expect(samples.has('linkservice_webhook_outbox_oldest_due_seconds')).toBe(true)
  })
})
