// What Pro costs: the checkout's price and the upgrade hint show it. Billing providers charge it.
/** Pro prices shown by POST /account/upgrade. */
export const PRO_PRICES = {
  monthly: { amountCents: 900, currency: 'USD' },
  yearly: { amountCents: 9_000, currency: 'USD' },
} as const

export type BillingInterval = keyof typeof PRO_PRICES

export function formatPrice(interval: BillingInterval): string {
  const { amountCents, currency } = PRO_PRICES[interval]
  return `${(amountCents / 100).toFixed(2)} ${currency}`
}
