import { t } from 'elysia'
import { ALIAS_PATTERN } from '../../../core/link-cache'
import { Int, Meta } from '../../plugins/errors'
import { DOMAIN_PATTERN } from '../links/model'
import { DEFAULT_LIMITS } from '../../lib/plans'

/** The only colors a tag may have. The first is the default. */
export const TAG_COLORS = ['#6b7280', '#ef4444', '#f97316', '#eab308', '#22c55e', '#06b6d4', '#3b82f6', '#8b5cf6', '#ec4899'] as const
export type TagColor = (typeof TAG_COLORS)[number]
/** 1-30 characters, counted after trimming. */
export const MAX_TAG_NAME_LENGTH = 30
/** Tag ids are Postgres `serial` (int4). */
export const MAX_TAG_ID = 2_147_483_647

const Color = t.UnionEnum([...TAG_COLORS], { description: 'One of the nine tag colors; default #6b7280', examples: ['#3b82f6'] })

export const Tag = t.Object({
  id: Int({ examples: [42] }),
  name: t.String({ examples: ['campaign'] }),
  color: Color,
  created_at: t.Optional(t.Union([t.String({ format: 'date-time' }), t.Null()])),
})

const tagExample = { id: 42, name: 'spring-campaign', color: '#3b82f6', created_at: '2026-01-01T12:00:00.000Z' }
const metaExample = { account_type: 'free', usage: { tags: 3, tags_limit: DEFAULT_LIMITS.tagsPerAccount, tags_remaining: DEFAULT_LIMITS.tagsPerAccount - 3 } }

export const TagListResponse = t.Object(
  { success: t.Boolean(), tags: t.Array(Tag), meta: Meta },
  { description: 'The tag list is at top level, not under data', examples: [{ success: true, tags: [tagExample], meta: metaExample }] },
)

export const TagResponse = t.Object(
  { success: t.Boolean(), tag: Tag, meta: Meta },
  { description: 'The created tag is at top level, not under data', examples: [{ success: true, tag: tagExample, meta: metaExample }] },
)

export const TagMessageResponse = t.Object(
  { success: t.Boolean(), message: t.String(), meta: Meta },
  { examples: [{ success: true, message: 'Tag 42 assigned to sho.rt/spring-sale.', meta: { account_type: 'free' } }] },
)

export const CreateTagRequest = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: MAX_TAG_NAME_LENGTH, description: '1-30 characters after trimming; unique per account regardless of case', examples: ['spring-campaign'] }),
    color: t.Optional(Color),
  },
  { examples: [{ name: 'spring-campaign', color: '#3b82f6' }, { name: 'newsletter' }] },
)

const TagIdField = Int({ minimum: 1, maximum: MAX_TAG_ID, description: 'Id of one of your tags', examples: [42] })
const DomainField = t.String({ pattern: DOMAIN_PATTERN, maxLength: 260, description: 'Domain that owns the alias; default: the service default domain', examples: ['links.example.com'] })

export const AssignTagRequest = t.Object({ tagId: TagIdField, domain: t.Optional(DomainField) }, { examples: [{ tagId: 42 }, { tagId: 42, domain: 'links.example.com' }] })

/** Path ids as strict decimal: "0x10", "1e3" or " 1" are not ids. The upper bound is checked by the service. */
export const TagIdParams = t.Object({
  tagId: t.String({ pattern: '^[1-9][0-9]{0,9}$', description: 'Tag id: an integer >= 1', examples: ['42'] }),
})

const AliasParam = t.String({ pattern: ALIAS_PATTERN.source, description: 'Alias of one of your links', examples: ['spring-sale'] })

export const LinkParams = t.Object({ alias: AliasParam })
export const LinkTagParams = t.Object({ alias: AliasParam, tagId: TagIdParams.properties.tagId })
export const DomainQuery = t.Object({ domain: t.Optional(DomainField) })

export const tagModels = { TagListResponse, TagResponse, TagMessageResponse, CreateTagRequest, AssignTagRequest }

export type TagRecord = typeof Tag.static
export type CreateTagInput = typeof CreateTagRequest.static
