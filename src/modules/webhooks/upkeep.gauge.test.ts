// The outbox gauges of /metrics (upkeep.ts measureOutbox) on each engine: a delivery due and not yet
// sent is counted, with how long it has waited. The query binds a time, which each driver must take.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, show } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { newWebhook, startReceiver, webhookApi, type Receiver } from '../../../test/support/webhooks'
import { figures } from './metrics'
import { measureOutbox } from './upkeep'

let api: Awaited<ReturnType<typeof webhookApi>>
let receiver: Receiver

beforeAll(async () => {
  api = await webhookApi()
  receiver = startReceiver()
})
afterAll(() => receiver.stop())

describe('measureOutbox', () => {
  test('a test delivery no dispatcher has sent is pending, and 30 s later has waited at least 30 s', async () => {
    const account = await newAccount(api.deps.db)
    const { id } = await newWebhook(api.app, account.key, receiver.url)
    const sent = await call(api.app, 'POST', `/api/v1/webhooks/${id}/test`, { token: account.key })
    expect(sent.body.data.delivery.status, show(sent)).toBe('pending')
    figures.outboxPending = 0
    figures.oldestDueSeconds = 0
    await measureOutbox(api.deps.db, Date.now() + 30_000)
    expect(figures.outboxPending).toBeGreaterThanOrEqual(1)
    expect(figures.oldestDueSeconds).toBeGreaterThanOrEqual(29)
  })
})
