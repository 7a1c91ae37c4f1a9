import { t } from 'elysia'
import { Int, Meta } from '../../plugins/errors'

/** The guest limits (docs/decisions/0002-guest-limits.md); returned to the client as `limits`. */
export const GUEST_LIMITS = { max_links: 10, max_requests: 100, expires_in_seconds: 86_400 } as const

export const GuestLimits = t.Object({
  max_links: Int({ examples: [10] }),
  max_requests: Int({ examples: [100] }),
  expires_in_seconds: Int({ examples: [86400] }),
})

export const GuestTokenResponse = t.Object(
  {
    success: t.Boolean(),
    data: t.Object({
      guest_token: t.String({ pattern: '^gt_', description: 'Shown once; send it as Authorization: Bearer <guest_token>' }),
      expires_at: t.String({ format: 'date-time' }),
      limits: GuestLimits,
    }),
    meta: Meta,
  },
  {
    examples: [
      {
        success: true,
        data: {
          guest_token: 'gt_Qm9vdHN0cmFwcGVkLWJ5LWEtZ3Vlc3QtdG9rZW4tZXhhbXBsZQ',
          expires_at: '2026-01-02T12:00:00.000Z',
          limits: { max_links: 10, max_requests: 100, expires_in_seconds: 86400 },
        },
        meta: { hint: 'Send the token as Authorization: Bearer <guest_token>.' },
      },
    ],
  },
)

export const guestModels = { GuestTokenResponse }
