// Links: POST /shorten, POST /alias/check, and the API-key endpoints under /links (list, bulk create,
// get, update, delete).
import { Elysia } from 'elysia'
import type { Auth } from '../../plugins/auth'
import type { AgentGrant } from '../../plugins/principal'
import { clientIp, enforceIpLimit } from '../../plugins/client'
import { ApiError, ERROR_CODES_KEYWORD, errorResponses, errors } from '../../plugins/errors'
import { idempotencyPlugin } from '../../plugins/idempotency'
import type { Services } from '../../services'
import { guestMeta } from '../guest/service'
import { bulkCreate } from './bulk'
import { shortenAsAccount } from './create'
import { deleteLink, getOwnLink, readOwnLink, updateLink } from './manage'
import { listLinks } from './list'
import { AliasParams, DryRunQuery, LinkListQuery, LinkQuery, LinkWriteQuery, linkModels, MAX_BULK_LINKS } from './model'
import { accountMeta, currentAccountMeta } from '../account/meta'
import { DEFAULT_LIMITS, DEFAULT_LINK_TTL_DAYS } from '../../lib/plans'
import { ALIAS_CHECK_RATE, aliasExists, shortenAsGuest, toLinkRecord } from './service'
import { clickNotices, clickTotals, withClicks } from './clicks'
import { completeIfDue } from './routing-manage'
import { routingRoutes } from './routing-routes'
import { checkQrSize, noneMatch, QR_DEFAULT_SIZE, QR_MAX_AGE_SECONDS, QR_MAX_SIZE, QR_MIN_SIZE, QR_PNG_MAX_SIZE, qrEtag, qrHeaders, QrQuery } from './qr'
import { processQrImages, type QrImages } from './qr-cache'
import { QR_CONTENT_TYPES } from './qr-draw'

const QR_ERRORS = errorResponses('VALIDATION_FAILED', 'LINK_NOT_FOUND', 'QR_BUSY')

const DOMAIN_QUERY_NOTE = 'The `domain` query parameter names the domain that owns the alias (default: the service default domain).'

/**
 * Routing given with a new link is the Agent operation links.routing too: an Agent whose policy holds it
 * for a human sets it with PUT …/routing (held there), never unseen through a create.
 */
function refuseHeldRouting(agent: AgentGrant | undefined, field: string): void {
  if (agent && agent.approvalId === undefined && agent.requireApproval.includes('links.routing')) {
    throw new ApiError(
      'VALIDATION_FAILED',
      `${field}: your Agent's policy holds links.routing for a human's approval; create the link without routing, then set it with PUT /api/v1/links/{alias}/routing.`,
    )
  }
}

/** `qrImages`: where QR codes are drawn and kept (default the process's render pool and cache; tests give their own). */
export function linksModule(services: Services, auth: Auth, qrImages: QrImages = processQrImages()) {
  return new Elysia({ name: 'modules.links' })
    .use(errors)
    .use(auth.plugin)
    .use(idempotencyPlugin(services))
    .model(linkModels)
    .use(routingRoutes(services, auth))
    .post(
      '/api/v1/shorten',
      async ({ body, principal, query, request, server }) => {
        const dryRun = query.dry_run === 'true'
        if (principal.kind === 'account') {
          if (body.routing !== undefined) refuseHeldRouting(principal.agent, 'body.routing')
          const { link, meta } = await shortenAsAccount(services, principal.account, body, dryRun)
          return { success: true, data: link, meta: dryRun ? { ...meta, dry_run: true } : meta }
        }
        if (dryRun) throw new ApiError('VALIDATION_FAILED', 'query.dry_run: previews are for API keys and Agent tokens, not guest tokens.')
        const { link, guest, notices } = await shortenAsGuest(services, principal.guest, body, clientIp(services, request, server))
        return {
          success: true,
          data: link,
          meta: guestMeta(services, guest, { notices }),
        }
      },
      {
        guestOrAccount: { scopes: ['links:write'], operation: 'links.create', dryRun: true },
        idempotent: true,
        query: DryRunQuery,
        body: 'ShortenRequest',
        response: {
          200: 'LinkResponse',
          ...errorResponses('INVALID_URL', 'DESTINATION_LOOPS', 'DESTINATION_BLOCKED', 'DOMAIN_NOT_ALLOWED', 'ALIAS_TAKEN', 'GUEST_LINK_LIMIT', 'GUEST_NETWORK_LIMIT', 'LINK_QUOTA_EXCEEDED'),
        },
        detail: {
          operationId: 'createLink',
          tags: ['links'],
          summary: 'Create a short link',
          description:
            'With a guest token only `url` is applied; alias, domain, password, expiration and activated_at are ignored and listed in meta.notices. ' +
            'With an API key every field applies: `alias` (4-64 characters on the default domain, 1-64 on a verified custom domain; taken or reserved: 409 ALIAS_TAKEN), ' +
            '`domain` (a verified custom domain of the account, else 403 DOMAIN_NOT_ALLOWED), `password` (visitors get a form), `expiration` (in the future) and `activated_at` (404 until then). ' +
            `Links expire after ${DEFAULT_LINK_TTL_DAYS} days by default. Each plan creates a number of links a calendar month (UTC): ` +
            `Free ${DEFAULT_LIMITS.plans.free.linksPerMonth.toLocaleString('en-US')}, Pro ${DEFAULT_LIMITS.plans.pro.linksPerMonth.toLocaleString('en-US')}; beyond that 429 LINK_QUOTA_EXCEEDED with limit, remaining and upgrade_url.`,
        },
      },
    )
    .post(
      '/api/v1/alias/check',
      async ({ body, request, server, set }) => {
        Object.assign(set.headers, await enforceIpLimit(services, request, server, 'alias-check', ALIAS_CHECK_RATE))
        return { exists: await aliasExists(services, body.alias, body.domain) }
      },
      {
        body: 'AliasCheckRequest',
        response: { 200: 'AliasCheckResponse', ...errorResponses('VALIDATION_FAILED', 'MALFORMED_JSON', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE') },
        detail: {
          operationId: 'checkAlias',
          tags: ['links'],
          summary: 'Check whether an alias is taken',
          description: `Reserved words count as taken on the default domain. ${ALIAS_CHECK_RATE.limit} checks a minute per client IP.`,
        },
      },
    )
    .get(
      '/api/v1/links',
      async ({ query, account }) => {
        const { data, linksThisMonth } = await listLinks(services, account, query)
        return { success: true, data, meta: accountMeta(services, { plan: account.plan, linksThisMonth, notices: clickNotices(data.links) }) }
      },
      {
        account: { scopes: ['links:read'] },
        query: LinkListQuery,
        response: { 200: 'LinkListResponse', ...errorResponses('VALIDATION_FAILED', 'TAG_NOT_FOUND', 'SERVICE_UNAVAILABLE') },
        detail: {
          operationId: 'listLinks',
          tags: ['links'],
          summary: "List the account's links",
          description:
            '`sort`: `created_desc` newest first (the default), `created_asc` oldest first, `clicks_desc` most human clicks of all time first (ties: newest first); another value is 400 VALIDATION_FAILED. ' +
            'Page with `cursor` (pass `data.pagination.next_cursor`, null on the last page; preferred) or `offset`; with both, offset counts from the cursor. A cursor belongs to its sort: keep the sort while paging. ' +
            'Under `clicks_desc` counts are read per page: a link whose count overtakes the cursor while you page is not shown again, nor repeated; when click counts are unavailable it is 503 SERVICE_UNAVAILABLE (the other sorts answer without them). ' +
            '`search` matches a substring of the alias or the destination, case-insensitively (% and _ match themselves). `domain` keeps the links of one domain. ' +
            "`tag` keeps the links carrying one of your tags (its id, as in GET /api/v1/tags); an unknown tag or another account's is 404 TAG_NOT_FOUND, as on the tag routes. " +
            'The filters combine; `total` counts every link matching all of them.',
        },
      },
    )
    .post(
      '/api/v1/links/bulk',
      async ({ body, account, query, principal }) => {
        const dryRun = query.dry_run === 'true'
        body.links.forEach((item, i) => {
          if (typeof item === 'object' && item !== null && (item as { routing?: unknown }).routing !== undefined) refuseHeldRouting(principal.agent, `links[${i}].routing`)
        })
        const { results, summary, meta } = await bulkCreate(services, account, body.links, dryRun)
        return { success: true, data: { results, summary }, meta: dryRun ? { ...meta, dry_run: true } : meta }
      },
      {
        account: { scopes: ['links:write'], operation: 'links.create', dryRun: true },
        idempotent: true,
        query: DryRunQuery,
        body: 'BulkRequest',
        response: { 200: 'BulkResponse', ...errorResponses() },
        detail: {
          operationId: 'createLinks',
          tags: ['links'],
          summary: 'Create up to 100 links at once',
          description:
            `At most ${MAX_BULK_LINKS} items (400 beyond). Each item is a shorten request, created or refused on its own: a bad item fails alone and is reported ` +
            'with its index, the error code, status and hint; items are created in order, so of two asking for one alias the first wins. ' +
            'The monthly link quota applies per item. The response is 200 whenever the request itself is valid; read data.summary.',
        },
      },
    )
    .get(
      '/api/v1/links/:alias',
      async ({ params, query, account }) => {
        // An A/B test whose time has come is ended first: its winner is the URL this answer shows.
        const row = await completeIfDue(services, await readOwnLink(services, account, params.alias, query.domain))
        const data = withClicks(toLinkRecord(row, services), row.id, await clickTotals(services, [row.id]))
        return { success: true, data, meta: await currentAccountMeta(services, account, { notices: clickNotices([data]) }) }
      },
      {
        account: { scopes: ['links:read'] },
        params: AliasParams,
        query: LinkQuery,
        response: { 200: 'LinkResponse', ...errorResponses('VALIDATION_FAILED', 'LINK_NOT_FOUND') },
        detail: { operationId: 'getLink', tags: ['links'], summary: 'Get one link', description: `${DOMAIN_QUERY_NOTE} Another account's link is 404.` },
      },
    )
    .get(
      '/api/v1/links/:alias/qr',
      async ({ params, query, account, request }) => {
        const format = query.format ?? 'svg'
        const size = query.size ?? QR_DEFAULT_SIZE
        checkQrSize(format, size)
        const row = await getOwnLink(services, account, params.alias, query.domain)
        const text = toLinkRecord(row, services).short_url
        const etag = qrEtag(text, format, size)
        if (noneMatch(request.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers: qrHeaders(etag) })
        // Drawn on a render thread, never this one; once per process for each image (qr-pool.ts, qr-cache.ts).
        const body = await qrImages.image(etag, { text, format, size })
        return new Response(body, { headers: { ...qrHeaders(etag), 'content-type': QR_CONTENT_TYPES[format] } })
      },
      {
        account: { scopes: ['links:read'] },
        params: AliasParams,
        query: QrQuery,
        response: QR_ERRORS,
        detail: {
          operationId: 'getLinkQrCode',
          tags: ['links'],
          summary: 'QR code of a link',
          description:
            `The link's short_url as a QR code (error correction M): \`format\` svg (default) or png, \`size\` in pixels (default ${QR_DEFAULT_SIZE}): ` +
            `${QR_MIN_SIZE}-${QR_MAX_SIZE} for an SVG, ${QR_MIN_SIZE}-${QR_PNG_MAX_SIZE} for a PNG (${QR_PNG_MAX_SIZE} prints 8.7 cm at 300 dpi; the SVG scales to any size); out of range 400 VALIDATION_FAILED. ${DOMAIN_QUERY_NOTE} ` +
            `Cacheable: a strong ETag of what the image encodes, its format and size, and Cache-Control: private, max-age=${QR_MAX_AGE_SECONDS}; send If-None-Match to get 304 without a body. ` +
            "Another account's link is 404, as on GET /api/v1/links/{alias}. " +
            'Images are drawn by a small pool of render threads with a bounded queue: when it is full, or an image has waited 5 s for a thread, the answer is 429 QR_BUSY with Retry-After. An image drawn before is served from memory.',
          responses: {
            200: {
              description: 'The image',
              headers: {
                ETag: { description: 'Strong validator of the image', schema: { type: 'string' } },
                'Cache-Control': { description: `private, max-age=${QR_MAX_AGE_SECONDS}`, schema: { type: 'string' } },
              },
              content: { 'image/svg+xml': { schema: { type: 'string' } }, 'image/png': { schema: { type: 'string', format: 'binary' } } },
            },
            304: { description: 'If-None-Match named the current ETag: no body; ETag and Cache-Control repeated' },
            // Given here, the responses replace those of `response`: the errors are named again for the document.
            ...Object.fromEntries(Object.keys(QR_ERRORS).map((status) => [status, { [ERROR_CODES_KEYWORD]: QR_ERRORS[Number(status) as keyof typeof QR_ERRORS][ERROR_CODES_KEYWORD] }])),
          },
        },
      },
    )
    .patch(
      '/api/v1/links/:alias',
      async ({ params, query, body, account }) => {
        const dryRun = query.dry_run === 'true'
        const row = await updateLink(services, account, params.alias, query.domain, body, dryRun)
        const data = withClicks(toLinkRecord(row, services), row.id, await clickTotals(services, [row.id]))
        const meta = await currentAccountMeta(services, account, { notices: clickNotices([data]) })
        return { success: true, data, meta: dryRun ? { ...meta, dry_run: true } : meta }
      },
      {
        account: { scopes: ['links:write'], operation: 'links.update', dryRun: true },
        idempotent: true,
        params: AliasParams,
        query: LinkWriteQuery,
        body: 'UpdateLinkRequest',
        response: { 200: 'LinkResponse', ...errorResponses('VALIDATION_FAILED', 'INVALID_URL', 'DESTINATION_LOOPS', 'DESTINATION_BLOCKED', 'DOMAIN_NOT_ALLOWED', 'LINK_NOT_FOUND', 'ALIAS_TAKEN') },
        detail: {
          operationId: 'updateLink',
          tags: ['links'],
          summary: 'Change a link',
          description:
            `${DOMAIN_QUERY_NOTE} Fields left out keep their value; null removes the password, the expiry (the link never expires) or the activation time. ` +
            "Values are checked as on create. Redirectors follow the change within a second. Another account's link is 404 and unchanged.",
        },
      },
    )
    .delete(
      '/api/v1/links/:alias',
      async ({ params, query, account }) => {
        const dryRun = query.dry_run === 'true'
        const link = await deleteLink(services, account, params.alias, query.domain, dryRun)
        const meta = await currentAccountMeta(services, account)
        if (dryRun) return { success: true, message: `Link ${link.domain}/${link.alias} would be deleted (dry run: nothing changed).`, meta: { ...meta, dry_run: true } }
        return { success: true, message: `Link ${link.domain}/${link.alias} deleted.`, meta }
      },
      {
        account: { scopes: ['links:delete'], operation: 'links.delete', dryRun: true },
        params: AliasParams,
        query: LinkWriteQuery,
        idempotent: true,
        response: { 200: 'DeleteLinkResponse', ...errorResponses('VALIDATION_FAILED', 'LINK_NOT_FOUND') },
        detail: {
          operationId: 'deleteLink',
          tags: ['links'],
          summary: 'Delete a link',
          description: `${DOMAIN_QUERY_NOTE} The short link answers 404 at once; the alias becomes free again. Another account's link is 404 and stays.`,
        },
      },
    )
}
