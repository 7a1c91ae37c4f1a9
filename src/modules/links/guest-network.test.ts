// Guest links per network and UTC day, across every guest token from the network: a spammer farming
// tokens from one /24 (or /56) gets no more than the day's allowance; another network, and accounts,
// are not counted. A refused destination costs nothing.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, testApi, testConfig, type TestApp } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'

const PER_DAY = 3
let app: TestApp
let api: Awaited<ReturnType<typeof testApi>>

beforeAll(async () => {
  api = await testApi({ config: testConfig({ GUEST_LINKS_PER_NETWORK_PER_DAY: String(PER_DAY) }) })
  app = api.app
}, 120_000)

/** A /24 (and a /56) no other test uses. */
function freshNetworks() {
  const r = () => Math.floor(Math.random() * 250) + 1
  const v4 = `${(r() % 90) + 11}.${r()}.${r()}`
  const v6 = `2001:db8:${r().toString(16)}${r().toString(16)}:${(r() & 0xfe).toString(16)}00`
  return { v4: (host: number) => `${v4}.${host}`, v6: (host: number) => `${v6}::${host.toString(16)}` }
}

/** A fresh guest token from `ip`, and one link shortened with it from the same address. */
async function guestLink(ip: string, url = 'https://example.com/guest') {
  const token = await call(app, 'POST', '/api/v1/guest/token', { ip })
  if (token.status !== 201 && token.status !== 200) throw new Error(show(token))
  return call(app, 'POST', '/api/v1/shorten', { token: token.body.data.guest_token, body: { url }, ip })
}

describe('guest links per network and day', () => {
  test(`${PER_DAY} a day from one IPv4 /24 across many tokens, then 429 GUEST_NETWORK_LIMIT with Retry-After to midnight; another /24 goes on`, async () => {
    const net = freshNetworks()
    for (let i = 0; i < PER_DAY; i++) {
      const made = await guestLink(net.v4(10 + i))
      expect(made.status, `link ${i + 1}: ${show(made)}`).toBe(200)
    }
    const refused = await guestLink(net.v4(200))
    expect(refused.status, show(refused)).toBe(429)
    expect(refused.body).toMatchObject({ error: 'GUEST_NETWORK_LIMIT', limit: PER_DAY, remaining: 0, upgrade_url: expect.stringContaining('/guest/register') })
    const retryAfter = Number(refused.headers.get('retry-after'))
    const untilMidnight = Math.ceil((86_400_000 - (Date.now() % 86_400_000)) / 1000)
    expect(retryAfter, show(refused)).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(untilMidnight + 1)
    expect((await guestLink(freshNetworks().v4(10))).status).toBe(200)
  })

  test('IPv6 counts per /56; an IPv4-mapped address counts in its IPv4 /24', async () => {
    const net = freshNetworks()
    for (let i = 0; i < PER_DAY; i++) expect((await guestLink(net.v6(i + 1))).status).toBe(200)
    expect((await guestLink(net.v6(0xffff))).status).toBe(429)
    const four = freshNetworks()
    for (let i = 0; i < PER_DAY; i++) expect((await guestLink(four.v4(i + 1))).status).toBe(200)
    expect((await guestLink(`::ffff:${four.v4(99)}`)).status).toBe(429)
  })

  test('a refused destination is not counted; an account from the same network is not limited', async () => {
    const net = freshNetworks()
    for (let i = 0; i < 5; i++) expect((await guestLink(net.v4(i + 1), 'javascript:alert(1)')).status).toBe(400)
    for (let i = 0; i < PER_DAY; i++) expect((await guestLink(net.v4(i + 50))).status).toBe(200)
    const account = await newAccount(api.deps.db)
    for (let i = 0; i < PER_DAY + 2; i++) {
      const made = await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: 'https://example.com/acct' }, ip: net.v4(9) })
      expect(made.status, show(made)).toBe(200)
    }
  })
})
