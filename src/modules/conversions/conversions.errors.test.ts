// POST /api/analytics/link-conversion, field rules: 400 for each broken field, size limits, occurredAt
// bounds and the attribution window, 409 for the same key with another payload.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, uniqueName } from '../../../test/support/api'
import { ATTRIBUTION_WINDOW_MS } from './service'
import { app, click, PATH, proLink, setUp } from '../../../test/support/suites/conversions'

beforeAll(setUp, 30_000)

describe('POST /api/analytics/link-conversion: field rules', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['value without currency', { conversionType: 'lead', eventId: 'x', value: 5 }, 'currency'],
    ['negative value', { conversionType: 'lead', eventId: 'x', value: -1, currency: 'EUR' }, 'value'],
    ['currency not three letters', { conversionType: 'lead', eventId: 'x', value: 1, currency: 'EURO' }, 'currency'],
    ['currency with digits', { conversionType: 'lead', eventId: 'x', value: 1, currency: 'E1R' }, 'currency'],
    ['purchase without externalOrderId', { conversionType: 'purchase', eventId: 'x', value: 1, currency: 'EUR' }, 'externalOrderId'],
    ['sale without externalOrderId', { conversionType: 'sale', eventId: 'x' }, 'externalOrderId'],
    ['refund without externalOrderId', { conversionType: 'refund', eventId: 'x' }, 'externalOrderId'],
    ['neither eventId nor externalOrderId', { conversionType: 'signup' }, 'eventId'],
    ['conversionType missing', { eventId: 'x' }, 'conversionType'],
    ['conversionType 41', { conversionType: 'a'.repeat(41), eventId: 'x' }, 'conversionType'],
    ['externalOrderId 121', { conversionType: 'purchase', externalOrderId: 'o'.repeat(121) }, 'externalOrderId'],
    ['eventId 121', { conversionType: 'signup', eventId: 'e'.repeat(121) }, 'eventId'],
    ['source 81', { conversionType: 'signup', eventId: 'x', source: 's'.repeat(81) }, 'source'],
    ['metadata over 4000 serialized characters', { conversionType: 'signup', eventId: 'x', metadata: { k: 'm'.repeat(3995) } }, 'metadata'],
    ['occurredAt not a date-time', { conversionType: 'signup', eventId: 'x', occurredAt: 'yesterday' }, 'occurredAt'],
  ]
  for (const [name, fields, field] of cases) {
    test(`${name}: 400 naming ${field}`, async () => {
      const res = await call(app, 'POST', PATH, { body: { ...click(proLink), ...fields } })
      expect(res.status, show(res)).toBe(400)
      expect(res.body.error).toBe('VALIDATION_FAILED')
      expect(res.body.hint).toContain(field)
    })
  }

  test('clickId over 64 and clickSignature over 128: 400', async () => {
    const c = click(proLink)
    const long = await call(app, 'POST', PATH, { body: { ...c, clickId: 'A'.repeat(65), conversionType: 'signup', eventId: 'x' } })
    expect(long.status, show(long)).toBe(400)
    const sig = await call(app, 'POST', PATH, { body: { ...c, clickSignature: `k.${'A'.repeat(127)}`, conversionType: 'signup', eventId: 'x' } })
    expect(sig.status, show(sig)).toBe(400)
  })

  test('metadata of exactly 4000 serialized characters is accepted', async () => {
    const metadata = { k: 'm'.repeat(4000 - JSON.stringify({ k: '' }).length) }
    expect(JSON.stringify(metadata).length).toBe(4000)
    const res = await call(app, 'POST', PATH, { body: { ...click(proLink), conversionType: 'signup', eventId: uniqueName('evt_'), metadata } })
    expect(res.status, show(res)).toBe(201)
  })

  test('occurredAt before the click, or more than 5 minutes ahead: 400 OCCURRED_AT_INVALID', async () => {
    const c = click(proLink, 60_000)
    const before = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'signup', eventId: uniqueName('e'), occurredAt: new Date(Date.now() - 120_000).toISOString() } })
    expect(before.status, show(before)).toBe(400)
    expect(before.body.error).toBe('OCCURRED_AT_INVALID')
    const future = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'signup', eventId: uniqueName('e'), occurredAt: new Date(Date.now() + 6 * 60_000).toISOString() } })
    expect(future.status, show(future)).toBe(400)
    expect(future.body.error).toBe('OCCURRED_AT_INVALID')
  })

  test('occurredAt more than 30 days after the click: 400 CONVERSION_WINDOW_CLOSED', async () => {
    // Clicked 30 days minus 2 minutes ago; occurredAt 4 minutes ahead (allowed) is 30 days + 2 minutes after it.
    const c = click(proLink, ATTRIBUTION_WINDOW_MS - 2 * 60_000)
    const occurredAt = new Date(Date.now() + 4 * 60_000).toISOString()
    const res = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'signup', eventId: uniqueName('e'), occurredAt } })
    expect(res.status, show(res)).toBe(400)
    expect(res.body.error).toBe('CONVERSION_WINDOW_CLOSED')
    const inside = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'signup', eventId: uniqueName('e') } })
    expect(inside.status, show(inside)).toBe(201)
  })

  test('same key with a different payload: 409 CONVERSION_CONFLICT', async () => {
    const c = click(proLink)
    const eventId = uniqueName('evt_')
    const first = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'signup', eventId } })
    expect(first.status, show(first)).toBe(201)
    const other = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'signup', eventId, source: 'elsewhere' } })
    expect(other.status, show(other)).toBe(409)
    expect(other.body.error).toBe('CONVERSION_CONFLICT')
    const order = uniqueName('order_')
    const buy = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'purchase', externalOrderId: order, value: 5, currency: 'EUR' } })
    expect(buy.status, show(buy)).toBe(201)
    const changed = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'purchase', externalOrderId: order, value: 6, currency: 'EUR' } })
    expect(changed.status, show(changed)).toBe(409)
  })
})
