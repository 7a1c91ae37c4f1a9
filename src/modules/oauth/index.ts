// The OAuth 2.1 authorization server for machine clients (RFC 6749 shapes: top-level fields, lower-case
// error codes, no `data` envelope). This step: dynamic client registration (RFC 7591). Authorization,
// consent, tokens, revocation and the discovery documents that name them come with them.
import { Elysia } from 'elysia'
import { enforceIpLimit } from '../../plugins/client'
import { errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { oauthModels } from './model'
import { registerClient } from './register'

/** Registrations per client IP: a host registers once per install; a loop of them is abuse. */
export const REGISTER_RATE = { limit: 20, windowMs: 3_600_000 } as const

export function oauthModule(services: Services) {
  return new Elysia({ name: 'modules.oauth' })
    .use(errors)
    .model(oauthModels)
    .post(
      '/oauth/register',
      async ({ body, request, server, set }) => {
        await enforceIpLimit(services, request, server, 'oauth-register', REGISTER_RATE)
        const client = await registerClient(services, body)
        set.status = 201
        set.headers['cache-control'] = 'no-store'
        return client
      },
      {
        response: { 201: 'ClientRegistration', 400: 'OAuthErrorResponse', 429: 'OAuthErrorResponse' },
        detail: {
          operationId: 'registerOAuthClient',
          tags: ['oauth'],
          summary: 'Register an OAuth client (RFC 7591)',
          description:
            `Public clients only: any token_endpoint_auth_method is registered as "none" and the answer says so. redirect_uris: https, http on a loopback host (any port), or a reverse-DNS private-use scheme; no fragments. Errors are RFC 7591 bodies: 400 invalid_redirect_uri or invalid_client_metadata. ${REGISTER_RATE.limit} registrations an hour per client IP (429 with Retry-After).`,
          security: [],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/ClientRegistrationRequest' } } } },
          'x-oauth': true,
        } as Record<string, unknown>,
      },
    )
}
