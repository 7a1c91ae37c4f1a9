// Endpoints for the redirector only, authenticated with the shared x-internal-secret header and hidden
// from the public Swagger document:
// - GET /internal/resolve: a link's cache record on a cache miss.
// - POST /internal/unlock: checks the password a visitor typed into a protected link's form.
import { Elysia } from 'elysia'
import { cachedLinkFor, LINK_CACHE_VERSION_HEADER } from '../../../core/link-cache'
import { errorResponses, errors } from '../../plugins/errors'
import { internalSecretGuard } from '../../plugins/internal-secret'
import type { Services } from '../../services'
import { internalModels } from './model'
import { resolveLink, unlockLink } from './service'

/** The newest cache record version the asking redirector reads: 1 when it does not say (the release before routing). */
function readerVersion(request: Request): number {
  return Number(request.headers.get(LINK_CACHE_VERSION_HEADER) ?? 1) || 1
}

export function internalModule(services: Services) {
  const requireSecret = internalSecretGuard(services.config)
  return new Elysia({ name: 'modules.internal' })
    .use(errors)
    .model(internalModels)
    .get(
      '/internal/resolve',
      async ({ query, set, request }) => {
        set.headers['cache-control'] = 'no-store'
        return cachedLinkFor(await resolveLink(services, query.domain, query.alias), readerVersion(request))
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
      async ({ body, set, request }) => {
        set.headers['cache-control'] = 'no-store'
        return cachedLinkFor(await unlockLink(services, body), readerVersion(request))
      },
      {
        transform: requireSecret,
        body: 'UnlockRequest',
        response: { 200: 'CachedLinkResponse', ...errorResponses('VALIDATION_FAILED', 'UNAUTHORIZED', 'PASSWORD_INCORRECT', 'LINK_NOT_FOUND', 'RATE_LIMITED') },
        detail: { hide: true },
      },
    )
}
