// conversions_v1, the ClickHouse mirror of conversions: written once (duplicates and retried writes add
// no row), value and currency columns, and ClickHouse failing without failing the report.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, testApi, uniqueName } from '../../../test/support/api'
import { conversionMirrorCounters, mirrorConversion, writeConversionMirror } from './mirror'
import type { ClickHouseClient } from '@clickhouse/client'
import { app, click, clickhouse, mirrorRows, newLink, PATH, pro, rowsOf, setUp } from '../../../test/support/suites/conversions'

beforeAll(setUp, 30_000)

describe('conversions_v1 (the ClickHouse mirror)', () => {
  test('a created conversion is mirrored once; a duplicate report and a retried write add no row', async () => {
    const linkId = await newLink(pro.id)
    const c = click(linkId)
    const occurredAt = new Date(Date.now() - 1000).toISOString()
    const body = { ...c, conversionType: 'Refund', value: 12.345678, currency: 'eur', externalOrderId: 'order-m1', occurredAt }
    const first = await call(app, 'POST', PATH, { body })
    expect(first.status, show(first)).toBe(201)
    const again = await call(app, 'POST', PATH, { body })
    expect(again.status, show(again)).toBe(200)
    const rows = await mirrorRows(linkId)
    expect(rows.length).toBe(1)
    expect(rows[0]).toMatchObject({
      conversion_id: first.body.conversionId,
      link_id: linkId,
      click_id: c.clickId,
      account_id: pro.id,
      conversion_type: 'refund',
      value: '12.345678',
      currency: 'EUR',
      is_refund: 1,
    })
    expect(Date.parse(`${rows[0]!.occurred_at.replace(' ', 'T')}Z`)).toBe(Date.parse(occurredAt))

    // The same write retried (same conversion id = same dedup token): still one row.
    const [pg] = await rowsOf(linkId)
    const row = {
      conversionId: pg!.id,
      linkId,
      clickId: pg!.clickId,
      accountId: pg!.accountId,
      conversionType: pg!.conversionType,
      value: pg!.value,
      currency: pg!.currency,
      occurredAtMs: pg!.occurredAt.getTime(),
      createdAtMs: pg!.createdAt.getTime(),
    }
    await writeConversionMirror(clickhouse, row)
    expect(await mirrorConversion(clickhouse, row)).toBe(true)
    expect((await mirrorRows(linkId)).length).toBe(1)
  })

  test('no value: value 0 and empty currency; concurrent identical reports: one row', async () => {
    const linkId = await newLink(pro.id)
    const body = { ...click(linkId), conversionType: 'signup', eventId: 'evt-mirror' }
    const results = await Promise.all(Array.from({ length: 20 }, () => call(app, 'POST', PATH, { body })))
    expect(results.filter((r) => r.status === 201).length).toBe(1)
    const rows = await mirrorRows(linkId)
    expect(rows.length).toBe(1)
    expect(rows[0]).toMatchObject({ conversion_type: 'signup', value: '0', currency: '', is_refund: 0 })
  })

  test('ClickHouse failing: still 201 (Postgres holds it), the failure is counted', async () => {
    const failing = new Proxy({} as ClickHouseClient, {
      get: () => async () => {
        throw new Error('clickhouse is down')
      },
    })
    const { app: downApp } = await testApi({ clickhouse: failing })
    const linkId = await newLink(pro.id)
    const before = conversionMirrorCounters.writeFailures
    const res = await call(downApp, 'POST', PATH, { body: { ...click(linkId), conversionType: 'signup', eventId: uniqueName('evt_') } })
    expect(res.status, show(res)).toBe(201)
    expect(conversionMirrorCounters.writeFailures).toBe(before + 1)
    expect((await rowsOf(linkId)).length).toBe(1)
    expect((await mirrorRows(linkId)).length).toBe(0)
  })
})
