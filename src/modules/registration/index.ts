// Turning a guest session into an account (service.ts): POST /api/v1/guest/register mails a code,
// POST /api/v1/guest/verify checks it and creates the Free account and its API key. Guest token only.
import { Elysia } from 'elysia'
import { createMailer } from '../../mail/mailer'
import type { Auth } from '../../plugins/auth'
import { errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { guestMeta } from '../guest/service'
import { CODE_TTL_MS, MAX_CODE_ATTEMPTS, normalizeEmail, requestVerificationCode, verifyEmailCode } from './service'
import { registrationModels } from './model'
import { accountMeta, linksCreatedThisMonth } from '../account/meta'
import { planLimitsView } from '../../lib/plans'
import { log } from '../../lib/log'

/** Normalised before validation, so " Alice@Example.com " is checked (and stored) as alice@example.com. */
function normalizeBodyEmail(context: { body: unknown }) {
  const body = context.body as { email?: unknown } | null
  if (body && typeof body.email === 'string') body.email = normalizeEmail(body.email)
}

export function registrationModule(services: Services, auth: Auth) {
  const mailer = createMailer(services.config.mail)
  if (!services.config.embedded && mailer.kind === 'outbox') {
    log.warn({ component: 'mail', outbox: services.config.mail.outboxPath }, 'SMTP_URL is not set: verification codes are not sent, only logged (development outbox) and written to the outbox file')
  }
  return new Elysia({ name: 'modules.registration' })
    .use(errors)
    .use(auth.plugin)
    .model(registrationModels)
    .post(
      '/api/v1/guest/register',
      async ({ body, guest }) => {
        const { email } = await requestVerificationCode(services, mailer, guest, body.email)
        const minutes = CODE_TTL_MS / 60_000
        return {
          success: true,
          message: `A verification code was sent to ${email}. It is valid for ${minutes} minutes.`,
          meta: guestMeta(services, guest, {
            hint: 'POST /api/v1/guest/verify {"email", "code"} with this guest token to create the account and get an API key.',
            notices:
              mailer.kind === 'outbox'
                ? [{ type: 'development_delivery', message: 'This server has no mail relay (SMTP_URL): the code was written to the server log and its outbox file instead of being sent.' }]
                : [],
            limitations: [
              `the code is valid for ${minutes} minutes and ${MAX_CODE_ATTEMPTS} attempts; a new request replaces it`,
              'one code a minute and five an hour per address; five an hour per guest token',
            ],
          }),
        }
      },
      {
        guest: true,
        body: 'RegisterRequest',
        transform: normalizeBodyEmail,
        response: { 200: 'RegisterResponse', ...errorResponses('EMAIL_TAKEN', 'RATE_LIMITED', 'MAIL_UNAVAILABLE') },
        detail: {
          operationId: 'registerGuest',
          tags: ['guest'],
          summary: 'Send a verification code to an e-mail address',
          description: `Guest token only. Mails a six-digit code, valid ${CODE_TTL_MS / 60_000} minutes, ${MAX_CODE_ATTEMPTS} attempts. 409 EMAIL_TAKEN when the address already has an account; 429 RATE_LIMITED for more than one code a minute or five an hour per address, or five an hour per guest token.`,
        },
      },
    )
    .post(
      '/api/v1/guest/verify',
      async ({ body, guest }) => {
        const { accountId, apiKey, linksClaimed } = await verifyEmailCode(services, guest, body.email, body.code)
        return {
          success: true,
          data: { api_key: apiKey, links_claimed: linksClaimed, plan: 'free', limits: planLimitsView(services.config.limits, 'free') },
          meta: accountMeta(services, {
            plan: 'free',
            linksThisMonth: await linksCreatedThisMonth(services, accountId),
            // The new key has not been used yet: its whole first minute is left.
            requestsRemaining: services.config.limits.plans.free.requestsPerMinute,
            hint: 'Send the key as Authorization: Bearer <api_key>. It is shown only once.',
            notices: [{ type: 'guest_token_retired', message: 'The guest session became this account: its token no longer works; use the API key.' }],
          }),
        }
      },
      {
        guest: true,
        body: 'VerifyRequest',
        transform: normalizeBodyEmail,
        response: { 200: 'VerifyResponse', ...errorResponses('INVALID_CODE', 'CODE_EXPIRED', 'EMAIL_TAKEN', 'TOO_MANY_ATTEMPTS') },
        detail: {
          operationId: 'verifyGuest',
          tags: ['guest'],
          summary: 'Verify the code: create the account and its API key',
          description:
            "Guest token only. Creates a Free account, returns its API key once, and moves the guest's links to the account (links_claimed); the guest token stops working. 400 INVALID_CODE (remaining = attempts left) or CODE_EXPIRED; 429 TOO_MANY_ATTEMPTS after five wrong codes; 409 EMAIL_TAKEN when the address already has an account.",
        },
      },
    )
}
