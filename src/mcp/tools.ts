// The MCP tools: one per REST operation, described by the REST models themselves (arguments named as
// the REST fields; path, query and body flattened into one object) and carried out by that REST route
// (dispatch.ts). The table says, per tool, the scope its route needs, honest behaviour hints, and how
// its arguments become the REST request. Nothing here validates or writes: the route does.
import { t, type TSchema } from 'elysia'
import type { Scope } from '../lib/agent-access'
import { ApprovalParams } from '../modules/approvals/model'
import { Alias, Domain, LinkListQuery, MAX_OFFSET, RoutingInput, ShortenRequest, UpdateLinkRequest } from '../modules/links/model'
import { StatsQuery } from '../modules/stats/model'
import { DEFAULT_LIMITS } from '../lib/plans'
import { CreateTagRequest, MAX_TAG_ID } from '../modules/tags/model'
import { Int } from '../plugins/errors'

/** A tool's arguments, as the MCP client sent them (checked against `input` by the SDK first). */
export type Args = Record<string, unknown>
/** A REST answer's JSON body. */
// biome-ignore lint/suspicious/noExplicitAny: the tools read fields of the routes' own answers, whose shapes the OpenAPI document and the tests pin
export type Json = Record<string, any>

export interface RestCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** Path with its segments already encoded. */
  path: string
  /** Query parameters; undefined ones are left out. */
  query?: Record<string, unknown>
  body?: Record<string, unknown>
}

/** MCP ToolAnnotations: hints for the host (auto-run a read, ask before a destructive change). */
export interface Hints {
  readOnlyHint: boolean
  destructiveHint: boolean
  idempotentHint: boolean
  /** False for every tool: each acts on this service's records only, never on the open web. */
  openWorldHint: boolean
}

export interface ToolSpec {
  name: string
  title: string
  description: string
  /** The OAuth scope its REST route needs; null for a public route (check_alias). */
  scope: Scope | null
  annotations: Hints
  /** JSON Schema of the arguments (additional properties refused). */
  input: TSchema
  rest(args: Args): RestCall
  /** One line for a person or a model reading the text content of a success. */
  summary(body: Json, args: Args): string
}

const READ: Hints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
const CREATE: Hints = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }
/** Adds without overwriting; doing it twice changes nothing more (assigning a tag). */
const ADD: Hints = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }
/** Overwrites or removes: what was there is lost (a link's destination, a link, a tag). */
const CHANGE: Hints = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }

const args = (properties: Record<string, TSchema>, description?: string) => t.Object(properties, { additionalProperties: false, ...(description && { description }) })

const DryRun = t.Optional(t.Boolean({ description: 'true: validate and answer with the record that would result, writing nothing (REST ?dry_run=true)' }))
const LinkDomain = t.Optional(Domain)
const TagId = Int({ minimum: 1, maximum: MAX_TAG_ID, description: 'Id of one of your tags (list_tags)' })

const seg = (value: unknown) => encodeURIComponent(String(value))
const dryRun = (a: Args) => (a.dry_run === true ? { dry_run: 'true' } : {})
/** The arguments named in `keys` that were sent (null included: it clears a field). */
const pick = (a: Args, keys: readonly string[]) => Object.fromEntries(keys.filter((k) => a[k] !== undefined).map((k) => [k, a[k]]))
const fieldsOf = (schema: { properties: Record<string, unknown> }) => Object.keys(schema.properties)

const str = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))
const linkLine = (link: Json | undefined) => `${str(link?.short_url)} → ${str(link?.full_url)}`
const dry = (body: Json) => (body.meta?.dry_run === true ? ' (dry run: nothing was written)' : '')

const scopeNote = (scope: Scope | null) => (scope ? ` Needs the OAuth scope ${scope}.` : ' Needs no scope.')

const SPECS: ToolSpec[] = [
  {
    name: 'create_link',
    title: 'Create a short link',
    description:
      'Shortens url (POST /api/v1/shorten). Optional: alias (4-64 characters on the default domain), domain (a verified custom domain of the account), password, expiration, activated_at. Counts against the monthly link quota.',
    scope: 'links:write',
    annotations: CREATE,
    input: args({ ...ShortenRequest.properties, routing: t.Optional(RoutingInput), dry_run: DryRun }),
    rest: (a) => ({ method: 'POST', path: '/api/v1/shorten', query: dryRun(a), body: pick(a, fieldsOf(ShortenRequest)) }),
    summary: (body) => `Created ${linkLine(body.data)}${dry(body)}`,
  },
  {
    name: 'get_link',
    title: 'Get a link',
    description: "One link of the account with its click totals (GET /api/v1/links/{alias}). Another account's link is LINK_NOT_FOUND.",
    scope: 'links:read',
    annotations: READ,
    input: args({ alias: Alias, domain: LinkDomain }),
    rest: (a) => ({ method: 'GET', path: `/api/v1/links/${seg(a.alias)}`, query: pick(a, ['domain']) }),
    summary: (body) => linkLine(body.data),
  },
  {
    name: 'list_links',
    title: 'List links',
    description:
      "The account's links (GET /api/v1/links), newest first unless sort says otherwise (created_desc, created_asc, clicks_desc: most clicked first). Page with cursor (next_cursor of the previous page, kept with its sort); search matches alias or destination; tag keeps the links carrying one of your tags (its id from list_tags).",
    scope: 'links:read',
    annotations: READ,
    input: args({
      limit: t.Optional(Int({ minimum: 1, maximum: 100, description: 'Links per page, 1-100 (default 20)' })),
      offset: t.Optional(Int({ minimum: 0, maximum: MAX_OFFSET, description: 'Links to skip (after the cursor, when one is given)' })),
      cursor: LinkListQuery.properties.cursor,
      search: LinkListQuery.properties.search,
      domain: LinkDomain,
      tag: t.Optional(TagId),
      sort: LinkListQuery.properties.sort,
    }),
    rest: (a) => ({ method: 'GET', path: '/api/v1/links', query: pick(a, ['limit', 'offset', 'cursor', 'search', 'domain', 'tag', 'sort']) }),
    summary: (body) => {
      const page = body.data?.pagination ?? {}
      return `${body.data?.links?.length ?? 0} of ${page.total} links${page.next_cursor ? `; next page: cursor=${page.next_cursor}` : ''}`
    },
  },
  {
    name: 'update_link',
    title: 'Change a link',
    description:
      'Changes the destination url, password, expiration or activated_at of a link (PATCH /api/v1/links/{alias}); fields left out keep their value, null clears password, expiration or activated_at. Redirects follow at once.',
    scope: 'links:write',
    annotations: CHANGE,
    input: args({ alias: Alias, domain: LinkDomain, ...UpdateLinkRequest.properties, dry_run: DryRun }),
    rest: (a) => ({
      method: 'PATCH',
      path: `/api/v1/links/${seg(a.alias)}`,
      query: { ...pick(a, ['domain']), ...dryRun(a) },
      body: pick(a, fieldsOf(UpdateLinkRequest)),
    }),
    summary: (body) => `Updated ${linkLine(body.data)}${dry(body)}`,
  },
  {
    name: 'delete_link',
    title: 'Delete a link',
    description:
      "Deletes a link (DELETE /api/v1/links/{alias}): the short link answers 404 at once and the alias becomes free. By default an Agent's deletes wait for the human's approval: the answer is then the approval to show them.",
    scope: 'links:delete',
    annotations: CHANGE,
    input: args({ alias: Alias, domain: LinkDomain, dry_run: DryRun }),
    rest: (a) => ({ method: 'DELETE', path: `/api/v1/links/${seg(a.alias)}`, query: { ...pick(a, ['domain']), ...dryRun(a) } }),
    summary: (body) => `${str(body.message)}${dry(body)}`,
  },
  {
    name: 'get_link_routing',
    title: "A link's routing",
    description:
      'The routing rules (tried in order: device, country, language, query, ip, after/before) and the A/B test of a link (GET /api/v1/links/{alias}/routing); rules [] and ab null when it has none. Pro only: a Free account gets PRO_REQUIRED.',
    scope: 'links:read',
    annotations: READ,
    input: args({ alias: Alias, domain: LinkDomain }),
    rest: (a) => ({ method: 'GET', path: `/api/v1/links/${seg(a.alias)}/routing`, query: pick(a, ['domain']) }),
    summary: (body, a) => `${str(a.alias)}: ${body.data?.rules?.length ?? 0} rules, ${body.data?.ab ? `an A/B test (${str(body.data.ab.status)})` : 'no A/B test'}`,
  },
  {
    name: 'set_link_routing',
    title: "Replace a link's routing",
    description:
      "Replaces the whole routing of a link (PUT /api/v1/links/{alias}/routing): rules (at most 20; the first whose conditions all match gives the destination) and an A/B test (2-4 variants, weights summing to 100, ends_at with winner_by to let the best variant become the link's URL). Send both to keep both; an empty object removes the routing. Pro only.",
    scope: 'links:write',
    annotations: CHANGE,
    input: args({ alias: Alias, domain: LinkDomain, ...RoutingInput.properties, dry_run: DryRun }),
    rest: (a) => ({ method: 'PUT', path: `/api/v1/links/${seg(a.alias)}/routing`, query: { ...pick(a, ['domain']), ...dryRun(a) }, body: pick(a, fieldsOf(RoutingInput)) }),
    summary: (body, a) => `${str(a.alias)} now routes by ${body.data?.rules?.length ?? 0} rules${body.data?.ab ? ' and an A/B test' : ''}${dry(body)}`,
  },
  {
    name: 'link_stats',
    title: 'Statistics of a link',
    description:
      'Clicks of a period as a timeseries, top countries, referrers, devices, browsers, operating systems, conversions and revenue (GET /api/v1/links/{alias}/stats). Pro only: a Free account gets STATS_REQUIRES_PRO with the basic totals.',
    scope: 'stats:read',
    annotations: READ,
    input: args({ alias: Alias, domain: LinkDomain, period: StatsQuery.properties.period, include_bots: t.Optional(t.Boolean({ description: 'Count clicks flagged as bots too (default false)' })) }),
    rest: (a) => ({ method: 'GET', path: `/api/v1/links/${seg(a.alias)}/stats`, query: pick(a, ['domain', 'period', 'include_bots']) }),
    summary: (_body, a) => `Statistics of ${str(a.alias)} (${str(a.period ?? '7D')})`,
  },
  {
    name: 'check_alias',
    title: 'Is an alias taken?',
    description: 'Whether an alias is taken (or reserved) on a domain (POST /api/v1/alias/check); limited per client address.',
    scope: null,
    annotations: READ,
    input: args({ alias: Alias, domain: LinkDomain }),
    rest: (a) => ({ method: 'POST', path: '/api/v1/alias/check', body: pick(a, ['alias', 'domain']) }),
    summary: (body, a) => `${str(a.alias)} is ${body.exists ? 'taken' : 'free'}`,
  },
  {
    name: 'list_tags',
    title: 'List tags',
    description: "The account's tags (GET /api/v1/tags), or with alias (and the domain that owns it) the tags of that link (GET /api/v1/links/{alias}/tags).",
    scope: 'tags:read',
    annotations: READ,
    input: args({ alias: t.Optional(Alias), domain: LinkDomain }),
    rest: (a) => (a.alias === undefined ? { method: 'GET', path: '/api/v1/tags' } : { method: 'GET', path: `/api/v1/links/${seg(a.alias)}/tags`, query: pick(a, ['domain']) }),
    summary: (body) => {
      const tags = (body.tags ?? []) as Json[]
      return `${tags.length} tags${tags.length ? `: ${tags.map((tag) => `${str(tag.name)} (id ${str(tag.id)})`).join(', ')}` : ''}`
    },
  },
  {
    name: 'create_tag',
    title: 'Create a tag',
    description: `A new tag (POST /api/v1/tags): name 1-30 characters, unique in the account regardless of case; at most ${DEFAULT_LIMITS.tagsPerAccount} tags an account.`,
    scope: 'tags:write',
    annotations: CREATE,
    input: args({ ...CreateTagRequest.properties }),
    rest: (a) => ({ method: 'POST', path: '/api/v1/tags', body: pick(a, fieldsOf(CreateTagRequest)) }),
    summary: (body) => `Created tag ${str(body.tag?.name)} (id ${str(body.tag?.id)})`,
  },
  {
    name: 'delete_tag',
    title: 'Delete a tag',
    description: 'Deletes a tag and removes it from every link that carried it (DELETE /api/v1/tags/{tagId}).',
    scope: 'tags:write',
    annotations: CHANGE,
    input: args({ tagId: TagId }),
    rest: (a) => ({ method: 'DELETE', path: `/api/v1/tags/${seg(a.tagId)}` }),
    summary: (body) => str(body.message),
  },
  {
    name: 'tag_link',
    title: 'Tag a link',
    description: "Assigns one of the account's tags to one of its links (POST /api/v1/links/{alias}/tags); assigning twice changes nothing.",
    scope: 'tags:write',
    annotations: ADD,
    input: args({ alias: Alias, tagId: TagId, domain: LinkDomain }),
    rest: (a) => ({ method: 'POST', path: `/api/v1/links/${seg(a.alias)}/tags`, body: pick(a, ['tagId', 'domain']) }),
    summary: (body) => str(body.message),
  },
  {
    name: 'untag_link',
    title: 'Remove a tag from a link',
    description: 'Removes a tag from a link (DELETE /api/v1/links/{alias}/tags/{tagId}); removing one that is not there changes nothing.',
    scope: 'tags:write',
    annotations: CHANGE,
    input: args({ alias: Alias, tagId: TagId, domain: LinkDomain }),
    rest: (a) => ({ method: 'DELETE', path: `/api/v1/links/${seg(a.alias)}/tags/${seg(a.tagId)}`, query: pick(a, ['domain']) }),
    summary: (body) => str(body.message),
  },
  {
    name: 'account_status',
    title: 'Plan and usage',
    description: "The account's plan, its limits, and what this month has used (GET /api/v1/account/status).",
    scope: 'account:read',
    annotations: READ,
    input: args({}),
    rest: () => ({ method: 'GET', path: '/api/v1/account/status' }),
    summary: (body) => `Plan ${str(body.data?.account_type)}; ${str(body.data?.usage?.links_remaining)} links left this month`,
  },
  {
    name: 'get_approval',
    title: 'Read an approval',
    description:
      'An approval this Agent asked for, when an operation was held for the human (GET /api/v1/agent/approvals/{approvalId}): pending, approved, rejected, expired, executed or failed, and once it ran, the answer of the operation in result.',
    scope: null,
    annotations: READ,
    input: args({ approvalId: ApprovalParams.properties.approvalId }),
    rest: (a) => ({ method: 'GET', path: `/api/v1/agent/approvals/${seg(a.approvalId)}` }),
    summary: (body) => `Approval ${str(body.data?.id)} is ${str(body.data?.status)}${body.data?.result ? `; the operation answered ${str(body.data.result.status)}` : ''}`,
  },
]

/**
 * Every tool that changes something takes `idempotency_key`, sent as the REST Idempotency-Key header: a
 * host that retries after a lost answer gets the first result again instead of a second link (docs/api.md#idempotency).
 */
const IdempotencyKey = t.Optional(
  t.String({
    minLength: 1,
    maxLength: 255,
    pattern: '^[\\x20-\\x7e]+$',
    description: 'Makes a retry safe: the same key with the same arguments replays the first result (REST Idempotency-Key, kept 24 h)',
  }),
)

function withIdempotencyKey(tool: ToolSpec): ToolSpec {
  if (tool.annotations.readOnlyHint || tool.name === 'check_alias') return tool
  const input = tool.input as unknown as { properties: Record<string, TSchema>; description?: string }
  return { ...tool, input: args({ ...input.properties, idempotency_key: IdempotencyKey }, input.description) }
}

export const TOOLS: readonly ToolSpec[] = SPECS.map((tool) => withIdempotencyKey({ ...tool, description: tool.description + scopeNote(tool.scope) }))

/** Every scope a tool needs: what an MCP client should ask for (the /mcp 401's `scope`). */
export const TOOL_SCOPES: readonly Scope[] = [...new Set(TOOLS.flatMap((tool) => (tool.scope ? [tool.scope] : [])))]
