// For purchases, sales and refunds the order key (type, externalOrderId) identifies
// the conversion, whatever the eventId: a retry is a 200 duplicate with the original id; a different
// value or currency is 409. Signups and leads keep the eventId rule.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, uniqueName } from '../../../test/support/api'
import { app, click, mirrorRows, newLink, otherPro, PATH, PIXEL, pro, proLink, rowsOf, services, setUp } from '../../../test/support/suites/conversions'
import { pixelInput } from './index'
import { recordConversion } from './service'

beforeAll(setUp, 30_000)

describe('the order key (type, externalOrderId) identifies a purchase, sale or refund', () => {
  const order = <T extends Record<string, unknown>>(extra: T = {} as T) => ({ conversionType: 'purchase', externalOrderId: uniqueName('order_'), value: 49.9, currency: 'EUR', ...extra })

  test('same order, another eventId, same value and currency: 200 duplicate with the original id, nothing new written', async () => {
    const linkId = await newLink(pro.id)
    const c = click(linkId)
    const report = { ...c, ...order({ eventId: 'evt-try-1' }) }
    const first = await call(app, 'POST', PATH, { body: report })
    expect(first.status, show(first)).toBe(201)
    const retry = await call(app, 'POST', PATH, { body: { ...report, eventId: 'evt-try-2', currency: 'eur' } })
    expect(retry.status, show(retry)).toBe(200)
    expect(retry.body).toMatchObject({ duplicate: true, conversionId: first.body.conversionId, clickId: c.clickId })
    // Without an eventId, or with other non-amount fields, it is still the same order.
    const { conversionType, externalOrderId, value, currency } = report
    const again = await call(app, 'POST', PATH, { token: pro.key, body: { clickId: c.clickId, conversionType, externalOrderId, value, currency, source: 'server', metadata: { retry: true } } })
    expect(again.status, show(again)).toBe(200)
    expect(again.body.conversionId).toBe(first.body.conversionId)
    expect((await rowsOf(linkId)).length).toBe(1)
    expect((await mirrorRows(linkId)).length).toBe(1)
  })

  test('sale and refund follow the same rule; the value compares as stored (numeric(24, 6))', async () => {
    const linkId = await newLink(pro.id)
    const c = click(linkId)
    for (const conversionType of ['sale', 'refund']) {
      const report = { ...c, ...order({ conversionType, value: 12.3456789, eventId: uniqueName('evt_') }) }
      const first = await call(app, 'POST', PATH, { body: report })
      expect(first.status, show(first)).toBe(201)
      const retry = await call(app, 'POST', PATH, { body: { ...report, eventId: uniqueName('evt_') } })
      expect(retry.status, show(retry)).toBe(200)
      expect(retry.body.conversionId).toBe(first.body.conversionId)
    }
    expect((await rowsOf(linkId)).length).toBe(2)
  })

  test('same order with a different value: 409, with a different currency: 409, nothing written', async () => {
    const linkId = await newLink(pro.id)
    const c = click(linkId)
    const report = { ...c, ...order({ eventId: uniqueName('evt_') }) }
    expect((await call(app, 'POST', PATH, { body: report })).status).toBe(201)
    const changes = [{ value: 49.91 }, { currency: 'USD' }, { value: undefined, currency: undefined }]
    for (const change of changes) {
      for (const eventId of [report.eventId, uniqueName('evt_')]) {
        const res = await call(app, 'POST', PATH, { body: { ...report, ...change, eventId } })
        expect(res.status, `${JSON.stringify(change)} ${show(res)}`).toBe(409)
        expect(res.body.error).toBe('CONVERSION_CONFLICT')
      }
    }
    expect((await rowsOf(linkId)).length).toBe(1)
    expect((await mirrorRows(linkId)).length).toBe(1)
  })

  test('eventId of one conversion and order key of another: 409, nothing written', async () => {
    const linkId = await newLink(pro.id)
    const c = click(linkId)
    const signupEvent = uniqueName('evt_')
    expect((await call(app, 'POST', PATH, { body: { ...c, conversionType: 'signup', eventId: signupEvent } })).status).toBe(201)
    const report = { ...c, ...order({ eventId: uniqueName('evt_') }) }
    expect((await call(app, 'POST', PATH, { body: report })).status).toBe(201)
    const mixed = await call(app, 'POST', PATH, { body: { ...report, eventId: signupEvent } })
    expect(mixed.status, show(mixed)).toBe(409)
    expect(mixed.body.error).toBe('CONVERSION_CONFLICT')
    expect((await rowsOf(linkId)).length).toBe(2)
  })

  test('signup and lead keep the eventId rule: another eventId is a new conversion, a reused externalOrderId with another eventId is 409', async () => {
    const linkId = await newLink(pro.id)
    const c = click(linkId)
    const a = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'signup', eventId: uniqueName('evt_') } })
    // Another click of the same link: one click signs up once (CONVERSIONS_PER_CLICK, test/security).
    const b = await call(app, 'POST', PATH, { body: { ...click(linkId), conversionType: 'signup', eventId: uniqueName('evt_') } })
    expect([a.status, b.status], show(b)).toEqual([201, 201])
    expect(b.body.conversionId).not.toBe(a.body.conversionId)
    const lead = { ...c, conversionType: 'lead', externalOrderId: uniqueName('lead_'), value: 5, currency: 'EUR' }
    expect((await call(app, 'POST', PATH, { body: { ...lead, eventId: uniqueName('evt_') } })).status).toBe(201)
    const relead = await call(app, 'POST', PATH, { body: { ...lead, eventId: uniqueName('evt_') } })
    expect(relead.status, show(relead)).toBe(409)
    expect((await rowsOf(linkId)).length).toBe(3)
  })

  test("the same externalOrderId in another account is that account's own order, not a duplicate", async () => {
    const externalOrderId = uniqueName('order_')
    const mine = await call(app, 'POST', PATH, { body: { ...click(proLink), ...order({ externalOrderId }) } })
    const theirs = await call(app, 'POST', PATH, { body: { ...click(await newLink(otherPro.id)), ...order({ externalOrderId }) } })
    expect([mine.status, theirs.status], show(theirs)).toEqual([201, 201])
    expect(theirs.body.conversionId).not.toBe(mine.body.conversionId)
  })

  test('50 concurrent reports of one order with 50 eventIds: one row, one 201 and 49 duplicates with its id', async () => {
    const linkId = await newLink(pro.id)
    const report = { ...click(linkId), ...order() }
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => call(app, 'POST', PATH, { body: { ...report, eventId: `evt-race-${i}` } })))
    const statuses = results.map((r) => r.status)
    expect(
      statuses.filter((s) => s === 201).length,
      results
        .map(show)
        .filter((s) => !s.startsWith('20'))
        .slice(0, 3)
        .join('\n'),
    ).toBe(1)
    expect(statuses.filter((s) => s === 200).length).toBe(49)
    expect(new Set(results.map((r) => r.body.conversionId)).size).toBe(1)
    expect((await rowsOf(linkId)).length).toBe(1)
    expect((await mirrorRows(linkId)).length).toBe(1)
  })

  test('pixel: the same order under another eventId is the original conversion, no second row', async () => {
    const linkId = await newLink(pro.id)
    const c = click(linkId)
    const params = (eventId: string) =>
      new URLSearchParams({ mu_click: c.clickId, mu_sig: c.clickSignature, conversionType: 'purchase', externalOrderId: 'px-order', value: '19.99', currency: 'USD', eventId })
    for (const eventId of ['px-a', 'px-b']) {
      const res = await call(app, 'GET', `${PIXEL}?${params(eventId)}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('image/gif')
    }
    const rows = await rowsOf(linkId)
    expect(rows.length).toBe(1)
    // The pixel swallows errors, so ask the path it takes directly: a duplicate, not a conflict.
    const result = await recordConversion(services, pixelInput(params('px-c'))!, null)
    expect(result).toEqual({ created: false, conversionId: rows[0]!.id, clickId: c.clickId })
    expect((await mirrorRows(linkId)).length).toBe(1)
  })
})
