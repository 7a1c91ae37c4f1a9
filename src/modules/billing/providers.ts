// The payment provider of this server: Stripe Checkout when STRIPE_SECRET_KEY is set, otherwise the
// local provider (provider.ts says what both do).
import type { Config } from '../../../core/config'
import { localProvider } from './local'
import type { BillingProvider } from './provider'
import { stripeProvider } from './stripe'

export function createBillingProvider(config: Pick<Config, 'stripe'>): BillingProvider {
  return config.stripe ? stripeProvider(config.stripe) : localProvider()
}
