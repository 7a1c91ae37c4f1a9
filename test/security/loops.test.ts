// Hostile destinations: every spelling of "back to this service" is refused with 400
// DESTINATION_LOOPS when a link is created (guest and account), changed, or created in bulk. A link
// that looped would redirect to itself until the client gave up, counting a click at every hop.
import { beforeAll, describe, expect, test } from 'bun:test'
import { newAccount, newDomain, type TestAccount } from '../support/fixtures'
import { call, newGuestToken, show, testApi, type TestApp } from '../support/api'

/** testConfig: short domain sho.rt (base https://sho.rt), API https://api.sho.rt. */
const LOOPS = [
  'http://127.0.0.1:3000/x',
  'http://[::1]:3000/x',
  'http://0.0.0.0:3000/x',
  'http://127.1/x',
  'http://2130706433/x',
  'http://0x7f000001/x',
  'http://0177.0.0.1/x',
  'http://[::ffff:127.0.0.1]/x',
  'http://[::]/x',
  'http://169.254.169.254/latest/meta-data',
  'http://[fe80::1]/x',
  'http://localhost:3001/x',
  'https://sho.rt/abc',
  'https://SHO.RT./abc',
  'https://api.sho.rt/api/v1/links',
]

let app: TestApp
let db: Awaited<ReturnType<typeof testApi>>['deps']['db']
let account: TestAccount
let foreignDomain: string

beforeAll(async () => {
  const api = await testApi()
  app = api.app
  db = api.deps.db
  account = await newAccount(db)
  // A verified custom domain of ANOTHER account: served by this service all the same.
  foreignDomain = await newDomain(db, (await newAccount(db)).id)
})

function expectLoop(res: Awaited<ReturnType<typeof call>>, url: string) {
  expect(res.status, `${url}: ${show(res)}`).toBe(400)
  expect(res.body.error, `${url}: ${show(res)}`).toBe('DESTINATION_LOOPS')
}

describe('loop refusal', () => {
  test.each(LOOPS)('POST /shorten with an API key refuses %s', async (url) => {
    expectLoop(await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url } }), url)
  })

  test('POST /shorten refuses a verified custom domain of any account, and guests are refused too', async () => {
    const url = `https://${foreignDomain}/promo`
    expectLoop(await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url } }), url)
    const guest = await newGuestToken(app)
    expectLoop(await call(app, 'POST', '/api/v1/shorten', { token: guest, body: { url } }), url)
    expectLoop(await call(app, 'POST', '/api/v1/shorten', { token: guest, body: { url: 'http://2130706433/' } }), 'guest decimal loopback')
  })

  test("an unverified custom domain is somebody else's host, not ours: allowed", async () => {
    const pending = await newDomain(db, (await newAccount(db)).id, { verified: false })
    const res = await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: `https://${pending}/x` } })
    expect(res.status, show(res)).toBe(200)
  })

  test('PATCH /links/{alias} refuses a loop and leaves the link as it was', async () => {
    const made = await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: 'https://example.com/a' } })
    expect(made.status, show(made)).toBe(200)
    const alias = made.body.data.alias
    for (const url of ['http://[::ffff:7f00:1]/', `https://${foreignDomain}/`]) {
      expectLoop(await call(app, 'PATCH', `/api/v1/links/${alias}`, { token: account.key, body: { url } }), url)
    }
    const after = await call(app, 'GET', `/api/v1/links/${alias}`, { token: account.key })
    expect(after.body.data.full_url, show(after)).toBe('https://example.com/a')
  })

  test('POST /links/bulk refuses each looping item alone', async () => {
    const res = await call(app, 'POST', '/api/v1/links/bulk', {
      token: account.key,
      body: { links: [{ url: 'https://example.com/ok' }, { url: 'http://127.1/' }, { url: `https://${foreignDomain}/` }] },
    })
    expect(res.status, show(res)).toBe(200)
    const results = res.body.data.results as { index: number; success: boolean; error?: string }[]
    expect(
      results.map((r) => [r.index, r.success, r.error ?? null]),
      show(res),
    ).toEqual([
      [0, true, null],
      [1, false, 'DESTINATION_LOOPS'],
      [2, false, 'DESTINATION_LOOPS'],
    ])
  })
})
