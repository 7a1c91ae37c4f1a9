// The billing routes' schemas: the upgrade request and its checkout, the checkout's confirmation, and
// Stripe's webhook event.
import { t } from 'elysia'
import { FreeForm, Meta } from '../../plugins/errors'

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
    examples: [
      { id: 'evt_1Nq', object: 'event', type: 'checkout.session.completed', data: { object: { id: 'cs_test_a1', client_reference_id: 'co_3q2V8mJcQ1aXy0bq9Wc2rA', payment_status: 'paid' } } },
    ],
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

export const billingModels = {
  UpgradeRequest,
  UpgradeResponse,
  CheckoutStatusResponse,
  CheckoutConfirmResponse,
  StripeEvent,
  WebhookResponse,
}
