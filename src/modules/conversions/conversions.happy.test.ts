// POST /api/analytics/link-conversion, the happy paths (signature or API key, occurredAt, duplicates,
// concurrency), and revenueForLink over the recorded conversions.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, uniqueName } from '../../../test/support/api'
import { revenueForLink } from './revenue'
import { app, click, DAY, db, newLink, PATH, pro, proLink, rowsOf, setUp } from '../../../test/support/suites/conversions'

beforeAll(setUp, 30_000)

describe('POST /api/analytics/link-conversion: happy paths', () => {
  test('signature auth: 201 then a retry is 200 duplicate with the original conversionId', async () => {
    const linkId = await newLink(pro.id)
    const c = click(linkId)
    const body = { ...c, conversionType: 'purchase', value: 49.9, currency: 'eur', externalOrderId: 'order-1', metadata: { a: 1, b: [2] } }
    const first = await call(app, 'POST', PATH, { body })
    expect(first.status, show(first)).toBe(201)
    expect(first.body).toMatchObject({ success: true, duplicate: false, clickId: c.clickId })
    expect(first.body.conversionId).toStartWith('cv_')
    const again = await call(app, 'POST', PATH, { body: { ...body, metadata: { b: [2], a: 1 } } })
    expect(again.status, show(again)).toBe(200)
    expect(again.body).toMatchObject({ success: true, duplicate: true, conversionId: first.body.conversionId, clickId: c.clickId })
    const rows = await rowsOf(linkId)
    expect(rows.length).toBe(1)
    expect(rows[0]).toMatchObject({ accountId: pro.id, conversionType: 'purchase', currency: 'EUR', externalOrderId: 'order-1' })
    expect(Number(rows[0]!.value)).toBe(49.9)
  })

  test("API key of the link's account: no signature needed", async () => {
    const { clickId } = click(proLink)
    const res = await call(app, 'POST', PATH, { token: pro.key, body: { clickId, conversionType: 'signup', eventId: uniqueName('evt_') } })
    expect(res.status, show(res)).toBe(201)
    expect(res.headers.get('x-ratelimit-limit')).toBe('120')
  })

  test('occurredAt: defaults to now; 4 minutes ahead and 29 days after the click are accepted', async () => {
    const c = click(proLink, 29 * DAY)
    const ahead = new Date(Date.now() + 4 * 60_000).toISOString()
    const res = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'lead', eventId: uniqueName('evt_'), occurredAt: ahead } })
    expect(res.status, show(res)).toBe(201)
  })

  test('same externalOrderId under another conversionType is a new conversion (refund of a purchase)', async () => {
    const c = click(proLink)
    const order = uniqueName('order_')
    const buy = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'purchase', value: 10, currency: 'USD', externalOrderId: order } })
    const refund = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'refund', value: 10, currency: 'USD', externalOrderId: order } })
    expect(buy.status, show(buy)).toBe(201)
    expect(refund.status, show(refund)).toBe(201)
    expect(refund.body.conversionId).not.toBe(buy.body.conversionId)
  })

  test('100 concurrent identical reports: one row, one 201 and 99 duplicates with the same id', async () => {
    const linkId = await newLink(pro.id)
    const body = { ...click(linkId), conversionType: 'signup', eventId: 'evt-concurrent' }
    const results = await Promise.all(Array.from({ length: 100 }, () => call(app, 'POST', PATH, { body })))
    const statuses = results.map((r) => r.status)
    expect(
      statuses.filter((s) => s === 201).length,
      results
        .map(show)
        .filter((s) => !s.startsWith('20'))
        .slice(0, 3)
        .join('\n'),
    ).toBe(1)
    expect(statuses.filter((s) => s === 200).length).toBe(99)
    expect(new Set(results.map((r) => r.body.conversionId)).size).toBe(1)
    expect((await rowsOf(linkId)).length).toBe(1)
  })
})

describe('revenueForLink', () => {
  test('counts by type and currency; refunds are subtracted', async () => {
    const linkId = await newLink(pro.id)
    const c = click(linkId)
    const reports = [
      { conversionType: 'purchase', externalOrderId: 'r1', value: 50, currency: 'EUR' },
      { conversionType: 'purchase', externalOrderId: 'r2', value: 30.5, currency: 'EUR' },
      { conversionType: 'refund', externalOrderId: 'r1', value: 20, currency: 'EUR' },
      { conversionType: 'purchase', externalOrderId: 'r3', value: 10, currency: 'USD' },
      { conversionType: 'signup', eventId: 's1' },
    ]
    for (const report of reports) {
      const res = await call(app, 'POST', PATH, { body: { ...c, ...report } })
      expect(res.status, show(res)).toBe(201)
    }
    const result = await revenueForLink(db, linkId)
    expect(result.conversions).toEqual([
      { type: 'purchase', currency: 'EUR', count: 2, value: 80.5 },
      { type: 'purchase', currency: 'USD', count: 1, value: 10 },
      { type: 'refund', currency: 'EUR', count: 1, value: 20 },
      { type: 'signup', currency: null, count: 1, value: 0 },
    ])
    expect(result.revenue).toEqual([
      { currency: 'EUR', gross: 80.5, refunds: 20, net: 60.5 },
      { currency: 'USD', gross: 10, refunds: 0, net: 10 },
    ])
    expect((await revenueForLink(db, linkId, Date.now() + DAY)).conversions).toEqual([])
  })
})
