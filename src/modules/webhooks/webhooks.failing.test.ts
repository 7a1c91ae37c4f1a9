// An endpoint whose every attempt has failed for three days is disabled, its pending deliveries failed,
// and its account mailed once (upkeep.ts disableFailingEndpoints, run by the dispatcher). A delivered
// attempt ends the streak; turning the endpoint back on starts it afresh. The dispatcher's clock is the
// test's.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { webhookDeliveries, webhooks } from '../../db/schema'
import { outboxMailer } from '../../mail/mailer'
import { call, show, type TestApp } from '../../../test/support/api'
import { newAccount, type TestAccount } from '../../../test/support/fixtures'
import { newWebhook, startReceiver, testDispatcher, webhookApi, type Receiver } from '../../../test/support/webhooks'
import { DISABLE_AFTER_FAILING_MS } from './upkeep'

let api: Awaited<ReturnType<typeof webhookApi>>
let app: TestApp
const receivers: Receiver[] = []
const outbox = join(mkdtempSync(join(tmpdir(), 'webhook-failing-')), 'outbox.log')
const mailer = outboxMailer(outbox, 'Link service <no-reply@sho.rt>', () => {})
const mailsTo = (account: TestAccount) => {
  let text = ''
  try {
    text = readFileSync(outbox, 'utf8')
  } catch {}
  return text.split('===== DEVELOPMENT DELIVERY').filter((entry) => entry.includes(`To: ${account.id.toLowerCase()}@example.test`))
}

beforeAll(async () => {
  // Retries a minute apart (±10 %): 70 s on, each event is due again.
  api = await webhookApi({ WEBHOOK_RETRY_SCHEDULE: '60,60,60' })
  app = api.app
})
afterAll(() => {
  for (const receiver of receivers) receiver.stop()
})

/** An account with an endpoint answering as `answer` says, a clock of its own and a dispatcher on it. */
async function failingEndpoint(answer: (index: number) => number) {
  const human = await newAccount(api.deps.db)
  const receiver = startReceiver()
  receivers.push(receiver)
  receiver.answer((_, index) => answer(index))
  const webhook = await newWebhook(app, human.key, receiver.url, ['link.created'])
  const clock = { now: Date.now() + 1000 }
  const dispatcher = testDispatcher(api.deps.db, api.deps.config, { only: [webhook.id], now: () => clock.now, mailer })
  const shorten = async () => {
    const res = await call(app, 'POST', '/api/v1/shorten', { token: human.key, body: { url: 'https://example.com/failing' } })
    if (res.status !== 200) throw new Error(show(res))
  }
  const stored = async () => (await api.deps.db.select().from(webhooks).where(eq(webhooks.id, webhook.id)))[0]!
  return { human, receiver, webhook, clock, dispatcher, shorten, stored }
}

describe('an endpoint failing for three days', () => {
  test('is disabled at three days, not before; its pending deliveries fail; its account is mailed once', async () => {
    const { human, webhook, clock, dispatcher, shorten, stored, receiver } = await failingEndpoint(() => 500)
    await shorten()
    const started = clock.now
    expect(await dispatcher.runDue()).toBe(1)
    expect((await stored()).failingSince?.getTime()).toBe(started)
    // A later failure keeps the streak's start.
    clock.now += 70_000
    await shorten()
    expect(await dispatcher.runDue()).toBe(2)
    expect((await stored()).failingSince?.getTime()).toBe(started)

    clock.now = started + DISABLE_AFTER_FAILING_MS - 1000
    expect(await dispatcher.disableFailing()).toEqual([])
    expect((await stored()).status).toBe('active')
    clock.now = started + DISABLE_AFTER_FAILING_MS
    expect(await dispatcher.disableFailing()).toEqual([webhook.id])
    expect(await dispatcher.disableFailing(), 'once').toEqual([])

    const got = await call(app, 'GET', `/api/v1/webhooks/${webhook.id}`, { token: human.key })
    expect(got.body.data.status, show(got)).toBe('disabled')
    const deliveries = await api.deps.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, webhook.id))
    expect(deliveries.map((d) => d.status)).toEqual(['failed', 'failed'])
    const mails = mailsTo(human)
    expect(mails.length, mails.join('\n')).toBe(1)
    expect(mails[0]).toContain(`Subject: Webhook disabled: ${receiver.url}`)
    expect(mails[0]).toContain(new Date(started).toISOString())
    expect(mails[0]).toContain(`/api/v1/webhooks/${webhook.id}`)
  })

  test('a delivered attempt ends the streak; turning a disabled endpoint back on starts afresh', async () => {
    const { clock, dispatcher, shorten, stored, human, webhook } = await failingEndpoint((index) => (index === 0 ? 500 : 204))
    await shorten()
    const started = clock.now
    await dispatcher.runDue()
    expect((await stored()).failingSince?.getTime()).toBe(started)
    clock.now += 70_000
    await dispatcher.runDue()
    expect((await stored()).failingSince).toBeNull()
    clock.now = started + DISABLE_AFTER_FAILING_MS
    expect(await dispatcher.disableFailing()).toEqual([])

    // Failing again, disabled, then enabled: its old failures do not count.
    await api.deps.db
      .update(webhooks)
      .set({ failingSince: new Date(started), status: 'disabled' })
      .where(eq(webhooks.id, webhook.id))
    const enabled = await call(app, 'PATCH', `/api/v1/webhooks/${webhook.id}`, { token: human.key, body: { status: 'active' } })
    expect(enabled.status, show(enabled)).toBe(200)
    expect((await stored()).failingSince).toBeNull()
    expect(await dispatcher.disableFailing()).toEqual([])
  })
})
