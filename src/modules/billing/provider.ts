// Billing behind one small interface, so the plan logic never knows which payment provider runs:
// Stripe Checkout when STRIPE_SECRET_KEY is set, otherwise the local provider (self-hosting and
// development), whose "payment" is a confirm button on a page this API serves.
//
// A provider starts a checkout and, where it has them, turns its webhooks into events. It never
// changes a plan itself: the account becomes Pro only when a checkout is confirmed (a verified
// webhook, or the local confirm), never when the checkout is created.
import type { BillingInterval } from '../../lib/prices'

export interface CheckoutRequest {
  /** Our id of the checkout (`co_…`): Stripe's client_reference_id and idempotency key. */
  checkoutId: string
  accountId: string
  email: string
  interval: BillingInterval
  /** This API's short checkout page; the provider sends the buyer back here. */
  returnUrl: string
}

/** What a verified webhook delivery means for us. */
export type BillingEvent =
  | { kind: 'paid'; eventId: string; providerRef: string; checkoutId: string | null }
  | { kind: 'expired'; eventId: string; providerRef: string }
  | { kind: 'ignored'; eventId: string; type: string; reason: string }

export interface BillingProvider {
  readonly name: 'local' | 'stripe'
  /** True when POST on the checkout page confirms the payment (the local provider only). */
  readonly confirmsLocally: boolean
  /** Starts a checkout; returns the provider's id for it (Stripe's Checkout Session id), if any. */
  createCheckout(request: CheckoutRequest): Promise<{ providerRef: string | null }>
  /**
   * Where the short checkout URL sends a buyer whose checkout is pending: the provider's payment page,
   * or null for this API's own confirm page.
   */
  paymentPageUrl(providerRef: string | null): Promise<string | null>
  /** Verifies a webhook delivery (raw body, headers) and interprets it; throws BillingFailure('signature'). */
  handleWebhook?(rawBody: string, headers: Headers, nowMs: number): BillingEvent
}

/**
 * What a provider throws when it cannot do its part: `unavailable` (the provider did not answer, or
 * refused), `signature` (a webhook delivery it cannot verify). The account module turns it into the
 * API's error (BILLING_UNAVAILABLE, WEBHOOK_SIGNATURE_INVALID).
 */
export class BillingFailure extends Error {
  constructor(
    readonly reason: 'unavailable' | 'signature',
    /** Seconds after which a retry may succeed. */
    readonly retryAfter?: number,
  ) {
    super(`billing: ${reason}`)
    this.name = 'BillingFailure'
  }
}
