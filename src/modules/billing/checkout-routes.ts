// The browser side of billing and the provider's webhook:
//   GET  /billing/{id}                     the short checkout URL: the local confirm page, or a redirect to
//                                        Stripe's payment page, or the checkout's state
//   POST /billing/{id}                     the local provider's confirm button
//   POST /api/v1/billing/stripe/webhook  Stripe's events, verified over the raw body
// The checkout pages are HTML for people and stay out of the API document; the webhook is in it.
import { Elysia } from 'elysia'
import { checkoutPage, maskEmail } from './page'
import { BillingFailure, type BillingProvider } from './provider'
import { MAX_BODY_BYTES, readBodyCapped } from '../../plugins/body'
import { ApiError, errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { type OnUpgraded, CHECKOUT_PAGE_PATH, checkoutState, confirmCheckout, confirmLocalCheckout, expireCheckout, findCheckout, findCheckoutByRef } from './checkouts'
import { billingModels } from './model'
import { proBenefits } from '../../lib/plans'
import { loadAccount } from '../account/service'
import { log } from '../../lib/log'

export const STRIPE_WEBHOOK_PATH = '/api/v1/billing/stripe/webhook'

const utf8 = new TextDecoder('utf-8', { fatal: true })

function wantsJson(request: Request): boolean {
  const accept = request.headers.get('accept') ?? ''
  return accept.includes('application/json') && !accept.includes('text/html')
}

/**
 * The provider with its failures as the API's errors: BillingFailure 'unavailable' is 503
 * BILLING_UNAVAILABLE (with Retry-After when the provider gave one), 'signature' is 400
 * WEBHOOK_SIGNATURE_INVALID.
 */
export function withApiErrors(provider: BillingProvider): BillingProvider {
  const asApiError = (error: unknown): never => {
    if (!(error instanceof BillingFailure)) throw error
    if (error.reason === 'signature') throw new ApiError('WEBHOOK_SIGNATURE_INVALID')
    throw new ApiError('BILLING_UNAVAILABLE', undefined, error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter })
  }
  const { handleWebhook } = provider
  return {
    name: provider.name,
    confirmsLocally: provider.confirmsLocally,
    createCheckout: (request) => provider.createCheckout(request).catch(asApiError),
    paymentPageUrl: (providerRef) => provider.paymentPageUrl(providerRef).catch(asApiError),
    ...(handleWebhook && {
      handleWebhook(rawBody: string, headers: Headers, nowMs: number) {
        try {
          return handleWebhook.call(provider, rawBody, headers, nowMs)
        } catch (error) {
          return asApiError(error)
        }
      },
    }),
  }
}

export function billingRoutes(services: Services, provider: BillingProvider, onUpgraded: OnUpgraded) {
  // The global JSON parser consumes the body before any handler; a signature is over the exact bytes,
  // so the webhook's request is cloned before parsing (onRequest runs first, for every request).
  const rawBodies = new WeakMap<Request, Request>()

  return new Elysia({ name: 'modules.billing.checkout' })
    .use(errors)
    .model(billingModels)
    .onRequest(({ request }) => {
      if (request.method === 'POST' && request.url.endsWith(STRIPE_WEBHOOK_PATH)) rawBodies.set(request, request.clone() as Request)
    })
    .get(
      `${CHECKOUT_PAGE_PATH}/:id`,
      async ({ params, query }) => {
        const checkout = await findCheckout(services, params.id)
        if (!checkout) return checkoutPage({ kind: 'not_found' })
        const state = checkoutState(checkout, services.now())
        if (state === 'paid') return checkoutPage({ kind: 'paid' })
        if (state === 'expired') return checkoutPage({ kind: 'expired' })
        // Back from the provider's page: its confirmation (the webhook) may still be on its way.
        if (query.result === 'success') return checkoutPage({ kind: 'processing' })
        if (query.result === 'cancel') return checkoutPage({ kind: 'cancelled' })
        if (checkout.provider === 'local' && provider.confirmsLocally) {
          const account = await loadAccount(services, checkout.accountId)
          return checkoutPage({
            kind: 'confirm',
            price: checkout.price,
            interval: checkout.interval,
            email: maskEmail(account.email),
            action: `${CHECKOUT_PAGE_PATH}/${checkout.id}`,
            benefits: proBenefits(services.config.limits),
          })
        }
        if (checkout.provider !== provider.name) return checkoutPage({ kind: 'not_found' })
        const target = await provider.paymentPageUrl(checkout.providerRef)
        if (!target) return checkoutPage({ kind: 'processing' })
        return new Response(null, { status: 302, headers: { location: target, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } })
      },
      {
        detail: {
          operationId: 'openCheckout',
          tags: ['billing'],
          summary: 'The short checkout URL: confirm page, or the payment page',
          description:
            'For people, in a browser: `data.checkout_url` of POST /api/v1/account/upgrade. With local billing an HTML page with a "Confirm upgrade" button; with Stripe a 302 to its payment page; once paid, expired or cancelled a page saying so (404 for an unknown id). `result=success|cancel` is how the payment page sends people back.',
          security: [],
          parameters: [{ name: 'result', in: 'query', required: false, schema: { type: 'string', enum: ['success', 'cancel'] } }],
          responses: {
            200: { description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
            302: { description: "To the payment provider's page", headers: { Location: { schema: { type: 'string', format: 'uri' } } } },
            404: { description: 'No such checkout (an HTML page)', content: { 'text/html': { schema: { type: 'string' } } } },
          },
        } as Record<string, unknown>,
      },
    )
    .post(
      `${CHECKOUT_PAGE_PATH}/:id`,
      async ({ params, request }) => {
        const result = await confirmLocalCheckout(services, provider, params.id, onUpgraded)
        if (wantsJson(request)) {
          if (!result) throw new ApiError('CHECKOUT_NOT_FOUND', 'No local checkout with that id on this server.')
          return {
            success: true,
            data: { checkout_id: result.checkout.id, outcome: result.outcome, status: checkoutState(result.checkout, services.now()) },
            meta: result.outcome === 'expired' ? { hint: 'Start a new checkout with POST /api/v1/account/upgrade.' } : {},
          }
        }
        if (!result) return checkoutPage({ kind: 'not_found' })
        return checkoutPage({ kind: result.outcome === 'confirmed' ? 'confirmed' : result.outcome === 'already_paid' ? 'paid' : 'expired' })
      },
      {
        detail: {
          operationId: 'confirmCheckout',
          tags: ['billing'],
          summary: "Confirm a local checkout (the page's button)",
          description:
            'Local billing only (no STRIPE_SECRET_KEY): makes the account Pro. The page posts an empty form; a client that sends `Accept: application/json` gets JSON instead of a page (404 CHECKOUT_NOT_FOUND for an unknown id).',
          security: [],
          requestBody: { required: false, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties: {} } } } },
          responses: {
            200: {
              description: 'An HTML page, or with Accept: application/json the outcome',
              content: {
                'text/html': { schema: { type: 'string' } },
                'application/json': { schema: { $ref: '#/components/schemas/CheckoutConfirmResponse' } },
              },
            },
            // No such local checkout: a page, or with Accept: application/json the error.
            404: {
              description: 'No such local checkout (an HTML page)',
              'x-error-codes': ['CHECKOUT_NOT_FOUND'],
              content: { 'text/html': { schema: { type: 'string' } }, 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
            },
          },
        } as Record<string, unknown>,
        response: errorResponses('CHECKOUT_NOT_FOUND'),
      },
    )
    .post(
      STRIPE_WEBHOOK_PATH,
      async ({ request }) => {
        if (!provider.handleWebhook) throw new ApiError('NOT_FOUND', 'Stripe billing is not configured on this server.')
        const raw = rawBodies.get(request)
        if (!raw) throw new ApiError('WEBHOOK_SIGNATURE_INVALID')
        let payload: string
        try {
          payload = utf8.decode(await readBodyCapped(raw, MAX_BODY_BYTES))
        } catch (error) {
          if (error instanceof ApiError) throw error
          throw new ApiError('MALFORMED_JSON', 'The request body is not valid UTF-8.')
        }
        const event = provider.handleWebhook(payload, request.headers, services.now())
        let outcome: 'paid' | 'already_paid' | 'expired' | 'ignored' = 'ignored'
        if (event.kind === 'paid') {
          const paid = await confirmCheckout(services, { provider: provider.name, providerRef: event.providerRef }, onUpgraded)
          if (paid && event.checkoutId && event.checkoutId !== paid.id) {
            log.error(
              { component: 'billing', stripe_session: event.providerRef, client_reference_id: event.checkoutId, checkout: paid.id },
              'a paid Stripe session names another checkout than the one it paid',
            )
          }
          // Not paid by this delivery: a retry of one already handled, or a session that is not ours
          // (another application on the same Stripe account).
          outcome = paid ? 'paid' : (await findCheckoutByRef(services, provider.name, event.providerRef)) ? 'already_paid' : 'ignored'
        } else if (event.kind === 'expired') {
          outcome = (await expireCheckout(services, provider.name, event.providerRef)) ? 'expired' : 'ignored'
        }
        return { success: true, data: { event_id: event.eventId, outcome }, meta: {} }
      },
      {
        body: 'StripeEvent',
        response: { 200: 'WebhookResponse', ...errorResponses('WEBHOOK_SIGNATURE_INVALID', 'MALFORMED_JSON', 'NOT_FOUND') },
        detail: {
          operationId: 'receiveStripeWebhook',
          tags: ['billing'],
          security: [],
          summary: 'Stripe webhook (for Stripe, not for clients)',
          description:
            'Verifies the Stripe-Signature header (HMAC-SHA256 of `t.raw body` under STRIPE_WEBHOOK_SECRET, timestamp within 5 minutes). checkout.session.completed (paid) and checkout.session.async_payment_succeeded mark the checkout paid and the account Pro; checkout.session.expired marks it expired; other events are acknowledged and ignored. 404 when Stripe is not configured.',
        },
      },
    )
}
