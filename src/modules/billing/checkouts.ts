// Pro checkouts. POST /account/upgrade starts one; only the provider confirms it (a verified Stripe
// webhook, or the local provider's confirm button). The account becomes Pro in the same transaction
// that marks the checkout paid; afterwards onUpgraded runs (app.ts wires the links module's
// markAccountLinksPro: every link of the account written through to the redirect cache with `pro: 1`),
// after the account's cached credentials are dropped (announceRevocation `account:<id>`).
import { and, eq, ne } from 'drizzle-orm'
import type { BillingProvider } from './provider'
import type { Config } from '../../../core/config'
import { accounts, checkouts } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import type { AccountPrincipal } from '../../plugins/auth'
import { formatPrice, type BillingInterval } from '../../lib/prices'
import { announceRevocation } from '../../plugins/revocations'
import { accountMeta } from '../account/meta'
import { loadAccount } from '../account/service'
import { ID_PREFIXES, newId } from '../../lib/ids'

/** What a checkout id looks like; anything else (a NUL byte, a path) is not looked up at all. The id
 * (lib/ids.ts: 16 random bytes) is unguessable, since the local page's id is its only credential. */
const CHECKOUT_ID = new RegExp(`^${ID_PREFIXES.checkout}[A-Za-z0-9_-]{8,64}$`)
/** Stripe Checkout Sessions expire after 24 hours by default; local checkouts live as long. */
export const CHECKOUT_TTL_MS = 24 * 3600 * 1000
/** 'billing' is a reserved alias, so the embedded single-port server routes these pages to the API, never to a short link. */
export const CHECKOUT_PAGE_PATH = '/billing'
/** What has to follow a paid upgrade outside this module (app.ts: the links' cached records turn Pro). */
export type OnUpgraded = (accountId: string) => Promise<unknown>

export type CheckoutRow = typeof checkouts.$inferSelect
export type CheckoutState = 'pending' | 'paid' | 'expired'

export function checkoutUrl(config: Pick<Config, 'publicApiUrl'>, id: string): string {
  return `${config.publicApiUrl}${CHECKOUT_PAGE_PATH}/${id}`
}

/** A pending checkout older than CHECKOUT_TTL_MS is expired, whether or not anybody said so. */
export function checkoutState(row: Pick<CheckoutRow, 'status' | 'createdAt'>, nowMs: number): CheckoutState {
  if (row.status === 'pending' && row.createdAt.getTime() + CHECKOUT_TTL_MS <= nowMs) return 'expired'
  return row.status
}

export function checkoutView(config: Pick<Config, 'publicApiUrl'>, row: CheckoutRow, nowMs: number) {
  return {
    checkout_id: row.id,
    status: checkoutState(row, nowMs),
    interval: row.interval,
    price: row.price,
    provider: row.provider,
    checkout_url: checkoutUrl(config, row.id),
    created_at: row.createdAt.toISOString(),
    expires_at: new Date(row.createdAt.getTime() + CHECKOUT_TTL_MS).toISOString(),
    confirmed_at: row.confirmedAt ? row.confirmedAt.toISOString() : null,
  }
}

/** Starts a checkout with the provider and records it; the plan does not change here. */
export async function startCheckout(services: Services, provider: BillingProvider, principal: AccountPrincipal, interval: BillingInterval) {
  const account = await loadAccount(services, principal.id)
  if (account.plan === 'pro') {
    throw new ApiError('ALREADY_PRO', `This account is already on Pro (${account.planInterval ?? 'monthly'}).`, { meta: accountMeta(services, { plan: 'pro' }) })
  }
  const id = newId('checkout')
  // The provider first: a failure there leaves no row behind. An abandoned Stripe session just expires.
  const { providerRef } = await provider.createCheckout({
    checkoutId: id,
    accountId: account.id,
    email: account.email,
    interval,
    returnUrl: checkoutUrl(services.config, id),
  })
  const [row] = await services.db
    .insert(checkouts)
    .values({ id, accountId: account.id, provider: provider.name, interval, price: formatPrice(interval), providerRef, createdAt: new Date(services.now()) })
    .returning()
  return { account, checkout: row! }
}

/** A checkout of this account; another account's is "not found", like one that does not exist. */
export async function findOwnCheckout(services: Pick<Services, 'db'>, accountId: string, id: string): Promise<CheckoutRow> {
  if (!CHECKOUT_ID.test(id)) throw new ApiError('CHECKOUT_NOT_FOUND')
  const [row] = await services.db
    .select()
    .from(checkouts)
    .where(and(eq(checkouts.id, id), eq(checkouts.accountId, accountId)))
    .limit(1)
  if (!row) throw new ApiError('CHECKOUT_NOT_FOUND')
  return row
}

export async function findCheckout(services: Pick<Services, 'db'>, id: string): Promise<CheckoutRow | undefined> {
  if (!CHECKOUT_ID.test(id)) return undefined
  const [row] = await services.db.select().from(checkouts).where(eq(checkouts.id, id)).limit(1)
  return row
}

export async function findCheckoutByRef(services: Pick<Services, 'db'>, provider: string, providerRef: string): Promise<CheckoutRow | undefined> {
  const [row] = await services.db
    .select()
    .from(checkouts)
    .where(and(eq(checkouts.provider, provider), eq(checkouts.providerRef, providerRef)))
    .limit(1)
  return row
}

type Target = { id: string } | { provider: string; providerRef: string }

function matches(target: Target) {
  return 'id' in target ? eq(checkouts.id, target.id) : and(eq(checkouts.provider, target.provider), eq(checkouts.providerRef, target.providerRef))
}

/**
 * Marks the checkout paid and the account Pro, in one transaction. Idempotent: a checkout already paid
 * changes nothing (webhooks are delivered at least once). Returns the checkout when this call paid it.
 */
export async function confirmCheckout(services: Services, target: Target, onUpgraded: OnUpgraded): Promise<CheckoutRow | null> {
  const now = new Date(services.now())
  const paid = await services.db.transaction(async (tx) => {
    const [row] = await tx
      .update(checkouts)
      .set({ status: 'paid', confirmedAt: now })
      .where(and(matches(target), ne(checkouts.status, 'paid')))
      .returning()
    if (!row) return null
    // Only a Free account changes: a second paid checkout leaves pro_since and the interval alone.
    await tx
      .update(accounts)
      .set({ plan: 'pro', planInterval: row.interval, proSince: now })
      .where(and(eq(accounts.id, row.accountId), eq(accounts.plan, 'free')))
    return row
  })
  if (paid) {
    // Credentials cached with the Free plan (API keys here, at_ verdicts everywhere) are dropped.
    await announceRevocation(services, `account:${paid.accountId}`)
    await onUpgraded(paid.accountId)
  }
  return paid
}

/** The local provider's confirm: only a pending, unexpired, local checkout, on a server running it. */
export async function confirmLocalCheckout(
  services: Services,
  provider: BillingProvider,
  id: string,
  onUpgraded: OnUpgraded,
): Promise<{ outcome: 'confirmed' | 'already_paid' | 'expired'; checkout: CheckoutRow } | null> {
  const row = await findCheckout(services, id)
  if (row?.provider !== 'local' || !provider.confirmsLocally) return null
  const state = checkoutState(row, services.now())
  if (state !== 'pending') return { outcome: state === 'paid' ? 'already_paid' : 'expired', checkout: row }
  const paid = await confirmCheckout(services, { id }, onUpgraded)
  return paid ? { outcome: 'confirmed', checkout: paid } : { outcome: 'already_paid', checkout: row }
}

/** The provider gave up on the checkout (Stripe's checkout.session.expired). A paid one stays paid. */
export async function expireCheckout(services: Pick<Services, 'db'>, provider: string, providerRef: string): Promise<boolean> {
  const rows = await services.db
    .update(checkouts)
    .set({ status: 'expired' })
    .where(and(eq(checkouts.provider, provider), eq(checkouts.providerRef, providerRef), eq(checkouts.status, 'pending')))
    .returning({ id: checkouts.id })
  return rows.length > 0
}
