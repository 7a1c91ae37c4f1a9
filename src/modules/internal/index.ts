// Endpoints for the redirector only, authenticated with the shared x-internal-secret header and hidden
// from the public Swagger document:
// - GET /internal/resolve: a link's cache record on a cache miss.
// - POST /internal/unlock: checks the password a visitor typed into a protected link's form.
import { Elysia } from 'elysia'
import { errorResponses, errors } from '../../plugins/errors'
import { internalSecretGuard } from '../../plugins/internal-secret'
import type { Services } from '../../services'
import { internalModels } from './model'
import { resolveLink, unlockLink } from './service'

export function internalModule(services: Services) {
  const requireSecret = internalSecretGuard(services.config)
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
        transform: requireSecret,
        query: 'ResolveQuery',
        response: { 200: 'CachedLinkResponse', ...errorResponses('VALIDATION_FAILED', 'UNAUTHORIZED', 'LINK_NOT_FOUND') },
        detail: { hide: true },
      },
    )
    .post(
      '/internal/unlock',
      async ({ body, set }) => {
        set.headers['cache-control'] = 'no-store'
        return unlockLink(services, body)
      },
      {
        transform: requireSecret,
        body: 'UnlockRequest',
        response: { 200: 'CachedLinkResponse', ...errorResponses('VALIDATION_FAILED', 'UNAUTHORIZED', 'PASSWORD_INCORRECT', 'LINK_NOT_FOUND', 'RATE_LIMITED') },
        detail: { hide: true },
      },
    )
}
