// One signed click, many conversions: a leaked mu_sig must not attribute without bound. A signed
// report adds at most CONVERSIONS_PER_CLICK conversions of a type to its click (default: one signup,
// one lead, a hundred of anything else), exact under concurrency; past it 429 CONVERSION_LIMIT. The
// link's own account reporting with its API key is not capped; retries of a recorded report are still
// 200 duplicates.
import { beforeAll, describe, expect, test } from 'bun:test'
import { conversions } from '../../src/db/schema'
import { eq } from 'drizzle-orm'
import { newAccount, newSignedClick, type TestAccount } from '../support/fixtures'
import { call, show, testApi, testConfig, uniqueName, type TestApp } from '../support/api'

const PATH = '/api/analytics/link-conversion'
let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
let pro: TestAccount

beforeAll(async () => {
  api = await testApi()
  app = api.app
  pro = await newAccount(api.deps.db, 'pro')
})

const signedClick = () => newSignedClick(api.deps.db, api.deps.config.clickSigningKeys, pro.id)

const count = async (clickId: string) => (await api.deps.db.select().from(conversions).where(eq(conversions.clickId, clickId))).length

describe('conversions attributed to one signed click', () => {
  test('a second signup of one click is 429 CONVERSION_LIMIT; a retry of the first is still its duplicate', async () => {
    const c = await signedClick()
    const first = { ...c, conversionType: 'signup', eventId: uniqueName('evt_') }
    expect((await call(app, 'POST', PATH, { body: first })).status).toBe(201)
    const second = await call(app, 'POST', PATH, { body: { ...c, conversionType: 'signup', eventId: uniqueName('evt_') } })
    expect(second.status, show(second)).toBe(429)
    expect(second.body, show(second)).toMatchObject({ error: 'CONVERSION_LIMIT', limit: 1, remaining: 0 })
    expect(second.headers.get('retry-after'), show(second)).not.toBeNull()
    const retry = await call(app, 'POST', PATH, { body: first })
    expect([retry.status, retry.body.duplicate], show(retry)).toEqual([200, true])
    // A lead is another type: its own cap.
    expect((await call(app, 'POST', PATH, { body: { ...c, conversionType: 'lead', eventId: uniqueName('evt_') } })).status).toBe(201)
    expect(await count(c.clickId)).toBe(2)
  })

  test('20 concurrent signed signups of one click: exactly one is recorded', async () => {
    const c = await signedClick()
    const results = await Promise.all(Array.from({ length: 20 }, () => call(app, 'POST', PATH, { body: { ...c, conversionType: 'signup', eventId: uniqueName('evt_') } })))
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(19).fill(429)])
    expect(await count(c.clickId)).toBe(1)
  })

  test("the API key of the link's own account is not capped", async () => {
    const c = await signedClick()
    for (let i = 0; i < 3; i++) {
      const res = await call(app, 'POST', PATH, { token: pro.key, body: { clickId: c.clickId, conversionType: 'signup', eventId: uniqueName('evt_') } })
      expect(res.status, show(res)).toBe(201)
    }
    expect(await count(c.clickId)).toBe(3)
  })

  test('purchases: a hundred by default, and CONVERSIONS_PER_CLICK sets the numbers', async () => {
    const capped = await testApi({ config: testConfig({ CONVERSIONS_PER_CLICK: 'signup:1,purchase:2,*:5' }) })
    const c = await signedClick()
    const order = () => ({ ...c, conversionType: 'purchase', externalOrderId: uniqueName('o_'), value: 10, currency: 'EUR' })
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await call(capped.app, 'POST', PATH, { body: order() })).status)
    expect(statuses).toEqual([201, 201, 429])
    expect(api.deps.config.conversionsPerClick).toMatchObject({ signup: 1, lead: 1, '*': 100 })
    expect(() => testConfig({ CONVERSIONS_PER_CLICK: 'signup:0' })).toThrow('CONVERSIONS_PER_CLICK')
  })
})
