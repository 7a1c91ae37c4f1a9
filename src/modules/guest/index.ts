// POST /api/v1/guest/token: start a guest session without signing up. Turning it into an account
// (POST /api/v1/guest/register and /verify) is the registration module (src/modules/registration/).
import { Elysia } from 'elysia'
import { enforceIpLimit } from '../../plugins/client'
import { errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { guestModels } from './model'
import { GUEST_LIMITS } from './model'
import { createGuestSession, GUEST_TOKEN_RATE } from './service'

export function guestModule(services: Services) {
  return new Elysia({ name: 'modules.guest' })
    .use(errors)
    .model(guestModels)
    .post(
      '/api/v1/guest/token',
      async ({ request, server, set }) => {
        Object.assign(set.headers, await enforceIpLimit(services, request, server, 'guest-token', GUEST_TOKEN_RATE))
        const { token, session } = await createGuestSession(services)
        set.headers['cache-control'] = 'no-store'
        return {
          success: true,
          data: { guest_token: token, expires_at: session.expiresAt.toISOString(), limits: { ...GUEST_LIMITS } },
          meta: {
            hint: 'Send the token as Authorization: Bearer <guest_token>. It is shown only once.',
            limitations: [
              `at most ${GUEST_LIMITS.max_links} links and ${GUEST_LIMITS.max_requests} requests`,
              'only url is applied when shortening: alias, domain, password, expiration and activated_at are ignored',
              `the token expires after ${GUEST_LIMITS.expires_in_seconds / 3600} hours; its links after 30 days`,
            ],
          },
        }
      },
      {
        response: { 200: 'GuestTokenResponse', ...errorResponses('PAYLOAD_TOO_LARGE', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE') },
        detail: {
          operationId: 'createGuestToken',
          tags: ['guest'],
          summary: 'Create a guest token',
          description: `No signup. ${GUEST_TOKEN_RATE.limit} tokens an hour per client IP. Takes no body (an empty one or any valid JSON is accepted and ignored).`,
        },
      },
    )
}
