import { t } from 'elysia'
import { FreeForm, Meta } from '../../plugins/errors'

export const AccountStatusResponse = t.Object(
  {
    success: t.Boolean(),
    data: t.Object({
      account_type: t.String({ examples: ['guest'] }),
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
          account_type: 'guest',
          email: null,
          plan: { name: 'guest', max_links: 10, max_requests: 100, link_expiry_days: 30 },
          usage: { links_created: 1, links_remaining: 9, requests_made: 3, requests_remaining: 97, expires_at: '2026-01-02T12:00:00.000Z' },
          features: { custom_alias: false, custom_domains: false, password_protection: false, custom_expiration: false, bulk: false, analytics: false, tags: false },
        },
        meta: { account_type: 'guest' },
      },
    ],
  },
)

export const accountModels = { AccountStatusResponse }
