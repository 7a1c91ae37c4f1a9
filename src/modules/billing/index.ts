// The upgrade to Pro and everything it pays through:
//   POST /api/v1/account/upgrade                 start a checkout with the payment provider
//   GET  /api/v1/account/upgrade/{checkout_id}   the checkout's state
// and (checkout-routes.ts) the checkout page and the provider's webhook. The provider is Stripe when
// STRIPE_SECRET_KEY is set, else the local one, which upgrades without payment (providers.ts).
import { Elysia, t } from 'elysia'
import type { Auth } from '../../plugins/auth'
import { ApiError, errorResponses, errors } from '../../plugins/errors'
import { idempotencyPlugin } from '../../plugins/idempotency'
import type { Services } from '../../services'
import type { BillingInterval } from '../../lib/prices'
import { log } from '../../lib/log'
import { accountMeta } from '../account/meta'
import { accountUsage, loadAccount } from '../account/service'
import { billingRoutes, withApiErrors } from './checkout-routes'
import { checkoutView, findOwnCheckout, startCheckout, type OnUpgraded } from './checkouts'
import { billingModels, BILLING_INTERVALS } from './model'
import { createBillingProvider } from './providers'

function parseInterval(value: string | undefined): BillingInterval {
  const interval = value ?? 'monthly'
  if (!(BILLING_INTERVALS as readonly string[]).includes(interval)) {
    throw new ApiError('VALIDATION_FAILED', `body.interval: must be "monthly" or "yearly", got "${interval.slice(0, 40)}"`)
  }
  return interval as BillingInterval
}

export interface BillingModuleOptions {
  /** Runs after a checkout made an account Pro (app.ts: its links' cached records turn Pro). */
  onUpgraded: OnUpgraded
}

export function billingModule(services: Services, auth: Auth, { onUpgraded }: BillingModuleOptions) {
  const billing = withApiErrors(createBillingProvider(services.config))
  if (!services.config.embedded && billing.confirmsLocally) {
    log.warn({ component: 'billing' }, 'STRIPE_SECRET_KEY is not set: the local provider upgrades accounts to Pro without payment')
  }
  return new Elysia({ name: 'modules.billing' })
    .use(errors)
    .use(auth.plugin)
    .use(idempotencyPlugin(services))
    .model(billingModels)
    .post(
      '/api/v1/account/upgrade',
      async ({ body, principal, account: caller }) => {
        const interval = parseInterval(body.interval)
        const { account, checkout } = await startCheckout(services, billing, caller, interval)
        const view = checkoutView(services.config, checkout, services.now())
        const usage = await accountUsage(services, account, principal.rateHeaders)
        return {
          success: true,
          data: { checkout_id: view.checkout_id, checkout_url: view.checkout_url, interval: view.interval, price: view.price, expires_at: view.expires_at },
          meta: accountMeta(services, {
            plan: account.plan,
            linksThisMonth: usage.links_this_month,
            requestsRemaining: usage.requests_remaining,
            hint: 'Open checkout_url in a browser. The plan switches to Pro once the payment is confirmed; GET /api/v1/account/upgrade/{checkout_id} shows the state.',
            notices: [
              billing.confirmsLocally
                ? { type: 'billing', message: 'Local billing: this server takes no payment; the checkout page confirms the upgrade.' }
                : { type: 'billing', message: 'Payment by Stripe Checkout; the plan changes when Stripe confirms the payment.' },
            ],
          }),
        }
      },
      {
        account: { scopes: ['billing:write'], operation: 'billing.upgrade' },
        idempotent: true,
        body: 'UpgradeRequest',
        // No body (or null) means the defaults; done before validation so the schema sees an object.
        transform(context) {
          if (context.body === null || context.body === undefined) (context as { body: unknown }).body = {}
        },
        response: { 200: 'UpgradeResponse', ...errorResponses('ALREADY_PRO', 'ACCOUNT_NOT_FOUND', 'BILLING_UNAVAILABLE') },
        detail: {
          operationId: 'upgradeAccount',
          tags: ['account'],
          summary: 'Start an upgrade to Pro',
          description:
            "Returns a short checkout URL. The plan does not change here: it becomes Pro only when the payment provider confirms the checkout (a Stripe webhook, or the confirm button of the local provider). 400 ALREADY_PRO when the account is already on Pro; 404 ACCOUNT_NOT_FOUND when the key's account no longer exists. Accepts Idempotency-Key.",
        },
      },
    )
    .get(
      '/api/v1/account/upgrade/:checkout_id',
      async ({ params, account: caller }) => {
        const checkout = await findOwnCheckout(services, caller.id, params.checkout_id)
        const account = await loadAccount(services, caller.id)
        return {
          success: true,
          data: checkoutView(services.config, checkout, services.now()),
          meta: accountMeta(services, { plan: account.plan }),
        }
      },
      {
        account: { scopes: ['account:read'] },
        params: t.Object({ checkout_id: t.String({ maxLength: 64, description: 'checkout_id from POST /account/upgrade' }) }),
        response: { 200: 'CheckoutStatusResponse', ...errorResponses('VALIDATION_FAILED', 'CHECKOUT_NOT_FOUND') },
        detail: { operationId: 'getCheckout', tags: ['account'], summary: 'State of an upgrade checkout of this account' },
      },
    )
    .use(billingRoutes(services, billing, onUpgraded))
}
