// GET, PUT and DELETE /api/v1/links/{alias}/routing: a link's rules and A/B test (docs/routing.md). Pro
// only; another account's link is 404. PUT replaces the whole routing; both writes honour dry_run and
// Idempotency-Key, and an Agent's call is the operation links.routing.
import { Elysia } from 'elysia'
import type { Auth } from '../../plugins/auth'
import { errorResponses, errors } from '../../plugins/errors'
import { idempotencyPlugin } from '../../plugins/idempotency'
import type { Services } from '../../services'
import { currentAccountMeta } from '../account/meta'
import { AliasParams, LinkQuery, LinkWriteQuery, linkModels, RoutingBody } from './model'
import { readRouting, replaceRouting } from './routing-manage'

const DOMAIN_NOTE = 'The `domain` query parameter names the domain that owns the alias (default: the service default domain).'
const PRO_NOTE = "Routing is a Pro feature: a Free account gets 403 PRO_REQUIRED with upgrade_url. Another account's link is 404."

export function routingRoutes(services: Services, auth: Auth) {
  return new Elysia({ name: 'modules.links.routing' })
    .use(errors)
    .use(auth.plugin)
    .use(idempotencyPlugin(services))
    .model(linkModels)
    .get(
      '/api/v1/links/:alias/routing',
      async ({ params, query, account }) => {
        const data = await readRouting(services, account, params.alias, query.domain)
        return { success: true, data, meta: await currentAccountMeta(services, account) }
      },
      {
        account: { scopes: ['links:read'] },
        params: AliasParams,
        query: LinkQuery,
        response: { 200: 'RoutingResponse', ...errorResponses('VALIDATION_FAILED', 'PRO_REQUIRED', 'LINK_NOT_FOUND') },
        detail: {
          operationId: 'getLinkRouting',
          tags: ['links'],
          summary: "A link's routing rules and A/B test",
          description: `${DOMAIN_NOTE} rules: [] and ab: null when the link has none. An A/B test whose ends_at has passed is ended first (its winner becomes the link's URL). ${PRO_NOTE}`,
        },
      },
    )
    .put(
      '/api/v1/links/:alias/routing',
      async ({ params, query, body, account }) => {
        const dryRun = query.dry_run === 'true'
        const { routing } = await replaceRouting(services, account, params.alias, query.domain, body, dryRun)
        const meta = await currentAccountMeta(services, account)
        return { success: true, data: routing, meta: dryRun ? { ...meta, dry_run: true } : meta }
      },
      {
        account: { scopes: ['links:write'], operation: 'links.routing', dryRun: true },
        idempotent: true,
        params: AliasParams,
        query: LinkWriteQuery,
        body: RoutingBody,
        response: { 200: 'RoutingResponse', ...errorResponses('VALIDATION_FAILED', 'INVALID_URL', 'DESTINATION_LOOPS', 'DESTINATION_BLOCKED', 'PRO_REQUIRED', 'LINK_NOT_FOUND') },
        detail: {
          operationId: 'setLinkRouting',
          tags: ['links'],
          summary: "Replace a link's routing",
          description:
            `${DOMAIN_NOTE} The whole routing is replaced: rules (at most 20, tried in order; the first whose conditions all match gives the destination) and an A/B test (2-4 variants whose weights sum to 100). ` +
            "Rule and variant ids are kept when given and assigned when absent (r1, r2, … and a, b, …). Every destination is checked as a link's is. A completed test sent back as read stays completed; the same running variants keep their test going. " +
            `Every refusal names the rule and the field. Redirectors follow within a second. Accepts Idempotency-Key and dry_run=true. ${PRO_NOTE}`,
        },
      },
    )
    .delete(
      '/api/v1/links/:alias/routing',
      async ({ params, query, account }) => {
        const dryRun = query.dry_run === 'true'
        const { row } = await replaceRouting(services, account, params.alias, query.domain, {}, dryRun)
        const meta = await currentAccountMeta(services, account)
        const where = `${row.domain}/${row.alias}`
        if (dryRun) return { success: true, message: `The routing of ${where} would be removed (dry run: nothing changed).`, meta: { ...meta, dry_run: true } }
        return { success: true, message: `The routing of ${where} was removed; every visitor goes to its URL.`, meta }
      },
      {
        account: { scopes: ['links:write'], operation: 'links.routing', dryRun: true },
        idempotent: true,
        params: AliasParams,
        query: LinkWriteQuery,
        response: { 200: 'DeleteRoutingResponse', ...errorResponses('VALIDATION_FAILED', 'PRO_REQUIRED', 'LINK_NOT_FOUND') },
        detail: { operationId: 'deleteLinkRouting', tags: ['links'], summary: "Remove a link's routing", description: `${DOMAIN_NOTE} Every visitor then goes to the link's URL. ${PRO_NOTE}` },
      },
    )
}
