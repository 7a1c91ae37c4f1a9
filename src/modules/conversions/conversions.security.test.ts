// POST /api/analytics/link-conversion, security: missing, flipped, foreign and unknown-key signatures,
// other accounts' and unknown API keys, replays after the window, gone and non-Pro links, the per-IP rate.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, uniqueIp, uniqueName } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { ATTRIBUTION_WINDOW_MS, CONVERSION_IP_RATE } from './service'
import { newId } from '../../lib/ids'
import { app, click, DAY, db, flip, newLink, otherPro, PATH, pro, proLink, rowsOf, setUp } from '../../../test/support/suites/conversions'

beforeAll(setUp, 30_000)

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
    const res = await call(app, 'POST', PATH, { body: { ...c, clickSignature: `zz${c.clickSignature.slice(c.clickSignature.indexOf('.'))}`, conversionType: 'signup', eventId: 'e3' } })
    expect(res.status, show(res)).toBe(401)
  })

  test('the API key of another account: 403 LINK_NOT_OWNED, even with a valid signature', async () => {
    const c = click(proLink)
    const res = await call(app, 'POST', PATH, { token: otherPro.key, body: { ...c, conversionType: 'signup', eventId: 'e4' } })
    expect(res.status, show(res)).toBe(403)
    expect(res.body.error).toBe('LINK_NOT_OWNED')
  })

  test('an unknown API key: 401', async () => {
    const res = await call(app, 'POST', PATH, { token: `mk_${'x'.repeat(43)}`, body: { ...click(proLink), conversionType: 'signup', eventId: 'e5' } })
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
