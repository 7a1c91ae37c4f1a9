import type { Principal } from '../../plugins/auth'
import { GUEST_LIMITS, guestUsage } from '../guest/service'
import { DEFAULT_LINK_TTL_MS } from '../links/service'

/** What a guest session may do: only `url` on shorten, and account status. */
const GUEST_FEATURES = {
  custom_alias: false,
  custom_domains: false,
  password_protection: false,
  custom_expiration: false,
  scheduled_activation: false,
  bulk: false,
  link_management: false,
  analytics: false,
  tags: false,
  conversions: false,
}

export function accountStatus(principal: Extract<Principal, { kind: 'guest' }>) {
  const { guest } = principal
  return {
    account_type: 'guest',
    email: null,
    plan: {
      name: 'guest',
      max_links: GUEST_LIMITS.max_links,
      max_requests: GUEST_LIMITS.max_requests,
      link_expiry_days: DEFAULT_LINK_TTL_MS / 86_400_000,
    },
    usage: guestUsage(guest),
    features: { ...GUEST_FEATURES },
  }
}
