// POST /api/v1/shorten and POST /api/v1/alias/check.
import { Elysia } from 'elysia'
import { authPlugin } from '../../plugins/auth'
import { clientIp, enforceRateLimit } from '../../plugins/client'
import { ApiError, errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { guestUpgrade } from '../guest/service'
import { linkModels } from './model'
import { ALIAS_CHECK_RATE, aliasExists, shortenAsGuest } from './service'

export function linksModule(services: Services) {
  return new Elysia({ name: 'modules.links' })
    .use(errors)
    .use(authPlugin(services))
    .model(linkModels)
    .post(
      '/api/v1/shorten',
      async ({ body, principal }) => {
        // TODO(issue 3, links): the full request shape for API keys.
        if (principal.kind !== 'guest') throw new ApiError('UNAUTHORIZED', 'API keys are not accepted here yet.')
        const { link, usage, notices } = await shortenAsGuest(services, principal.guest, body)
        return {
          success: true,
          data: link,
          meta: { account_type: 'guest', usage, notices, upgrade: guestUpgrade(services) },
        }
      },
      {
        auth: 'gt/mk',
        body: 'ShortenRequest',
        response: { 200: 'LinkResponse', ...errorResponses(400, 401, 403, 409, 413, 429) },
        detail: {
          tags: ['links'],
          summary: 'Create a short link',
          description:
            'With a guest token only `url` is applied; alias, domain, password, expiration and activated_at are ignored and listed in meta.notices. Links expire after 30 days by default.',
        },
      },
    )
    .post(
      '/api/v1/alias/check',
      async ({ body, request, server, set }) => {
        const ip = clientIp(services, request, server)
        const { limit, windowMs } = ALIAS_CHECK_RATE
        Object.assign(set.headers, await enforceRateLimit(services.limiter, `alias-check:${ip}`, limit, windowMs, services.now()))
        return { exists: await aliasExists(services, body.alias, body.domain) }
      },
      {
        body: 'AliasCheckRequest',
        response: { 200: 'AliasCheckResponse', ...errorResponses(400, 413, 429) },
        detail: {
          tags: ['links'],
          summary: 'Check whether an alias is taken',
          description: `Reserved words count as taken on the default domain. ${ALIAS_CHECK_RATE.limit} checks a minute per client IP.`,
        },
      },
    )
}
