import { getSchemaValidator, t } from 'elysia'
import { ALIAS_PATTERN } from '../../../core/link-cache'
import { DEVICES } from '../../../core/routing'
import { FreeForm, Int, Meta } from '../../plugins/errors'
import { DOCUMENTED_AS } from '../../plugins/openapi-document'
import { DEFAULT_LIMITS, DEFAULT_LINK_TTL_DAYS, freePlanHint } from '../../lib/plans'

/** Longest destination accepted; the de-facto browser-safe URL length. */
export const MAX_URL_LENGTH = 2048

/** A host name, optionally with a port and a trailing dot; normalised to lower case by the service. */
export const DOMAIN_PATTERN = '^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9.])?(?::[0-9]{1,5})?$'

export const Alias = t.String({
  pattern: ALIAS_PATTERN.source,
  description: 'A-Z a-z 0-9 _ -; 4-64 characters on the default domain, 1-64 on a verified custom domain',
  examples: ['spring-sale'],
})
export const Domain = t.String({ pattern: DOMAIN_PATTERN, maxLength: 260, description: 'Domain that owns the alias; default: the service default domain', examples: ['sho.rt'] })

/** Longest password a link may have (the redirector's form accepts no longer one). */
export const MAX_PASSWORD_LENGTH = 128

const Url = t.String({
  description: `Destination: an absolute http(s) URL, at most ${MAX_URL_LENGTH} characters, not on the short domain`,
  examples: ['https://example.com/products/spring?utm_source=newsletter'],
})
const Password = t.String({
  minLength: 1,
  maxLength: MAX_PASSWORD_LENGTH,
  description: 'Visitors must enter it on a form before the redirect. Stored as an argon2id hash, never returned',
})
const Expiration = t.String({ format: 'date-time', description: `In the future. Default: ${DEFAULT_LINK_TTL_DAYS} days after creation; the link answers 410 after it` })
const ActivatedAt = t.String({ format: 'date-time', description: 'The link answers 404 until then; before expiration' })

// Routing (docs/routing.md): ordered rules whose conditions must all match, and an A/B test. These
// schemas document it; routing.ts checks what a client sends (every field and value), so that a
// refusal names the rule or variant and the field, and an unknown field is refused, not dropped.
export const MAX_RULES = 20
export const MAX_CONDITION_VALUES = 50
export const ROUTE_ID_PATTERN = '^[A-Za-z0-9_-]{1,32}$'
export const WINNER_BY = ['leads', 'sales', 'conversions'] as const
const RouteId = t.String({ pattern: ROUTE_ID_PATTERN, description: '1-32 of A-Z a-z 0-9 _ -, unique in the link; assigned when absent (r1, r2, … for rules; a, b, … for variants)' })
const values = (item: Parameters<typeof t.Array>[0], description: string) => t.Optional(t.Array(item, { minItems: 1, maxItems: MAX_CONDITION_VALUES, description }))

export const RoutingConditions = t.Object(
  {
    device: values(t.String({ enum: [...DEVICES] }), `Any of ${DEVICES.join(', ')} (mobile: any phone or tablet), from the User-Agent`),
    country: values(t.String({ pattern: '^[A-Z]{2}$' }), 'ISO 3166-1 alpha-2 codes (upper case) of the client address'),
    language: values(t.String({ pattern: '^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$' }), 'Language tags: "en" matches any en-* in Accept-Language with q > 0, "pt-BR" only pt-BR (case-insensitive)'),
    query: t.Optional(
      t.Record(t.String({ minLength: 1, maxLength: 128 }), t.Union([t.String({ maxLength: 512 }), t.Null()]), {
        description: `The short URL's query has name equal to value (null: present with any value); 1-${MAX_CONDITION_VALUES} names, all must match`,
      }),
    ),
    ip: values(t.String({ maxLength: 50 }), 'IPv4 or IPv6 CIDR blocks holding the client address (a bare address is one address)'),
    after: t.Optional(t.String({ format: 'date-time', description: 'RFC 3339: the click is at or after it' })),
    before: t.Optional(t.String({ format: 'date-time', description: 'RFC 3339: the click is before it; later than after' })),
  },
  { additionalProperties: false, description: 'At least one condition; all present must match, a list matches when any of its values does' },
)

export const RoutingRule = t.Object({ id: t.Optional(RouteId), url: Url, when: RoutingConditions }, { additionalProperties: false })

const Variant = t.Object({ id: t.Optional(RouteId), url: Url, weight: Int({ minimum: 1, maximum: 100, description: 'Integer 1-100; the weights sum to 100' }) }, { additionalProperties: false })

export const AbTestInput = t.Object(
  {
    variants: t.Array(Variant, { minItems: 2, maxItems: 4, description: "2-4 variants; the link's own URL is not one" }),
    sticky: t.Optional(t.Boolean({ description: 'Default true: the same visitor gets the same variant while the weights stay' })),
    ends_at: t.Optional(t.Union([t.String({ format: 'date-time' }), t.Null()], { description: 'In the future, within a year; needs winner_by' })),
    winner_by: t.Optional(
      t.Union([...WINNER_BY.map((w) => t.Literal(w)), t.Null()], {
        description: "leads (signup + lead), sales (purchase + sale) or conversions (every type but refund), counted over the test's clicks",
      }),
    ),
    // Read-only: sent back as GET answered them, they are ignored (a completed test stays completed).
    status: t.Optional(t.Union([t.Literal('running'), t.Literal('completed')])),
    winner: t.Optional(t.Union([t.String(), t.Null()])),
    completed_at: t.Optional(t.Union([t.String(), t.Null()])),
  },
  { additionalProperties: false },
)

export const RoutingInput = t.Object(
  {
    rules: t.Optional(t.Array(RoutingRule, { maxItems: MAX_RULES, description: `At most ${MAX_RULES}, tried in order` })),
    ab: t.Optional(t.Union([AbTestInput, t.Null()])),
  },
  {
    additionalProperties: false,
    description: "Pro. The first rule whose conditions match gives the destination, else a running A/B test, else the link's URL",
    examples: [
      {
        rules: [
          { url: 'https://apps.apple.com/app/id123', when: { device: ['ios'] } },
          { url: 'https://play.google.com/store/apps/details?id=com.example', when: { device: ['android'] } },
          { url: 'https://example.com/de', when: { country: ['DE', 'AT', 'CH'] } },
        ],
        ab: {
          variants: [
            { url: 'https://example.com/a', weight: 50 },
            { url: 'https://example.com/b', weight: 50 },
          ],
          ends_at: '2026-12-31T00:00:00Z',
          winner_by: 'leads',
        },
      },
    ],
  },
)

const RoutingRuleOut = t.Object({ id: t.String(), url: t.String(), when: RoutingConditions })
const AbTestOut = t.Object({
  variants: t.Array(t.Object({ id: t.String(), url: t.String(), weight: Int() })),
  sticky: t.Boolean(),
  ends_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  winner_by: t.Union([t.String({ enum: [...WINNER_BY] }), t.Null()]),
  status: t.String({ enum: ['running', 'completed'] }),
  winner: t.Union([t.String(), t.Null()], { description: 'The winning variant once completed' }),
  completed_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
})
export const Routing = t.Object({ rules: t.Array(RoutingRuleOut), ab: t.Union([AbTestOut, t.Null()]) })

export const RoutingResponse = t.Object(
  { success: t.Boolean(), data: Routing, meta: Meta },
  {
    examples: [
      {
        success: true,
        data: {
          rules: [{ id: 'r1', url: 'https://apps.apple.com/app/id123', when: { device: ['ios'] } }],
          ab: {
            variants: [
              { id: 'a', url: 'https://example.com/a', weight: 50 },
              { id: 'b', url: 'https://example.com/b', weight: 50 },
            ],
            sticky: true,
            ends_at: '2026-12-31T00:00:00.000Z',
            winner_by: 'leads',
            status: 'running',
            winner: null,
            completed_at: null,
          },
        },
        meta: { account_type: 'pro', notices: [] },
      },
    ],
  },
)

export const DeleteRoutingResponse = t.Object(
  { success: t.Boolean(), message: t.String(), meta: Meta },
  { examples: [{ success: true, message: 'The routing of sho.rt/launch-2026 was removed; every visitor goes to its URL.', meta: { account_type: 'pro', notices: [] } }] },
)

/** The body of PUT …/routing: documented as RoutingInput, checked by routing.ts. */
export const RoutingBody = t.Any({ [DOCUMENTED_AS]: 'RoutingInput' })

export const ShortenRequest = t.Object(
  {
    url: Url,
    alias: t.Optional(Alias),
    domain: t.Optional(Domain),
    password: t.Optional(Password),
    expiration: t.Optional(Expiration),
    activated_at: t.Optional(ActivatedAt),
    // Documented as RoutingInput; checked by routing.ts.
    routing: t.Optional(t.Any({ [DOCUMENTED_AS]: 'RoutingInput', description: 'Pro: rules and an A/B test, as PUT /api/v1/links/{alias}/routing takes them' })),
  },
  {
    description:
      'With a guest token only url is applied; the other fields are ignored and listed in meta.notices. With an API key every field applies: alias 4-64 characters on the default domain, 1-64 on a verified custom domain of the account',
    examples: [
      { url: 'https://example.com/products/spring?utm_source=newsletter' },
      { url: 'https://example.com/launch', alias: 'launch-2026', password: 'open sesame', expiration: '2026-12-31T23:59:59Z', activated_at: '2026-06-01T09:00:00Z' },
      { url: 'https://example.com/docs', alias: 'd', domain: 'go.example.com' },
    ],
  },
)

/** Checks one bulk item against ShortenRequest (the bulk body leaves its items to this, item by item). */
export const shortenRequestValidator = getSchemaValidator(ShortenRequest)!

export const UpdateLinkRequest = t.Object(
  {
    url: t.Optional(Url),
    password: t.Optional(t.Union([Password, t.Null()], { description: 'A new password; null removes the protection' })),
    expiration: t.Optional(t.Union([Expiration, t.Null()], { description: 'A new expiry in the future; null: the link never expires' })),
    activated_at: t.Optional(t.Union([ActivatedAt, t.Null()], { description: 'A new activation time; null: active at once' })),
  },
  {
    description: 'Only the fields sent change; null clears password, expiration or activated_at',
    examples: [{ url: 'https://example.com/new-destination' }, { password: null, expiration: '2027-01-01T00:00:00Z' }],
  },
)

export const Link = t.Object({
  short_url: t.String(),
  alias: t.String(),
  full_url: t.String(),
  domain: t.String(),
  manage_code: t.Optional(t.Union([t.String(), t.Null()])),
  created_at: t.String({ format: 'date-time' }),
  expires_at: t.Optional(t.Union([t.String({ format: 'date-time' }), t.Null()])),
  has_password: t.Optional(t.Boolean()),
  clicks: t.Optional(Int()),
  last_clicked_at: t.Optional(t.Union([t.String({ format: 'date-time' }), t.Null()])),
})

const LINK_EXAMPLE = {
  short_url: 'https://sho.rt/launch-2026',
  alias: 'launch-2026',
  full_url: 'https://example.com/launch',
  domain: 'sho.rt',
  manage_code: null,
  created_at: '2026-05-01T12:00:00.000Z',
  expires_at: '2026-12-31T23:59:59.000Z',
  has_password: true,
  clicks: 0,
  last_clicked_at: null,
}

const ACCOUNT_META_EXAMPLE = {
  account_type: 'free',
  usage: {
    links_this_month: 12,
    links_per_month: DEFAULT_LIMITS.plans.free.linksPerMonth,
    links_remaining: DEFAULT_LIMITS.plans.free.linksPerMonth - 12,
    period_resets_at: '2026-06-01T00:00:00.000Z',
  },
  notices: [],
  hint: freePlanHint(DEFAULT_LIMITS),
  upgrade: { plan: 'pro', url: 'https://api.sho.rt/api/v1/account/upgrade', method: 'POST' },
}

export const LinkResponse = t.Object(
  { success: t.Boolean(), data: Link, meta: Meta },
  {
    examples: [
      {
        success: true,
        data: {
          short_url: 'https://sho.rt/aZ3kP9q',
          alias: 'aZ3kP9q',
          full_url: 'https://example.com/products/spring?utm_source=newsletter',
          domain: 'sho.rt',
          manage_code: null,
          created_at: '2026-01-01T12:00:00.000Z',
          expires_at: '2026-01-31T12:00:00.000Z',
          has_password: false,
          clicks: 0,
          last_clicked_at: null,
        },
        meta: {
          account_type: 'guest',
          usage: { links_created: 1, links_remaining: 9, requests_made: 2, requests_remaining: 98, expires_at: '2026-01-02T12:00:00.000Z' },
          notices: [{ field: 'alias', message: 'ignored for guest tokens; register to choose aliases' }],
        },
      },
      { success: true, data: LINK_EXAMPLE, meta: ACCOUNT_META_EXAMPLE },
    ],
  },
)

export const AliasCheckRequest = t.Object({ alias: Alias, domain: t.Optional(Domain) }, { examples: [{ alias: 'spring-sale' }, { alias: 'promo', domain: 'links.example.com' }] })

export const AliasCheckResponse = t.Object({ exists: t.Boolean({ description: 'true when the alias is taken or reserved on that domain' }) }, { examples: [{ exists: false }] })

export const AliasParams = t.Object({ alias: Alias })

export const LinkQuery = t.Object({ domain: t.Optional(Domain) })

// A union of literals, not t.UnionEnum: Elysia fills an absent optional UnionEnum with its first value.
const DryRun = t.Optional(
  t.Union([t.Literal('true'), t.Literal('false')], {
    description: 'true: check everything and answer the result, writing nothing (no link, cache, quota or idempotency record); meta.dry_run is true. For API keys and Agent tokens.',
    examples: ['true'],
  }),
)
/** ?dry_run on shorten and bulk. */
export const DryRunQuery = t.Object({ dry_run: DryRun })
/** ?domain and ?dry_run on update and delete. */
export const LinkWriteQuery = t.Object({ domain: t.Optional(Domain), dry_run: DryRun })

/** Tag ids are int4 (tags/model.ts MAX_TAG_ID; that file imports this one, so the bound is repeated here). */
const MAX_TAG_ID = 2_147_483_647

/** Orders of GET /api/v1/links; the first is the default. */
export const LINK_SORTS = ['created_desc', 'created_asc', 'clicks_desc'] as const
export type LinkSort = (typeof LINK_SORTS)[number]

/** Largest offset accepted: far beyond any account's links, small enough for every engine. */
export const MAX_OFFSET = 1_000_000_000

// t.Integer, not errors.ts Int: query values are strings, and t.Integer is the type that reads them.
export const LinkListQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Links per page, 1-100' })),
  offset: t.Optional(t.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: 'Links to skip (after the cursor, when one is given)' })),
  cursor: t.Optional(t.String({ pattern: '^[A-Za-z0-9_-]+$', maxLength: 256, description: 'next_cursor of the previous page; preferred over offset' })),
  // NUL is the one character a Postgres text value cannot hold.
  search: t.Optional(t.String({ maxLength: 200, pattern: '^[^\\u0000]*$', description: 'Case-insensitive substring of the alias or the destination URL' })),
  domain: t.Optional(Domain),
  tag: t.Optional(t.Integer({ minimum: 1, maximum: MAX_TAG_ID, description: "Id of one of your tags (GET /api/v1/tags): only links carrying it; unknown or another account's: 404 TAG_NOT_FOUND" })),
  // A union of literals, not t.UnionEnum (see DryRun); the default is applied by the service.
  sort: t.Optional(
    t.Union(
      LINK_SORTS.map((s) => t.Literal(s)),
      {
        description: 'created_desc: newest first (default); created_asc: oldest first; clicks_desc: most human clicks first, then newest first',
        examples: ['clicks_desc'],
      },
    ),
  ),
})

export const LinkListResponse = t.Object(
  {
    success: t.Boolean(),
    data: t.Object({
      links: t.Array(Link),
      pagination: t.Object({
        total: Int({ description: 'Links matching search, domain and tag' }),
        limit: Int(),
        offset: Int(),
        next_cursor: t.Union([t.String(), t.Null()], { description: 'Pass as ?cursor= for the next page; null on the last page' }),
      }),
    }),
    meta: Meta,
  },
  {
    examples: [
      {
        success: true,
        data: { links: [LINK_EXAMPLE], pagination: { total: 41, limit: 20, offset: 0, next_cursor: 'eyJ0IjoiMTc0NjEwMDgwMDAwMDAwMCIsImkiOiJsaW5rXzEifQ' } },
        meta: ACCOUNT_META_EXAMPLE,
      },
    ],
  },
)

export const DeleteLinkResponse = t.Object(
  { success: t.Boolean(), message: t.String(), meta: Meta },
  { examples: [{ success: true, message: 'Link sho.rt/launch-2026 deleted.', meta: ACCOUNT_META_EXAMPLE }] },
)

/** Most links one bulk request may create (docs/api.md#links). */
export const MAX_BULK_LINKS = 100

export const BulkRequest = t.Object(
  {
    links: t.Array(
      // Documented as ShortenRequest; validated item by item in the service so one bad item fails alone.
      t.Any({ $ref: '#/components/schemas/ShortenRequest' }),
      { minItems: 1, maxItems: MAX_BULK_LINKS, description: `1-${MAX_BULK_LINKS} shorten requests` },
    ),
  },
  {
    examples: [
      {
        links: [
          { url: 'https://example.com/a', alias: 'spring-a' },
          { url: 'https://example.com/b', expiration: '2026-12-31T23:59:59Z' },
        ],
      },
    ],
  },
)

export const BulkResponse = t.Object(
  {
    success: t.Boolean(),
    data: t.Object({
      results: t.Array(FreeForm('{index, success: true, data: link record} or {index, success: false, error: CODE, status, hint} (plus limit, remaining, upgrade_url on LINK_QUOTA_EXCEEDED)')),
      summary: t.Object({ total: Int(), succeeded: Int(), failed: Int() }),
    }),
    meta: Meta,
  },
  {
    examples: [
      {
        success: true,
        data: {
          results: [
            { index: 0, success: true, data: { ...LINK_EXAMPLE, alias: 'spring-a', short_url: 'https://sho.rt/spring-a', has_password: false } },
            { index: 1, success: false, error: 'ALIAS_TAKEN', status: 409, hint: 'alias "spring-b" is taken on sho.rt.' },
          ],
          summary: { total: 2, succeeded: 1, failed: 1 },
        },
        meta: ACCOUNT_META_EXAMPLE,
      },
    ],
  },
)

export const linkModels = {
  ShortenRequest,
  LinkResponse,
  AliasCheckRequest,
  AliasCheckResponse,
  UpdateLinkRequest,
  LinkListResponse,
  DeleteLinkResponse,
  BulkRequest,
  BulkResponse,
  RoutingInput,
  RoutingResponse,
  DeleteRoutingResponse,
}

export type ShortenInput = typeof ShortenRequest.static
export type UpdateInput = typeof UpdateLinkRequest.static
export type LinkListInput = typeof LinkListQuery.static
export type LinkRecord = typeof Link.static
export type RoutingInputData = typeof RoutingInput.static
export type RoutingData = typeof Routing.static
