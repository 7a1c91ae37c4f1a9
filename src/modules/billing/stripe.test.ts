import { describe, expect, test } from 'bun:test'
import { ConfigError, parseConfig } from '../../../core/config'
import { createBillingProvider } from './providers'
import { interpretEvent, stripeSignature, verifyStripeSignature } from './stripe'

const SECRET = 'whsec_test_secret'
const NOW = 1_760_000_000

describe('verifyStripeSignature', () => {
  const payload = '{"id":"evt_1","type":"checkout.session.completed"}'

  test('accepts its own signature, also among several v1 values (secret rotation) and beside v0', () => {
    const header = stripeSignature(payload, SECRET, NOW)
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(verifyStripeSignature(payload, header, SECRET, NOW)).toBe(true)
    const rotated = `t=${NOW},v1=${'0'.repeat(64)},${header.split(',')[1]},v0=abc`
    expect(verifyStripeSignature(payload, rotated, SECRET, NOW)).toBe(true)
  })

  test("the HMAC is over `${t}.${raw body}` with the whsec_ string as key (Stripe's scheme)", async () => {
    const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    const mac = Buffer.from(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${NOW}.${payload}`))).toString('hex')
    expect(verifyStripeSignature(payload, `t=${NOW},v1=${mac}`, SECRET, NOW)).toBe(true)
  })

  test('refuses a changed body, another secret, no header, garbage, and timestamps outside 300 s either way', () => {
    const header = stripeSignature(payload, SECRET, NOW)
    expect(verifyStripeSignature(`${payload} `, header, SECRET, NOW)).toBe(false)
    expect(verifyStripeSignature(payload, header, 'whsec_other', NOW)).toBe(false)
    expect(verifyStripeSignature(payload, null, SECRET, NOW)).toBe(false)
    for (const bad of ['', 't=', 'v1=abc', `t=${NOW}`, `t=abc,v1=${'a'.repeat(64)}`, 'garbage,,,==']) {
      expect(verifyStripeSignature(payload, bad, SECRET, NOW), bad).toBe(false)
    }
    expect(verifyStripeSignature(payload, header, SECRET, NOW + 300)).toBe(true)
    expect(verifyStripeSignature(payload, header, SECRET, NOW + 301)).toBe(false)
    expect(verifyStripeSignature(payload, header, SECRET, NOW - 301)).toBe(false)
  })
})

describe('interpretEvent', () => {
  const session = (extra: object) => ({ data: { object: { id: 'cs_1', client_reference_id: 'co_1', ...extra } } })
  test('paid completions and async successes are payments; expiries expire; the rest is ignored', () => {
    expect(interpretEvent({ id: 'e', type: 'checkout.session.completed', ...session({ payment_status: 'paid' }) })).toEqual({ kind: 'paid', eventId: 'e', providerRef: 'cs_1', checkoutId: 'co_1' })
    expect(interpretEvent({ id: 'e', type: 'checkout.session.completed', ...session({ payment_status: 'unpaid' }) }).kind).toBe('ignored')
    expect(interpretEvent({ id: 'e', type: 'checkout.session.async_payment_succeeded', ...session({}) }).kind).toBe('paid')
    expect(interpretEvent({ id: 'e', type: 'checkout.session.expired', ...session({}) }).kind).toBe('expired')
    expect(interpretEvent({ id: 'e', type: 'customer.created', ...session({}) }).kind).toBe('ignored')
    expect(interpretEvent({}).kind).toBe('ignored')
  })
})

describe('configuration', () => {
  const stripe = {
    STRIPE_SECRET_KEY: 'sk_test_abc123',
    STRIPE_PRICE_MONTHLY: 'price_m1',
    STRIPE_PRICE_YEARLY: 'price_y1',
    STRIPE_WEBHOOK_SECRET: 'whsec_abc',
  }

  test('without STRIPE_SECRET_KEY the local provider runs; with it, Stripe (default API URL)', () => {
    expect(createBillingProvider(parseConfig({})).name).toBe('local')
    const config = parseConfig(stripe)
    expect(config.stripe).toMatchObject({ priceMonthly: 'price_m1', apiUrl: 'https://api.stripe.com' })
    expect(createBillingProvider(config).name).toBe('stripe')
  })

  test('a missing or malformed Stripe variable stops the start with its name', () => {
    for (const name of ['STRIPE_PRICE_MONTHLY', 'STRIPE_PRICE_YEARLY', 'STRIPE_WEBHOOK_SECRET']) {
      expect(() => parseConfig({ ...stripe, [name]: '' }), name).toThrow(new RegExp(name))
      expect(() => parseConfig({ ...stripe, [name]: 'nonsense' }), name).toThrow(ConfigError)
    }
    expect(() => parseConfig({ ...stripe, STRIPE_SECRET_KEY: 'pk_test_abc' })).toThrow(/STRIPE_SECRET_KEY/)
    expect(() => parseConfig({ ...stripe, STRIPE_API_URL: 'ftp://x' })).toThrow(/STRIPE_API_URL/)
  })

  test('mail: SMTP_URL must be smtp(s)://, MAIL_FROM an address; the outbox defaults under DATA_DIR', () => {
    expect(parseConfig({ DATA_DIR: '/tmp/d' }).mail).toEqual({ smtpUrl: undefined, from: 'Link service <no-reply@localhost>', outboxPath: '/tmp/d/outbox.log' })
    expect(parseConfig({ MAIL_OUTBOX: '/tmp/o.log', MAIL_FROM: 'a@b.c' }).mail).toMatchObject({ outboxPath: '/tmp/o.log', from: 'a@b.c' })
    expect(() => parseConfig({ SMTP_URL: 'http://mail' })).toThrow(/SMTP_URL/)
    for (const from of ['nobody', 'a@b.c\r\nBcc: x@y.z', 'Name <nope>']) expect(() => parseConfig({ MAIL_FROM: from }), from).toThrow(/MAIL_FROM/)
  })
})
