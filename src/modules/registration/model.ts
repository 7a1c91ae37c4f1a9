// Request and response models of registration: POST /api/v1/guest/register and /api/v1/guest/verify.
import { t } from 'elysia'
import { FreeForm, Int, Meta } from '../../plugins/errors'
import { DEFAULT_LIMITS, planLimitsView } from '../../lib/plans'

const Email = t.String({
  format: 'email',
  maxLength: 254,
  description: 'Compared without case and surrounding spaces',
  examples: ['alice@example.com'],
})

export const RegisterRequest = t.Object({ email: Email }, { examples: [{ email: 'alice@example.com' }] })

export const RegisterResponse = t.Object(
  { success: t.Boolean(), message: t.String(), meta: Meta },
  {
    examples: [
      {
        success: true,
        message: 'A verification code was sent to alice@example.com. It is valid for 15 minutes.',
        meta: {
          account_type: 'guest',
          hint: 'POST /api/v1/guest/verify {"email", "code"} with this guest token.',
          usage: { links_created: 2, links_remaining: 8, requests_made: 4, requests_remaining: 96, expires_at: '2026-01-02T12:00:00.000Z' },
          notices: [],
          limitations: ['the code is valid for 15 minutes and 5 attempts'],
        },
      },
    ],
  },
)

export const VerifyRequest = t.Object(
  {
    email: Email,
    code: t.String({ minLength: 1, maxLength: 32, description: 'The six digits from the e-mail', examples: ['042917'] }),
  },
  { examples: [{ email: 'alice@example.com', code: '042917' }] },
)

export const VerifyResponse = t.Object(
  {
    success: t.Boolean(),
    data: t.Object({
      api_key: t.String({ pattern: '^mk_', description: 'Shown once; send it as Authorization: Bearer <api_key>' }),
      links_claimed: Int({ description: 'Links of the guest session now owned by the account', examples: [2] }),
      plan: t.String({ examples: ['free'] }),
      limits: FreeForm('Limits of the plan'),
    }),
    meta: Meta,
  },
  {
    examples: [
      {
        success: true,
        data: {
          api_key: 'mk_Zm9yLWV4YW1wbGUtb25seS1ub3QtYS1yZWFsLWtleS0xMjM0NTY3',
          links_claimed: 2,
          plan: 'free',
          limits: planLimitsView(DEFAULT_LIMITS, 'free'),
        },
        meta: {
          account_type: 'free',
          hint: 'Send the key as Authorization: Bearer <api_key>. It is shown only once.',
          notices: [{ type: 'guest_token_retired', message: 'The guest token no longer works; use the API key.' }],
          limitations: ['statistics need Pro (403 with basic totals on Free)'],
          upgrade: { url: 'https://api.example.com/api/v1/account/upgrade', method: 'POST' },
        },
      },
    ],
  },
)

export const registrationModels = { RegisterRequest, RegisterResponse, VerifyRequest, VerifyResponse }
