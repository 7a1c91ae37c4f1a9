import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { newClickId, signClickId } from '../../core/click-id'
import type { Db } from '../../db/client'
import { conversions, links } from '../../db/schema'
import { call, show, testApi, uniqueIp, type TestApp, uniqueName } from '../../../test/support/api'
import { newAccount, type TestAccount } from '../../../test/support/fixtures'
import { PIXEL_GIF } from './index'
import { conversionMirrorCounters, mirrorConversion, writeConversionMirror } from './mirror'
import { revenueForLink } from './revenue'
import { ATTRIBUTION_WINDOW_MS, CONVERSION_IP_RATE } from './service'
import type { Config } from '../../core/config'
import type { ClickHouseClient } from '@clickhouse/client'
import { newId } from '../../lib/ids'

const PATH = '/api/analytics/link-conversion'
const PIXEL = '/api/analytics/link-conversion/pixel'
const DAY = 24 * 3600 * 1000

let app: TestApp
let db: Db
let config: Config
let pro: TestAccount
let otherPro: TestAccount
let proLink: string
let clickhouse: ClickHouseClient

async function newLink(accountId: string | null): Promise<string> {
  const id = newId('link')
  await db.insert(links).values({ id, domain: 'sho.rt', alias: uniqueName('cv').slice(0, 20), url: 'https://shop.example/p', accountId })
  return id
}

function click(linkId: string, agoMs = 60_000) {
  const clickId = newClickId(linkId, Date.now() - agoMs)
  return { clickId, clickSignature: signClickId(clickId, config.clickSigningKeys) }
}

/** Flips one character of the HMAC part (not the key id). */
function flip(sig: string): string {
  const i = sig.length - 5
  return sig.slice(0, i) + (sig[i] === 'A' ? 'B' : 'A') + sig.slice(i + 1)
}

async function rowsOf(linkId: string) {
  return db.select().from(conversions).where(eq(conversions.linkId, linkId))
}

beforeAll(async () => {
  const t = await testApi()
  app = t.app
  db = t.deps.db
  config = t.deps.config
  clickhouse = t.deps.clickhouse
  pro = await newAccount(db, 'pro')
  otherPro = await newAccount(db, 'pro')
  proLink = await newLink(pro.id)
}, 30_000)

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

  test('API key of the link\'s account: no signature needed', async () => {
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
    expect(statuses.filter((s) => s === 201).length, results.map(show).filter((s) => !s.startsWith('20')).slice(0, 3).join('\n')).toBe(1)
    expect(statuses.filter((s) => s === 200).length).toBe(99)
    expect(new Set(results.map((r) => r.body.conversionId)).size).toBe(1)
    expect((await rowsOf(linkId)).length).toBe(1)
  })
})

describe('POST /api/analytics/link-conversion: security', () => {
  test('no key and no signature: 401', async () => {
    const res = await call(app, 'POST', PATH, { body: { clickId: click(proLink).clickId, conversionType: 'signup', eventId: 'e1' } })
    expect(res.status, show(res)).toBe(401)
    expect(res.body.error).toBe('UNAUTHORIZED')
  })

  test('one flipped character of the signature: 401, nothing recorded', async () => {
    const linkId = await newLink(pro.id)
    const c = click(linkId)
    const res = await call(app, 'POST', PATH, { body: { ...c, clickSignature: flip(c.clickSignature), conversionType: 'signup', eventId: 'e1' } })
    expect(res.status, show(res)).toBe(401)
    expect(res.body.error).toBe('CLICK_SIGNATURE_INVALID')
    expect((await rowsOf(linkId)).length).toBe(0)
  })

  test('the signature of another click: 401', async () => {
    const a = click(proLink)
    const b = click(proLink)
    const res = await call(app, 'POST', PATH, { body: { clickId: a.clickId, clickSignature: b.clickSignature, conversionType: 'signup', eventId: 'e2' } })
    expect(res.status, show(res)).toBe(401)
    expect(res.body.error).toBe('CLICK_SIGNATURE_INVALID')
  })

  test('a signature under an unknown key id: 401', async () => {
    const c = click(proLink)
    const res = await call(app, 'POST', PATH, { body: { ...c, clickSignature: 'zz' + c.clickSignature.slice(c.clickSignature.indexOf('.')), conversionType: 'signup', eventId: 'e3' } })
    expect(res.status, show(res)).toBe(401)
  })

  test('the API key of another account: 403 LINK_NOT_OWNED, even with a valid signature', async () => {
    const c = click(proLink)
    const res = await call(app, 'POST', PATH, { token: otherPro.key, body: { ...c, conversionType: 'signup', eventId: 'e4' } })
    expect(res.status, show(res)).toBe(403)
    expect(res.body.error).toBe('LINK_NOT_OWNED')
  })

  test('an unknown API key: 401', async () => {
    const res = await call(app, 'POST', PATH, { token: 'mk_' + 'x'.repeat(43), body: { ...click(proLink), conversionType: 'signup', eventId: 'e5' } })
    expect(res.status, show(res)).toBe(401)
  })

  test('replay after the window: a click older than 30 days is refused', async () => {
    const c = click(proLink, ATTRIBUTION_WINDOW_MS + DAY)
    const res = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'signup', eventId: uniqueName('evt_') } })
    expect(res.status, show(res)).toBe(400)
    expect(res.body.error).toBe('CONVERSION_WINDOW_CLOSED')
    // Backdating occurredAt into the window does not reopen it.
    const backdated = new Date(Date.now() - ATTRIBUTION_WINDOW_MS).toISOString()
    const again = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'signup', eventId: uniqueName('evt_'), occurredAt: backdated } })
    expect(again.status, show(again)).toBe(400)
    expect(again.body.error).toBe('CONVERSION_WINDOW_CLOSED')
  })

  test('link gone: 404; link not Pro: 403 PRO_REQUIRED', async () => {
    const gone = click(newId('link'))
    const res = await call(app, 'POST', PATH, { body: { ...gone, conversionType: 'signup', eventId: 'e6' } })
    expect(res.status, show(res)).toBe(404)
    expect(res.body.error).toBe('LINK_NOT_FOUND')
    const free = await newAccount(db, 'free')
    const freeClick = click(await newLink(free.id))
    const denied = await call(app, 'POST', PATH, { body: { ...freeClick, conversionType: 'signup', eventId: 'e7' } })
    expect(denied.status, show(denied)).toBe(403)
    expect(denied.body.error).toBe('PRO_REQUIRED')
    const byKey = await call(app, 'POST', PATH, { token: free.key, body: { clickId: freeClick.clickId, conversionType: 'signup', eventId: 'e8' } })
    expect(byKey.status, show(byKey)).toBe(403)
    expect(byKey.body.error).toBe('PRO_REQUIRED')
  })

  test('per-IP rate limit for signature calls: 429 with Retry-After', async () => {
    const ip = uniqueIp()
    const body = { ...click(proLink), clickSignature: 'k.bad', conversionType: 'signup', eventId: 'e9' }
    const results = await Promise.all(Array.from({ length: CONVERSION_IP_RATE.limit + 1 }, () => call(app, 'POST', PATH, { ip, body })))
    const limited = results.filter((r) => r.status === 429)
    expect(limited.length, show(results.at(-1)!)).toBe(1)
    expect(limited[0]!.body.error).toBe('RATE_LIMITED')
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0)
  })
})

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
    const sig = await call(app, 'POST', PATH, { body: { ...c, clickSignature: 'k.' + 'A'.repeat(127), conversionType: 'signup', eventId: 'x' } })
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

describe('GET /api/analytics/link-conversion/pixel', () => {
  function pixelUrl(params: Record<string, string>) {
    return `${PIXEL}?${new URLSearchParams(params)}`
  }

  async function expectGif(res: Awaited<ReturnType<typeof call>>) {
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/gif')
    expect(res.headers.get('cache-control')).toContain('no-store')
  }

  async function gifBytes(path: string, target: TestApp = app): Promise<Buffer> {
    const response = await target.handle(new Request(`http://localhost${path}`, { headers: { 'x-test-client-ip': uniqueIp() } }))
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('image/gif')
    expect(response.headers.get('cache-control')).toContain('no-store')
    return Buffer.from(await response.arrayBuffer())
  }

  test('a valid signed request records the conversion like the JSON endpoint, retry is a duplicate', async () => {
    const linkId = await newLink(pro.id)
    const c = click(linkId)
    const params = { mu_click: c.clickId, mu_sig: c.clickSignature, conversionType: 'purchase', externalOrderId: 'px-1', value: '19.99', currency: 'USD' }
    expect((await gifBytes(pixelUrl(params))).equals(PIXEL_GIF)).toBe(true)
    expect((await gifBytes(pixelUrl(params))).equals(PIXEL_GIF)).toBe(true)
    const rows = await rowsOf(linkId)
    expect(rows.length).toBe(1)
    expect(rows[0]).toMatchObject({ conversionType: 'purchase', externalOrderId: 'px-1', currency: 'USD' })
    expect(Number(rows[0]!.value)).toBe(19.99)
    // The JSON endpoint sees the same conversion.
    const json = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'purchase', externalOrderId: 'px-1', value: 19.99, currency: 'USD' } })
    expect(json.status, show(json)).toBe(200)
    expect(json.body.conversionId).toBe(rows[0]!.id)
  })

  test('one flipped character of mu_sig: the same GIF, nothing recorded', async () => {
    const linkId = await newLink(pro.id)
    const c = click(linkId)
    const bytes = await gifBytes(pixelUrl({ mu_click: c.clickId, mu_sig: flip(c.clickSignature), conversionType: 'signup', eventId: 'px-2' }))
    expect(bytes.equals(PIXEL_GIF)).toBe(true)
    expect((await rowsOf(linkId)).length).toBe(0)
  })

  test('whatever the input: 200 GIF (missing, invalid, oversized, other rules broken)', async () => {
    const c = click(proLink)
    const paths = [
      PIXEL,
      `${PIXEL}?mu_click=x`,
      `${PIXEL}?%zz=%`,
      pixelUrl({ mu_click: 'A'.repeat(5000), mu_sig: 's', conversionType: 't' }),
      pixelUrl({ mu_click: c.clickId, mu_sig: c.clickSignature, conversionType: 'purchase', eventId: 'no-order' }),
      pixelUrl({ mu_click: c.clickId, mu_sig: c.clickSignature, conversionType: 'lead', eventId: 'v', value: '-3', currency: 'EUR' }),
      pixelUrl({ mu_click: c.clickId, mu_sig: c.clickSignature, conversionType: 'lead', eventId: 'v', value: '3' }),
    ]
    for (const path of paths) {
      const res = await call(app, 'GET', path, { token: 'mk_garbage' })
      await expectGif(res)
    }
  })

  test('Postgres down: still 200 GIF', async () => {
    const broken = new Proxy({} as Db, {
      get: () => () => {
        throw new Error('database is down')
      },
    })
    const { app: downApp } = await testApi({ db: broken })
    const c = click(proLink)
    const bytes = await gifBytes(pixelUrl({ mu_click: c.clickId, mu_sig: c.clickSignature, conversionType: 'signup', eventId: 'down' }), downApp)
    expect(bytes.equals(PIXEL_GIF)).toBe(true)
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

describe('conversions_v1 (the ClickHouse mirror)', () => {
  type MirrorRow = { conversion_id: string; link_id: string; click_id: string; account_id: string; conversion_type: string; value: string; currency: string; is_refund: number; occurred_at: string }

  /** Every stored row of the link, without FINAL: a second copy would show. */
  async function mirrorRows(linkId: string): Promise<MirrorRow[]> {
    const result = await clickhouse.query({
      query: 'SELECT conversion_id, link_id, click_id, account_id, conversion_type, toString(value) AS value, currency, is_refund, occurred_at FROM conversions_v1 WHERE link_id = {linkId:String} ORDER BY occurred_at, conversion_id',
      query_params: { linkId },
      format: 'JSONEachRow',
    })
    return result.json<MirrorRow>()
  }

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
    expect(Date.parse(rows[0]!.occurred_at.replace(' ', 'T') + 'Z')).toBe(Date.parse(occurredAt))

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
