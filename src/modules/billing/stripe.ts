// Stripe Checkout over Stripe's REST API with fetch (no SDK): form-encoded requests with the secret key
// as bearer, JSON answers. Webhooks are verified as Stripe documents it: the Stripe-Signature header
// carries `t=<unix seconds>` and one or more `v1=<hex>`, each an HMAC-SHA256 under the endpoint's
// signing secret of `${t}.${raw body}`; a timestamp outside the tolerance is refused (replays).
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { StripeConfig } from '../../../core/config'
import { BillingFailure, type BillingEvent, type BillingProvider, type CheckoutRequest } from './provider'
import { log } from '../../lib/log'

/** Stripe's libraries default to five minutes. */
export const STRIPE_SIGNATURE_TOLERANCE_SECONDS = 300
/** One Stripe API call; a register or upgrade request waits for it. */
const STRIPE_TIMEOUT_MS = 10_000

type Json = Record<string, unknown>

export function stripeProvider(config: StripeConfig, fetchImpl: typeof fetch = fetch): BillingProvider {
  async function call(method: 'GET' | 'POST', path: string, form?: URLSearchParams, headers: Record<string, string> = {}): Promise<Json> {
    let response: Response
    try {
      response = await fetchImpl(`${config.apiUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${config.secretKey}`,
          ...(form && { 'content-type': 'application/x-www-form-urlencoded' }),
          ...headers,
        },
        body: form?.toString(),
        signal: AbortSignal.timeout(STRIPE_TIMEOUT_MS),
      })
    } catch (error) {
      log.error({ component: 'billing', stripe: `${method} ${path}`, error: error instanceof Error ? error.message : String(error) }, 'Stripe did not answer')
      throw new BillingFailure('unavailable', 5)
    }
    const body = (await response.json().catch(() => ({}))) as Json
    if (!response.ok) {
      // Stripe's error message names the problem (a wrong price id, say); it never contains the key.
      const error = (body.error ?? {}) as Json
      log.error({ component: 'billing', stripe: `${method} ${path}`, status: response.status, type: String(error.type ?? ''), error: String(error.message ?? '') }, 'Stripe refused')
      throw new BillingFailure('unavailable', 5)
    }
    return body
  }

  return {
    name: 'stripe',
    confirmsLocally: false,

    async createCheckout(request: CheckoutRequest) {
      const form = new URLSearchParams({
        mode: 'subscription',
        'line_items[0][price]': request.interval === 'yearly' ? config.priceYearly : config.priceMonthly,
        'line_items[0][quantity]': '1',
        client_reference_id: request.checkoutId,
        customer_email: request.email,
        success_url: `${request.returnUrl}?result=success`,
        cancel_url: `${request.returnUrl}?result=cancel`,
        'metadata[checkout_id]': request.checkoutId,
        'metadata[account_id]': request.accountId,
        'subscription_data[metadata][account_id]': request.accountId,
      })
      // Stripe's own idempotency: a retried call for the same checkout gets the same session.
      const session = await call('POST', '/v1/checkout/sessions', form, { 'idempotency-key': request.checkoutId })
      if (typeof session.id !== 'string') {
        log.error({ component: 'billing' }, 'Stripe answered a checkout session without id')
        throw new BillingFailure('unavailable')
      }
      return { providerRef: session.id }
    },

    async paymentPageUrl(providerRef) {
      if (!providerRef) return null
      // Not stored on our side: the session's URL is long and Stripe keeps it; it is null once the
      // session is complete or expired.
      const session = await call('GET', `/v1/checkout/sessions/${encodeURIComponent(providerRef)}`)
      return session.status === 'open' && typeof session.url === 'string' ? session.url : null
    },

    handleWebhook(rawBody, headers, nowMs) {
      const header = headers.get('stripe-signature')
      if (!verifyStripeSignature(rawBody, header, config.webhookSecret, Math.floor(nowMs / 1000))) {
        throw new BillingFailure('signature')
      }
      return interpretEvent(JSON.parse(rawBody) as Json)
    },
  }
}

/** The Stripe-Signature value for a payload (the fake Stripe of the tests signs with it). */
export function stripeSignature(payload: string, secret: string, timestamp: number): string {
  return `t=${timestamp},v1=${hmacHex(secret, `${timestamp}.${payload}`)}`
}

/**
 * True when one of the header's v1 signatures matches and its timestamp is within the tolerance
 * (either way: a clock running ahead is no licence to replay). Several v1 values occur while a
 * secret is being rolled; v0 and unknown schemes are ignored.
 */
export function verifyStripeSignature(payload: string, header: string | null, secret: string, nowSeconds: number, toleranceSeconds = STRIPE_SIGNATURE_TOLERANCE_SECONDS): boolean {
  if (!header) return false
  let timestamp: number | undefined
  const signatures: string[] = []
  for (const part of header.split(',')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    const name = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (name === 't' && timestamp === undefined && /^\d{1,12}$/.test(value)) timestamp = Number(value)
    else if (name === 'v1' && /^[0-9a-f]{64}$/.test(value)) signatures.push(value)
  }
  if (timestamp === undefined || signatures.length === 0) return false
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false
  const expected = Buffer.from(hmacHex(secret, `${timestamp}.${payload}`), 'hex')
  // Every candidate is compared, so the time taken does not tell which one matched.
  let match = false
  for (const signature of signatures) match = timingSafeEqual(expected, Buffer.from(signature, 'hex')) || match
  return match
}

function hmacHex(secret: string, data: string): string {
  return createHmac('sha256', secret).update(data, 'utf8').digest('hex')
}

/** The events that move a checkout; everything else is acknowledged and ignored. */
export function interpretEvent(event: Json): BillingEvent {
  const eventId = typeof event.id === 'string' ? event.id : ''
  const type = typeof event.type === 'string' ? event.type : ''
  const object = ((event.data as Json | undefined)?.object ?? {}) as Json
  const providerRef = typeof object.id === 'string' ? object.id : null
  const checkoutId = typeof object.client_reference_id === 'string' ? object.client_reference_id : null
  if (!providerRef || !type.startsWith('checkout.session.')) return { kind: 'ignored', eventId, type, reason: 'not a checkout session event' }
  switch (type) {
    case 'checkout.session.completed':
      // A delayed payment method (a bank debit) completes the session unpaid; it is paid when
      // checkout.session.async_payment_succeeded arrives.
      if (object.payment_status === 'paid' || object.payment_status === 'no_payment_required') {
        return { kind: 'paid', eventId, providerRef, checkoutId }
      }
      return { kind: 'ignored', eventId, type, reason: 'payment not completed yet' }
    case 'checkout.session.async_payment_succeeded':
      return { kind: 'paid', eventId, providerRef, checkoutId }
    case 'checkout.session.expired':
    case 'checkout.session.async_payment_failed':
      return { kind: 'expired', eventId, providerRef }
    default:
      return { kind: 'ignored', eventId, type, reason: 'event not used' }
  }
}
