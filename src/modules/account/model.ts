import { t } from 'elysia'
import { FreeForm, Meta } from '../../plugins/errors'
import { GUEST_LIMITS } from '../guest/model'
import { DEFAULT_LIMITS, DEFAULT_LINK_TTL_DAYS, planLimitsView } from './plans'

// The API document shows the default limits (README: "Plan limits"); responses show the deployment's.
const FREE = DEFAULT_LIMITS.plans.free

export const AccountStatusResponse = t.Object(
  {
    success: t.Boolean(),
    data: t.Object({
      account_type: t.String({ description: "'guest' for a guest token; the plan ('free' or 'pro') for an API key", examples: ['free'] }),
      email: t.Union([t.String(), t.Null()]),
      plan: FreeForm('Plan name and its limits'),
      usage: FreeForm('What this credential has used and has left'),
      features: FreeForm('What the plan allows'),
    }),
    meta: Meta,
  },
  {
    examples: [
      {
        success: true,
        data: {
          account_type: 'free',
          email: 'alice@example.com',
          plan: {
            name: 'free',
            interval: null,
            pro_since: null,
            limits: planLimitsView(DEFAULT_LIMITS, 'free'),
          },
          usage: {
            links_this_month: 12,
            links_per_month: FREE.linksPerMonth,
            links_remaining: FREE.linksPerMonth - 12,
            period_start: '2026-01-01T00:00:00.000Z',
            period_resets_at: '2026-02-01T00:00:00.000Z',
            requests_this_minute: 3,
            requests_per_minute: FREE.requestsPerMinute,
            requests_remaining: FREE.requestsPerMinute - 3,
            requests_reset_at: '2026-01-14T12:01:00.000Z',
          },
          features: { custom_alias: true, custom_domains: true, password_protection: true, custom_expiration: true, scheduled_activation: true, bulk: true, link_management: true, tags: true, analytics: false, conversions: false },
        },
        meta: {
          account_type: 'free',
          usage: { links_this_month: 12, links_remaining: FREE.linksPerMonth - 12, requests_remaining: FREE.requestsPerMinute - 3 },
          notices: [],
          limitations: ['statistics need Pro (403 with basic totals on Free)'],
          upgrade: { url: 'https://api.example.com/api/v1/account/upgrade', method: 'POST', prices: { monthly: '9.00 USD', yearly: '90.00 USD' } },
        },
      },
      {
        success: true,
        data: {
          account_type: 'guest',
          email: null,
          plan: { name: 'guest', max_links: GUEST_LIMITS.max_links, max_requests: GUEST_LIMITS.max_requests, link_expiry_days: DEFAULT_LINK_TTL_DAYS },
          usage: { links_created: 1, links_remaining: GUEST_LIMITS.max_links - 1, requests_made: 3, requests_remaining: GUEST_LIMITS.max_requests - 3, expires_at: '2026-01-02T12:00:00.000Z' },
          features: { custom_alias: false, custom_domains: false, password_protection: false, custom_expiration: false, bulk: false, analytics: false, tags: false },
        },
        meta: { account_type: 'guest' },
      },
    ],
  },
)

export const BILLING_INTERVALS = ['monthly', 'yearly'] as const

export const UpgradeRequest = t.Object(
  {
    // `enum` documents the two values; the handler checks them and answers with a readable hint
    // (TypeBox's message for a union of literals names no value).
    interval: t.Optional(t.String({ enum: [...BILLING_INTERVALS], default: 'monthly', description: 'Billing interval of Pro' })),
  },
  { description: 'Optional; an empty body means monthly', examples: [{ interval: 'yearly' }] },
)

const CheckoutData = {
  checkout_id: t.String({ pattern: '^co_', examples: ['co_3q2V8mJcQ1aXy0bq9Wc2rA'] }),
  checkout_url: t.String({ format: 'uri', description: 'Short URL of the checkout page; open it in a browser' }),
  interval: t.String({ examples: ['monthly'] }),
  price: t.String({ examples: ['9.00 USD'] }),
  expires_at: t.String({ format: 'date-time' }),
}

/** One checkout, as both examples below show it. */
const CHECKOUT_EXAMPLE = {
  checkout_id: 'co_3q2V8mJcQ1aXy0bq9Wc2rA',
  checkout_url: 'https://api.example.com/billing/co_3q2V8mJcQ1aXy0bq9Wc2rA',
  interval: 'monthly',
  price: '9.00 USD',
  expires_at: '2026-01-15T12:00:00.000Z',
}

export const UpgradeResponse = t.Object(
  {
    success: t.Boolean(),
    data: t.Object(CheckoutData),
    meta: Meta,
  },
  {
    examples: [
      {
        success: true,
        data: CHECKOUT_EXAMPLE,
        meta: {
          account_type: 'free',
          hint: 'Open checkout_url in a browser. The plan switches to Pro once the payment is confirmed.',
          notices: [],
          limitations: [],
        },
      },
    ],
  },
)

export const CheckoutStatusResponse = t.Object(
  {
    success: t.Boolean(),
    data: t.Object({
      ...CheckoutData,
      status: t.String({ enum: ['pending', 'paid', 'expired'], examples: ['pending'] }),
      provider: t.String({ examples: ['stripe'] }),
      created_at: t.String({ format: 'date-time' }),
      confirmed_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
    }),
    meta: Meta,
  },
  {
    examples: [
      {
        success: true,
        data: {
          ...CHECKOUT_EXAMPLE,
          status: 'paid',
          provider: 'stripe',
          created_at: '2026-01-14T12:00:00.000Z',
          confirmed_at: '2026-01-14T12:03:10.000Z',
        },
        meta: { account_type: 'pro', notices: [], limitations: [] },
      },
    ],
  },
)

export const StripeEvent = t.Object(
  {
    id: t.String({ examples: ['evt_1Nq'] }),
    type: t.String({ examples: ['checkout.session.completed'] }),
    data: FreeForm('data.object: the Checkout Session'),
  },
  {
    additionalProperties: true,
    description: 'A Stripe event as Stripe sends it; verified by its Stripe-Signature header over the raw body',
    examples: [{ id: 'evt_1Nq', object: 'event', type: 'checkout.session.completed', data: { object: { id: 'cs_test_a1', client_reference_id: 'co_3q2V8mJcQ1aXy0bq9Wc2rA', payment_status: 'paid' } } }],
  },
)

export const WebhookResponse = t.Object(
  {
    success: t.Boolean(),
    data: t.Object({
      event_id: t.String(),
      outcome: t.String({ enum: ['paid', 'already_paid', 'expired', 'ignored'], description: 'What the event did' }),
    }),
    meta: Meta,
  },
  { examples: [{ success: true, data: { event_id: 'evt_1Nq', outcome: 'paid' }, meta: {} }] },
)

export const CheckoutConfirmResponse = t.Object(
  {
    success: t.Boolean(),
    data: t.Object({
      checkout_id: t.String(),
      outcome: t.String({ enum: ['confirmed', 'already_paid', 'expired'], description: 'What this confirmation did' }),
      status: t.String({ enum: ['pending', 'paid', 'expired'] }),
    }),
    meta: Meta,
  },
  { examples: [{ success: true, data: { checkout_id: 'co_3q2V8mJcQ1aXy0bq9Wc2rA', outcome: 'confirmed', status: 'paid' }, meta: {} }] },
)

export const accountModels = {
  AccountStatusResponse,
  UpgradeRequest,
  UpgradeResponse,
  CheckoutStatusResponse,
  CheckoutConfirmResponse,
  StripeEvent,
  WebhookResponse,
}
