// conversion.created: a conversion recorded (by signature or by the account's key) commits one event with
// the conversion as recorded and its link; a duplicate report, and one refused, write none.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { app, click, db, newLink, PATH, setUp } from '../../../test/support/suites/conversions'
import { eventsOf, subscribe } from '../webhooks/events-kit.test'

beforeAll(setUp, 30_000)

async function subscribedLink(events = ['conversion.created']) {
  const owner = await newAccount(db, 'pro')
  await subscribe(app, owner.key, events)
  return { owner, linkId: await newLink(owner.id) }
}

describe('conversion.created', () => {
  test('a signed report: one event with the conversion as recorded; its duplicate none', async () => {
    const { owner, linkId } = await subscribedLink()
    const c = click(linkId)
    const body = { ...c, conversionType: 'Purchase', value: 49.9, currency: 'eur', externalOrderId: 'order-7', source: 'checkout', metadata: { plan: 'pro' } }
    const first = await call(app, 'POST', PATH, { body })
    expect(first.status, show(first)).toBe(201)
    expect((await call(app, 'POST', PATH, { body })).body.duplicate).toBe(true)
    const events = await eventsOf(db, owner.id)
    expect(events.map((e) => e.type)).toEqual(['conversion.created'])
    expect(events[0]!.data).toEqual({
      conversionId: first.body.conversionId,
      clickId: c.clickId,
      alias: expect.any(String),
      domain: 'sho.rt',
      conversionType: 'purchase',
      value: 49.9,
      currency: 'EUR',
      externalOrderId: 'order-7',
      eventId: null,
      occurredAt: expect.any(String),
      source: 'checkout',
      metadata: { plan: 'pro' },
      createdAt: events[0]!.created_at,
    })
  })

  test("a report with the account's key: one event; a refused report none", async () => {
    const { owner, linkId } = await subscribedLink()
    const { clickId } = click(linkId)
    const refused = await call(app, 'POST', PATH, { token: owner.key, body: { clickId, conversionType: 'signup', eventId: 'e-1', occurredAt: '2000-01-01T00:00:00Z' } })
    expect(refused.status, show(refused)).toBe(400)
    const res = await call(app, 'POST', PATH, { token: owner.key, body: { clickId, conversionType: 'signup', eventId: 'e-1' } })
    expect(res.status, show(res)).toBe(201)
    const events = await eventsOf(db, owner.id)
    expect(events.map((e) => [e.type, e.data.conversionId, e.data.value])).toEqual([['conversion.created', res.body.conversionId, null]])
  })

  test('an endpoint not subscribed to it gets no event', async () => {
    const { owner, linkId } = await subscribedLink(['link.created'])
    const res = await call(app, 'POST', PATH, { body: { ...click(linkId), conversionType: 'lead', eventId: 'e-2' } })
    expect(res.status, show(res)).toBe(201)
    expect(await eventsOf(db, owner.id)).toEqual([])
  })
})
