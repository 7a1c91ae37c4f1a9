// POST /account/upgrade and the local provider's checkout page (the default without STRIPE_SECRET_KEY).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { decodeCachedLink, linkCacheKey } from '../../../core/link-cache'
import { accounts, checkouts } from '../../db/schema'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'
import { IDEMPOTENCY_HEADER, REPLAYED_HEADER } from '../../plugins/idempotency'
import { call, newGuestToken, show, testApi, testConfig, type TestApp } from '../../../test/support/api'
import { signUp } from '../../../test/support/signup'

let sink: SmtpSink
let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

beforeAll(async () => {
  sink = await startSmtpSink()
  api = await testApi({ config: testConfig({ SMTP_URL: sink.url }) })
  app = api.app
})
afterAll(() => sink.close())

const PAGE = 'https://api.sho.rt/billing/'

/** The path of a checkout URL, for app.handle. */
const pathOf = (checkoutUrl: string) => new URL(checkoutUrl).pathname

async function planOf(email: string) {
  const [row] = await api.deps.db.select().from(accounts).where(eq(accounts.email, email))
  return row!
}

async function cachedPro(alias: string) {
  const raw = await api.deps.kv.get(linkCacheKey('sho.rt', alias))
  return raw === null ? null : decodeCachedLink(raw)?.pro
}

describe('POST /api/v1/account/upgrade (local provider)', () => {
  test('returns a short checkout URL and the price; the plan changes only when the checkout is confirmed', async () => {
    const { apiKey, email, aliases } = await signUp(app, sink, { links: 2 })
    const res = await call(app, 'POST', '/api/v1/account/upgrade', { token: apiKey })
    expect(res.status, show(res)).toBe(200)
    const { data, meta } = res.body
    expect(data, show(res)).toMatchObject({ interval: 'monthly', price: '9.00 USD' })
    expect(data.checkout_url, show(res)).toBe(`${PAGE}${data.checkout_id}`)
    expect(data.checkout_id, show(res)).toMatch(/^co_[A-Za-z0-9_-]{22}$/)
    expect(data.checkout_url.length, show(res)).toBeLessThan(80)
    expect(meta.account_type, show(res)).toBe('free')
    expect(meta.notices, show(res)).toContainEqual(expect.objectContaining({ type: 'billing' }))
    expect((await planOf(email)).plan, 'not Pro at upgrade time').toBe('free')
    expect(await cachedPro(aliases[0]!)).toBeUndefined()

    const page = await call(app, 'GET', pathOf(data.checkout_url))
    expect(page.status, page.text).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    expect(page.text).toContain('9.00 USD')
    expect(page.text).toContain('<form method="post"')
    expect(page.text).not.toContain(email)

    const state = await call(app, 'GET', `/api/v1/account/upgrade/${data.checkout_id}`, { token: apiKey })
    expect(state.status, show(state)).toBe(200)
    expect(state.body.data, show(state)).toMatchObject({ status: 'pending', provider: 'local', confirmed_at: null })

    const confirmed = await call(app, 'POST', pathOf(data.checkout_url))
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(confirmed.text).toContain('You are on Pro')
    const account = await planOf(email)
    expect(account.plan).toBe('pro')
    expect(account.planInterval).toBe('monthly')
    expect(account.proSince).not.toBeNull()

    const status = await call(app, 'GET', '/api/v1/account/status', { token: apiKey })
    expect(status.body.data, show(status)).toMatchObject({ account_type: 'pro', plan: { name: 'pro', interval: 'monthly', limits: { requests_per_minute: 120 } } })
    expect(status.body.meta.upgrade, show(status)).toBeUndefined()
    for (const alias of aliases) expect(await cachedPro(alias), alias).toBe(1)

    const paid = await call(app, 'GET', `/api/v1/account/upgrade/${data.checkout_id}`, { token: apiKey })
    expect(paid.body.data.status, show(paid)).toBe('paid')
    const twice = await call(app, 'POST', pathOf(data.checkout_url))
    expect(twice.text).toContain('Already paid')

    const again = await call(app, 'POST', '/api/v1/account/upgrade', { token: apiKey, body: { interval: 'yearly' } })
    expect(again.status, show(again)).toBe(400)
    expect(again.body, show(again)).toMatchObject({ error: 'ALREADY_PRO', meta: { account_type: 'pro' } })
  })

  test('yearly costs 90.00 USD; JSON clients can confirm with Accept: application/json', async () => {
    const { apiKey, email } = await signUp(app, sink)
    const res = await call(app, 'POST', '/api/v1/account/upgrade', { token: apiKey, body: { interval: 'yearly' } })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data, show(res)).toMatchObject({ interval: 'yearly', price: '90.00 USD' })
    const confirmed = await call(app, 'POST', pathOf(res.body.data.checkout_url), { headers: { accept: 'application/json' } })
    expect(confirmed.status, show(confirmed)).toBe(200)
    expect(confirmed.body.data, show(confirmed)).toMatchObject({ outcome: 'confirmed', status: 'paid' })
    expect((await planOf(email)).planInterval).toBe('yearly')
  })

  test('400 VALIDATION_FAILED for another interval or a body that is not an object', async () => {
    const { apiKey } = await signUp(app, sink)
    const weekly = await call(app, 'POST', '/api/v1/account/upgrade', { token: apiKey, body: { interval: 'weekly' } })
    expect(weekly.status, show(weekly)).toBe(400)
    expect(weekly.body.error, show(weekly)).toBe('VALIDATION_FAILED')
    expect(weekly.body.hint, show(weekly)).toContain('monthly')
    const number = await call(app, 'POST', '/api/v1/account/upgrade', { token: apiKey, body: { interval: 12 } })
    expect(number.status, show(number)).toBe(400)
    const array = await call(app, 'POST', '/api/v1/account/upgrade', { token: apiKey, body: '[]' })
    expect(array.status, show(array)).toBe(400)
    const count = await api.deps.db
      .select()
      .from(checkouts)
      .where(eq(checkouts.accountId, (await accountIdOf(apiKey))!))
    expect(count.length).toBe(0)
  })

  test('an expired checkout (24 h) shows 410 and cannot be confirmed', async () => {
    const { apiKey, email } = await signUp(app, sink)
    const res = await call(app, 'POST', '/api/v1/account/upgrade', { token: apiKey })
    const later = (await testApi({ config: api.deps.config, now: () => Date.now() + 24 * 3600_000 + 1000 })).app
    const page = await call(later, 'GET', pathOf(res.body.data.checkout_url))
    expect(page.status, page.text).toBe(410)
    const confirm = await call(later, 'POST', pathOf(res.body.data.checkout_url))
    expect(confirm.status, confirm.text).toBe(410)
    expect((await planOf(email)).plan).toBe('free')
  })

  test('Idempotency-Key: a retry replays the same checkout instead of starting another', async () => {
    const { apiKey } = await signUp(app, sink)
    const key = crypto.randomUUID()
    const first = await call(app, 'POST', '/api/v1/account/upgrade', { token: apiKey, body: { interval: 'yearly' }, headers: { [IDEMPOTENCY_HEADER]: key } })
    const retry = await call(app, 'POST', '/api/v1/account/upgrade', { token: apiKey, body: { interval: 'yearly' }, headers: { [IDEMPOTENCY_HEADER]: key } })
    expect(first.status, show(first)).toBe(200)
    expect(retry.status, show(retry)).toBe(200)
    expect(retry.headers.get(REPLAYED_HEADER), show(retry)).toBe('true')
    expect(retry.body.data.checkout_id, show(retry)).toBe(first.body.data.checkout_id)
    const rows = await api.deps.db
      .select()
      .from(checkouts)
      .where(eq(checkouts.accountId, (await accountIdOf(apiKey))!))
    expect(rows.length).toBe(1)
    const other = await call(app, 'POST', '/api/v1/account/upgrade', { token: apiKey, body: { interval: 'monthly' }, headers: { [IDEMPOTENCY_HEADER]: key } })
    expect(other.status, show(other)).toBe(400)
    expect(other.body.error, show(other)).toBe('IDEMPOTENCY_KEY_REUSED')
  })

  test('security: guest tokens and missing tokens are 401', async () => {
    const token = await newGuestToken(app)
    const guest = await call(app, 'POST', '/api/v1/account/upgrade', { token })
    expect(guest.status, show(guest)).toBe(401)
    expect(guest.body.error, show(guest)).toBe('UNAUTHORIZED')
    const none = await call(app, 'POST', '/api/v1/account/upgrade')
    expect(none.status, show(none)).toBe(401)
    const state = await call(app, 'GET', '/api/v1/account/upgrade/co_x', { token })
    expect(state.status, show(state)).toBe(401)
  })

  test("security: another account's checkout is 404 and nothing changes", async () => {
    const [owner, other] = [await signUp(app, sink), await signUp(app, sink)]
    const res = await call(app, 'POST', '/api/v1/account/upgrade', { token: owner.apiKey })
    const id = res.body.data.checkout_id
    const peek = await call(app, 'GET', `/api/v1/account/upgrade/${id}`, { token: other.apiKey })
    expect(peek.status, show(peek)).toBe(404)
    expect(peek.body.error, show(peek)).toBe('CHECKOUT_NOT_FOUND')
    const unknown = await call(app, 'GET', '/api/v1/account/upgrade/co_doesnotexist', { token: other.apiKey })
    expect(unknown.status, show(unknown)).toBe(404)
    const [row] = await api.deps.db.select().from(checkouts).where(eq(checkouts.id, id))
    expect(row!.status).toBe('pending')
    expect((await planOf(owner.email)).plan).toBe('free')
    expect((await planOf(other.email)).plan).toBe('free')
  })

  test('security: the page forbids framing and Referer leaks; unknown ids are a 404 page', async () => {
    const { apiKey } = await signUp(app, sink)
    const res = await call(app, 'POST', '/api/v1/account/upgrade', { token: apiKey })
    const page = await call(app, 'GET', pathOf(res.body.data.checkout_url))
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    expect(page.headers.get('referrer-policy')).toBe('no-referrer')
    expect(page.headers.get('cache-control')).toBe('no-store')
    for (const id of ['co_unknown', '<script>', 'x'.repeat(300)]) {
      const missing = await call(app, 'GET', `/billing/${encodeURIComponent(id)}`)
      expect(missing.status, missing.text).toBe(404)
      expect(missing.text).not.toContain('<script>')
      const post = await call(app, 'POST', `/billing/${encodeURIComponent(id)}`)
      expect(post.status, post.text).toBe(404)
    }
  })

  test('the Stripe webhook is 404 while Stripe is not configured', async () => {
    const res = await call(app, 'POST', '/api/v1/billing/stripe/webhook', { body: { id: 'evt_1', type: 'checkout.session.completed', data: {} } })
    expect(res.status, show(res)).toBe(404)
  })
})

async function accountIdOf(apiKey: string) {
  const status = await call(app, 'GET', '/api/v1/account/status', { token: apiKey })
  return (await planOf(status.body.data.email)).id
}
