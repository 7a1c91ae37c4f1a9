// Endpoints for the redirector only, authenticated with the shared x-internal-secret header and hidden
// from the public Swagger document:
// - GET /internal/resolve: a link's cache record on a cache miss.
// - POST /internal/unlock: checks the password a visitor typed into a protected link's form.
import { Elysia } from 'elysia'
import { cachedLinkFor, LINK_CACHE_VERSION_HEADER } from '../../../core/link-cache'
import { ApiError, errorResponses, errors } from '../../plugins/errors'
import { internalSecretGuard } from '../../plugins/internal-secret'
import type { Services } from '../../services'
import { internalModels } from './model'
import { resolveLink, unlockLink } from './service'
import { fileReport, findLink } from '../reports/service'
import { normalizeHost } from '../links/url'

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
        const record = cachedLinkFor(await resolveLink(services, query.domain, query.alias), readerVersion(request))
        if (!record) throw new ApiError('LINK_NOT_FOUND')
        return record
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
        const record = cachedLinkFor(await unlockLink(services, body), readerVersion(request))
        if (!record) throw new ApiError('LINK_NOT_FOUND')
        return record
      },
      {
        transform: requireSecret,
        body: 'UnlockRequest',
        response: { 200: 'CachedLinkResponse', ...errorResponses('VALIDATION_FAILED', 'UNAUTHORIZED', 'PASSWORD_INCORRECT', 'LINK_NOT_FOUND', 'RATE_LIMITED') },
        detail: { hide: true },
      },
    )
    .get(
      '/internal/inspect',
      async ({ query, set }) => {
        set.headers['cache-control'] = 'no-store'
        const link = await findLink(services, normalizeHost(query.domain), query.alias)
        return { url: link.passwordHash ? null : link.url, created_at: link.createdAt.toISOString(), by: link.accountId === null ? 'guest' : 'account', state: link.state }
      },
      { transform: requireSecret, query: 'ResolveQuery', detail: { hide: true } },
    )
    .post(
      '/internal/report',
      async ({ body, set }) => {
        set.headers['cache-control'] = 'no-store'
        const link = await findLink(services, normalizeHost(body.domain), body.alias)
        const { id, created } = await fileReport(services, link, body, body.ip)
        set.status = created ? 201 : 200
        return { id }
      },
      { transform: requireSecret, body: 'InternalReportRequest', detail: { hide: true } },
    )
}
