// GET /api/analytics/link-conversion/pixel: records like the JSON endpoint, and whatever the input or
// the state of Postgres, answers the same 200 GIF.
import { beforeAll, describe, expect, test } from 'bun:test'
import type { Db } from '../../db/client'
import { call, show, testApi, uniqueIp, type TestApp } from '../../../test/support/api'
import { PIXEL_GIF } from './index'
import { app, click, flip, newLink, PATH, PIXEL, pro, proLink, rowsOf, setUp } from '../../../test/support/suites/conversions'

beforeAll(setUp, 30_000)

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
