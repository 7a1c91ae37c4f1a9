// The Stripe provider end to end against a fake Stripe on loopback (test/support/fake-stripe.ts) that
// speaks Stripe's wire format: checkout creation, the redirect to Stripe's page, signed webhooks.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { startFakeStripe, type FakeStripe } from '../../../test/support/fake-stripe'
import { decodeCachedLink, linkCacheKey } from '../../../core/link-cache'
import { accounts, checkouts } from '../../db/schema'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'
import { call, show, testApi, testConfig, type TestApp } from '../../../test/support/api'
import { signUp, type SignedUp } from '../../../test/support/signup'

const SECRET_KEY = 'sk_test_fake0123456789'
const WEBHOOK_SECRET = 'whsec_fakeSigningSecret0123'
const PRICES = { monthly: 'price_monthly123', yearly: 'price_yearly456' }

let sink: SmtpSink
let stripe: FakeStripe
let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

beforeAll(async () => {
  sink = await startSmtpSink()
  stripe = startFakeStripe({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET, prices: Object.values(PRICES) })
  api = await testApi({
    config: testConfig({
      SMTP_URL: sink.url,
      STRIPE_SECRET_KEY: SECRET_KEY,
      STRIPE_PRICE_MONTHLY: PRICES.monthly,
      STRIPE_PRICE_YEARLY: PRICES.yearly,
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_URL: stripe.url,
    }),
  })
  app = api.app
})
afterAll(async () => {
  stripe.close()
  await sink.close()
})

async function accountOf(email: string) {
  const [row] = await api.deps.db.select().from(accounts).where(eq(accounts.email, email))
  return row!
}

async function upgrade(user: SignedUp, interval = 'monthly') {
  const res = await call(app, 'POST', '/api/v1/account/upgrade', { token: user.apiKey, body: { interval } })
  if (res.status !== 200) throw new Error(show(res))
  const [row] = await api.deps.db.select().from(checkouts).where(eq(checkouts.id, res.body.data.checkout_id))
  return { res, checkout: row! }
}

function deliver(delivery: { body: string; signature: string | null }) {
  return call(app, 'POST', '/api/v1/billing/stripe/webhook', {
    body: delivery.body,
    headers: { 'content-type': 'application/json; charset=utf-8', ...(delivery.signature !== null && { 'stripe-signature': delivery.signature }) },
  })
}

describe('Stripe provider', () => {
  test('upgrade creates a Checkout Session; the short URL redirects to Stripe; the webhook makes the account Pro', async () => {
    const user = await signUp(app, sink, { links: 2 })
    const { res, checkout } = await upgrade(user, 'yearly')
    expect(res.body.data, show(res)).toMatchObject({ interval: 'yearly', price: '90.00 USD' })
    expect(res.body.data.checkout_url, show(res)).toStartWith('https://api.sho.rt/billing/co_')
    expect(checkout).toMatchObject({ provider: 'stripe', status: 'pending' })
    expect(checkout.providerRef).toMatch(/^cs_test_/)

    const sent = stripe.requests.find((r) => r.method === 'POST' && r.form.client_reference_id === checkout.id)!
    expect(sent.form).toMatchObject({
      mode: 'subscription',
      'line_items[0][price]': PRICES.yearly,
      'line_items[0][quantity]': '1',
      customer_email: user.email,
      'metadata[checkout_id]': checkout.id,
      success_url: `${res.body.data.checkout_url}?result=success`,
    })
    expect(sent.headers.get('idempotency-key')).toBe(checkout.id)
    expect((await accountOf(user.email)).plan, 'not Pro before the webhook').toBe('free')

    const page = await call(app, 'GET', new URL(res.body.data.checkout_url).pathname)
    expect(page.status, page.text).toBe(302)
    expect(page.headers.get('location')).toBe(stripe.sessions.get(checkout.providerRef!)!.url!)

    const webhook = await deliver(stripe.complete(checkout.providerRef!))
    expect(webhook.status, show(webhook)).toBe(200)
    expect(webhook.body.data.outcome, show(webhook)).toBe('paid')
    const account = await accountOf(user.email)
    expect(account).toMatchObject({ plan: 'pro', planInterval: 'yearly' })
    for (const alias of user.aliases) {
      expect(decodeCachedLink((await api.deps.kv.get(linkCacheKey('sho.rt', alias)))!)?.pro, alias).toBe(1)
    }
    const status = await call(app, 'GET', '/api/v1/account/status', { token: user.apiKey })
    expect(status.body.data.account_type, show(status)).toBe('pro')

    // Back from Stripe, and Stripe's retries of the same event: nothing more happens.
    const back = await call(app, 'GET', `${new URL(res.body.data.checkout_url).pathname}?result=success`)
    expect(back.status).toBe(200)
    const retried = await deliver(stripe.event('checkout.session.completed', stripe.sessions.get(checkout.providerRef!)!))
    expect(retried.body.data.outcome, show(retried)).toBe('already_paid')
  })

  test('503 BILLING_UNAVAILABLE when Stripe fails; no checkout is recorded and the plan stays', async () => {
    const user = await signUp(app, sink)
    stripe.failNext(1, 500)
    const res = await call(app, 'POST', '/api/v1/account/upgrade', { token: user.apiKey })
    expect(res.status, show(res)).toBe(503)
    expect(res.body.error, show(res)).toBe('BILLING_UNAVAILABLE')
    expect(res.headers.get('retry-after'), show(res)).toBe('5')
    const account = await accountOf(user.email)
    expect(await api.deps.db.select().from(checkouts).where(eq(checkouts.accountId, account.id))).toEqual([])
    expect(account.plan).toBe('free')
  })

  test('400 WEBHOOK_SIGNATURE_INVALID for a missing, wrong, foreign-secret or stale signature; nothing changes', async () => {
    const user = await signUp(app, sink)
    const { checkout } = await upgrade(user)
    const good = stripe.complete(checkout.providerRef!)
    const stale = stripe.event('checkout.session.completed', stripe.sessions.get(checkout.providerRef!)!, { timestamp: Math.floor(Date.now() / 1000) - 301 })
    const foreign = stripe.event('checkout.session.completed', stripe.sessions.get(checkout.providerRef!)!, { secret: 'whsec_someoneElse' })
    const deliveries = [
      { body: good.body, signature: null },
      { body: good.body, signature: 'garbage' },
      // One hex digit of the signature changed (to a digit it is not: "0" would be a no-op one time in 16).
      { body: good.body, signature: good.signature.replace(/v1=(.)/, (_, c: string) => `v1=${c === '0' ? '1' : '0'}`) },
      { body: good.body.replace('"paid"', '"paid" '), signature: good.signature },
      stale,
      foreign,
    ]
    for (const delivery of deliveries) {
      const res = await deliver(delivery)
      expect(res.status, `${delivery.signature}: ${show(res)}`).toBe(400)
      expect(res.body.error, show(res)).toBe('WEBHOOK_SIGNATURE_INVALID')
    }
    expect((await accountOf(user.email)).plan).toBe('free')
    const ok = await deliver(good)
    expect(ok.status, show(ok)).toBe(200)
    expect((await accountOf(user.email)).plan).toBe('pro')
  })

  test('an unpaid completion waits for async_payment_succeeded; expired sessions expire the checkout; other events are acknowledged', async () => {
    const user = await signUp(app, sink)
    const { checkout } = await upgrade(user)
    const session = { ...stripe.sessions.get(checkout.providerRef!)!, status: 'complete', payment_status: 'unpaid' }
    const unpaid = await deliver(stripe.event('checkout.session.completed', session))
    expect(unpaid.body.data.outcome, show(unpaid)).toBe('ignored')
    expect((await accountOf(user.email)).plan).toBe('free')
    const later = await deliver(stripe.event('checkout.session.async_payment_succeeded', session))
    expect(later.body.data.outcome, show(later)).toBe('paid')
    expect((await accountOf(user.email)).plan).toBe('pro')

    const other = await signUp(app, sink)
    const second = await upgrade(other)
    const expired = await deliver(stripe.event('checkout.session.expired', stripe.sessions.get(second.checkout.providerRef!)!))
    expect(expired.body.data.outcome, show(expired)).toBe('expired')
    const [row] = await api.deps.db.select().from(checkouts).where(eq(checkouts.id, second.checkout.id))
    expect(row!.status).toBe('expired')
    const page = await call(app, 'GET', `/billing/${second.checkout.id}`)
    expect(page.status).toBe(410)

    const unrelated = await deliver(stripe.event('invoice.paid', { id: 'in_1' }))
    expect(unrelated.status, show(unrelated)).toBe(200)
    expect(unrelated.body.data.outcome).toBe('ignored')
    const unknownSession = await deliver(stripe.event('checkout.session.completed', { id: 'cs_test_unknown', payment_status: 'paid' }))
    expect(unknownSession.body.data.outcome, show(unknownSession)).toBe('ignored')
  })

  test('security: the local confirm cannot pay a Stripe checkout; another account cannot read it', async () => {
    const [owner, other] = [await signUp(app, sink), await signUp(app, sink)]
    const { res, checkout } = await upgrade(owner)
    const confirm = await call(app, 'POST', new URL(res.body.data.checkout_url).pathname)
    expect(confirm.status, confirm.text).toBe(404)
    const json = await call(app, 'POST', new URL(res.body.data.checkout_url).pathname, { headers: { accept: 'application/json' } })
    expect(json.status, show(json)).toBe(404)
    expect(json.body.error, show(json)).toBe('CHECKOUT_NOT_FOUND')
    const peek = await call(app, 'GET', `/api/v1/account/upgrade/${checkout.id}`, { token: other.apiKey })
    expect(peek.status, show(peek)).toBe(404)
    const [row] = await api.deps.db.select().from(checkouts).where(eq(checkouts.id, checkout.id))
    expect(row!.status).toBe('pending')
    expect((await accountOf(owner.email)).plan).toBe('free')
  })
})
