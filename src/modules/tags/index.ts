// Tags (docs/api.md#tags): GET/POST /api/v1/tags, DELETE /api/v1/tags/{tagId}, and a link's tags under
// /api/v1/links/{alias}/tags. An API key, or an Agent's at_ token within its tags scopes. The tag list
// and the created tag sit at top level of the answer, beside `success`, not under `data`.
import { Elysia } from 'elysia'
import type { AccountPrincipal } from '../../plugins/auth'
import { accountMeta } from '../account/meta'
import type { Auth } from '../../plugins/auth'
import { ApiError, errorResponses, errors } from '../../plugins/errors'
import { idempotencyPlugin } from '../../plugins/idempotency'
import type { Services } from '../../services'
import { DomainQuery, LinkParams, LinkTagParams, TagIdParams, tagModels } from './model'
import { assignTag, countAccountTags, createTag, deleteTag, listLinkTags, listTags, parseTagId, tagUsage, unassignTag } from './service'
import { DEFAULT_LIMITS } from '../../lib/plans'

/** The account's meta, with its tags against the tags an account may have (TAGS_PER_ACCOUNT) when the response counted them. */
const meta = (services: Services, account: AccountPrincipal, tags?: number) =>
  accountMeta(services, { plan: account.plan, ...(tags !== undefined && { usage: tagUsage(services.config.limits.tagsPerAccount, tags) }) })

/** A link is named by alias plus an optional domain; given twice (body and query), both must agree. */
function oneDomain(fromBody: string | undefined, fromQuery: string | undefined): string | undefined {
  if (fromBody !== undefined && fromQuery !== undefined && fromBody.toLowerCase() !== fromQuery.toLowerCase()) {
    throw new ApiError('VALIDATION_FAILED', 'body.domain: differs from the domain query parameter; send one of them')
  }
  return fromBody ?? fromQuery
}

const linkName = (domain: string, alias: string) => `${domain}/${alias}`

export function tagsModule(services: Services, auth: Auth) {
  return new Elysia({ name: 'modules.tags' })
    .use(errors)
    .use(auth.plugin)
    .use(idempotencyPlugin(services))
    .model(tagModels)
    .get(
      '/api/v1/tags',
      async ({ account }) => {
        const tags = await listTags(services, account.id)
        return { success: true, tags, meta: meta(services, account, tags.length) }
      },
      {
        account: { scopes: ['tags:read'] },
        response: { 200: 'TagListResponse', ...errorResponses() },
        detail: { operationId: 'listTags', tags: ['tags'], summary: 'List your tags', description: `Oldest first. An account has at most ${DEFAULT_LIMITS.tagsPerAccount} tags.` },
      },
    )
    .post(
      '/api/v1/tags',
      async ({ account, body, set }) => {
        const { tag, total } = await createTag(services, account.id, body)
        set.status = 201
        return { success: true, tag, meta: meta(services, account, total) }
      },
      {
        account: { scopes: ['tags:write'], operation: 'tags.create' },
        idempotent: true,
        body: 'CreateTagRequest',
        response: { 201: 'TagResponse', ...errorResponses('TAG_EXISTS', 'TAG_LIMIT_REACHED') },
        detail: {
          operationId: 'createTag',
          tags: ['tags'],
          summary: 'Create a tag',
          description: `The name is trimmed and must be 1-30 characters, unique in your account regardless of case (else 409 TAG_EXISTS). At most ${DEFAULT_LIMITS.tagsPerAccount} tags an account: one more is 409 TAG_LIMIT_REACHED.`,
        },
      },
    )
    .delete(
      '/api/v1/tags/:tagId',
      async ({ account, params }) => {
        const tagId = parseTagId(params.tagId)
        await deleteTag(services, account.id, tagId)
        const total = await countAccountTags(services, account.id)
        return { success: true, message: `Tag ${tagId} deleted and removed from all its links.`, meta: meta(services, account, total) }
      },
      {
        account: { scopes: ['tags:write'], operation: 'tags.delete' },
        idempotent: true,
        params: TagIdParams,
        response: { 200: 'TagMessageResponse', ...errorResponses('VALIDATION_FAILED', 'TAG_NOT_FOUND') },
        detail: {
          operationId: 'deleteTag',
          tags: ['tags'],
          summary: 'Delete a tag',
          description: "The tag is removed from every link that carried it. Unknown ids and other accounts' tags are 404 TAG_NOT_FOUND.",
        },
      },
    )
    .get(
      '/api/v1/links/:alias/tags',
      async ({ account, params, query }) => {
        const tags = await listLinkTags(services, account.id, { alias: params.alias, domain: query.domain })
        return { success: true, tags, meta: meta(services, account) }
      },
      {
        account: { scopes: ['tags:read'] },
        params: LinkParams,
        query: DomainQuery,
        response: { 200: 'TagListResponse', ...errorResponses('VALIDATION_FAILED', 'LINK_NOT_FOUND') },
        detail: { operationId: 'listLinkTags', tags: ['tags'], summary: 'Tags of a link', description: "Unknown links and other accounts' links are 404 LINK_NOT_FOUND." },
      },
    )
    .post(
      '/api/v1/links/:alias/tags',
      async ({ account, params, query, body, set }) => {
        const ref = { alias: params.alias, domain: oneDomain(body.domain, query.domain) }
        const { created, domain } = await assignTag(services, account.id, ref, body.tagId)
        set.status = created ? 201 : 200
        const where = linkName(domain, params.alias)
        return {
          success: true,
          message: created ? `Tag ${body.tagId} assigned to ${where}.` : `Tag ${body.tagId} was already assigned to ${where}.`,
          meta: meta(services, account),
        }
      },
      {
        account: { scopes: ['tags:write'], operation: 'tags.assign' },
        idempotent: true,
        params: LinkParams,
        query: DomainQuery,
        body: 'AssignTagRequest',
        response: { 200: 'TagMessageResponse', 201: 'TagMessageResponse', ...errorResponses('VALIDATION_FAILED', 'LINK_NOT_FOUND', 'TAG_NOT_FOUND') },
        detail: {
          operationId: 'tagLink',
          tags: ['tags'],
          summary: 'Assign a tag to a link',
          description: '201 when assigned, 200 when the tag was already on the link (idempotent). The link and the tag must both be yours: otherwise 404 LINK_NOT_FOUND or TAG_NOT_FOUND.',
        },
      },
    )
    .delete(
      '/api/v1/links/:alias/tags/:tagId',
      async ({ account, params, query }) => {
        const tagId = parseTagId(params.tagId)
        const { removed, domain } = await unassignTag(services, account.id, { alias: params.alias, domain: query.domain }, tagId)
        const where = linkName(domain, params.alias)
        return {
          success: true,
          message: removed ? `Tag ${tagId} removed from ${where}.` : `Tag ${tagId} was not assigned to ${where}.`,
          meta: meta(services, account),
        }
      },
      {
        account: { scopes: ['tags:write'], operation: 'tags.assign' },
        idempotent: true,
        params: LinkTagParams,
        query: DomainQuery,
        response: { 200: 'TagMessageResponse', ...errorResponses('VALIDATION_FAILED', 'LINK_NOT_FOUND', 'TAG_NOT_FOUND') },
        detail: {
          operationId: 'untagLink',
          tags: ['tags'],
          summary: 'Remove a tag from a link',
          description: 'Idempotent: 200 also when the tag was not on the link. Unknown or foreign links and tags are 404.',
        },
      },
    )
}
