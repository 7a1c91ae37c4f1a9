import { t } from 'elysia'
import { FreeForm, Meta } from '../../plugins/errors'
import { GUEST_LIMITS } from '../guest/model'
import { DEFAULT_LIMITS, DEFAULT_LINK_TTL_DAYS, planLimitsView } from '../../lib/plans'

// The API document shows the default limits (docs/configuration.md#plan-limits); responses show the deployment's.
const FREE = DEFAULT_LIMITS.plans.free

export const AccountStatusResponse = t.Object(
  {
    success: t.Boolean(),
    data: t.Object({
      account_type: t.String({ description: "'guest' for a guest token; the plan ('free' or 'pro') for an API key", examples: ['free'] }),
      email: t.Union([t.String(), t.Null()]),
      plan: FreeForm('Plan name and its limits'),
      usage: FreeForm('What this credential has used and has left'),
      features: FreeForm('What the plan allows'),
    }),
    meta: Meta,
  },
  {
    examples: [
      {
        success: true,
        data: {
          account_type: 'free',
          email: 'alice@example.com',
          plan: {
            name: 'free',
            interval: null,
            pro_since: null,
            limits: planLimitsView(DEFAULT_LIMITS, 'free'),
          },
          usage: {
            links_this_month: 12,
            links_per_month: FREE.linksPerMonth,
            links_remaining: FREE.linksPerMonth - 12,
            period_start: '2026-01-01T00:00:00.000Z',
            period_resets_at: '2026-02-01T00:00:00.000Z',
            requests_this_minute: 3,
            requests_per_minute: FREE.requestsPerMinute,
            requests_remaining: FREE.requestsPerMinute - 3,
            requests_reset_at: '2026-01-14T12:01:00.000Z',
          },
          features: {
            custom_alias: true,
            custom_domains: true,
            password_protection: true,
            custom_expiration: true,
            scheduled_activation: true,
            bulk: true,
            link_management: true,
            tags: true,
            analytics: false,
            conversions: false,
          },
        },
        meta: {
          account_type: 'free',
          usage: { links_this_month: 12, links_remaining: FREE.linksPerMonth - 12, requests_remaining: FREE.requestsPerMinute - 3 },
          notices: [],
          limitations: ['statistics need Pro (403 with basic totals on Free)'],
          upgrade: { url: 'https://api.example.com/api/v1/account/upgrade', method: 'POST', prices: { monthly: '9.00 USD', yearly: '90.00 USD' } },
        },
      },
      {
        success: true,
        data: {
          account_type: 'guest',
          email: null,
          plan: { name: 'guest', max_links: GUEST_LIMITS.max_links, max_requests: GUEST_LIMITS.max_requests, link_expiry_days: DEFAULT_LINK_TTL_DAYS },
          usage: { links_created: 1, links_remaining: GUEST_LIMITS.max_links - 1, requests_made: 3, requests_remaining: GUEST_LIMITS.max_requests - 3, expires_at: '2026-01-02T12:00:00.000Z' },
          features: { custom_alias: false, custom_domains: false, password_protection: false, custom_expiration: false, bulk: false, analytics: false, tags: false },
        },
        meta: { account_type: 'guest' },
      },
    ],
  },
)

const NOTIFICATIONS_EXAMPLE = { approval_emails: true }

export const NotificationsResponse = t.Object(
  {
    success: t.Literal(true),
    data: t.Object({
      approval_emails: t.Boolean({ description: "Whether each new approval of an Agent's call is mailed to the account's address, with the page where it is decided" }),
    }),
    meta: Meta,
  },
  { examples: [{ success: true, data: NOTIFICATIONS_EXAMPLE, meta: {} }] },
)

export const NotificationsRequest = t.Object(
  { approval_emails: t.Optional(t.Boolean({ description: 'false: approvals are no longer mailed (they are still listed, and still webhook events); true: they are again' })) },
  { description: 'Only the settings sent change', examples: [{ approval_emails: false }] },
)

export const accountModels = {
  AccountStatusResponse,
  NotificationsResponse,
  NotificationsRequest,
}
