// The local provider: no payment at all. The checkout page served by this API shows the price and a
// confirm button; pressing it confirms the checkout. Meant for self-hosting (Pro for whoever asks) and
// development; a server that charges for Pro sets STRIPE_SECRET_KEY, which replaces it entirely.
import type { BillingProvider } from './provider'

export function localProvider(): BillingProvider {
  return {
    name: 'local',
    confirmsLocally: true,
    createCheckout: async () => ({ providerRef: null }),
    paymentPageUrl: async () => null,
  }
}
