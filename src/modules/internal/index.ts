// GET /internal/resolve: for the redirector on a cache miss. Authenticated with the shared
// x-internal-secret header, hidden from the public Swagger document.
import { Elysia } from 'elysia'
import { ApiError, errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { internalModels } from './model'
import { resolveLink, secretMatches } from './service'

export const INTERNAL_SECRET_HEADER = 'x-internal-secret'

export function internalModule(services: Services) {
  return new Elysia({ name: 'modules.internal' })
    .use(errors)
    .model(internalModels)
    .get(
      '/internal/resolve',
      async ({ query, set }) => {
        set.headers['cache-control'] = 'no-store'
        return resolveLink(services, query.domain, query.alias)
      },
      {
        // Checked before the query is validated: a caller without the secret learns nothing.
        transform({ request }) {
          if (!secretMatches(request.headers.get(INTERNAL_SECRET_HEADER), services.config.internalSecret)) {
            throw new ApiError('UNAUTHORIZED', `Missing or wrong ${INTERNAL_SECRET_HEADER} header.`)
          }
        },
        query: 'ResolveQuery',
        response: { 200: 'CachedLinkResponse', ...errorResponses(400, 401, 404) },
        detail: { hide: true },
      },
    )
}
