import { t } from 'elysia'
import { Int } from '../../plugins/errors'
import { DOMAIN_PATTERN } from '../links/model'

export const ResolveQuery = t.Object({
  domain: t.String({ pattern: DOMAIN_PATTERN, maxLength: 260, example: 'sho.rt' }),
  alias: t.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', example: 'aZ3kP9q' }),
})

/** The CachedLink of core/link-cache.ts, as JSON. */
export const CachedLinkResponse = t.Object(
  {
    v: t.Union([t.Literal(1), t.Literal(2), t.Literal(3)], { description: '2 with routing (r), 3 taken down (st), each only for a redirector that reads it (x-link-cache-version)' }),
    id: t.String(),
    url: t.String(),
    exp: t.Optional(Int({ description: 'expiry, unix ms' })),
    act: t.Optional(Int({ description: 'activation, unix ms' })),
    pw: t.Optional(t.Literal(1)),
    pro: t.Optional(t.Literal(1)),
    r: t.Optional(t.Object({}, { additionalProperties: true, description: 'rules and a running A/B test (core/routing.ts CachedRouting)' })),
    st: t.Optional(t.Union([t.Literal('flagged'), t.Literal('disabled')], { description: 'taken down for abuse' })),
  },
  { examples: [{ v: 1, id: 'link_3q2-7wEJ9c1yJ8rF0a3x4g', url: 'https://example.com/', exp: 1767225600000 }] },
)

/** What the redirector sends when a visitor submits the password form. */
export const UnlockRequest = t.Object({
  link_id: t.String({ pattern: '^[A-Za-z0-9_-]{1,100}$' }),
  // Longer than any password a link can have (128): a longer one is simply wrong, not malformed.
  password: t.String({ maxLength: 1024 }),
  /** The visitor's address as the redirector sees it: the key of the attempt limit. */
  ip: t.String({ maxLength: 64 }),
})

/** A report from a link's inspect page, as the redirector forwards it with the visitor's address. */
export const InternalReportRequest = t.Object({
  domain: t.String({ pattern: DOMAIN_PATTERN, maxLength: 260 }),
  alias: t.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
  reason: t.String({ maxLength: 40 }),
  details: t.String({ maxLength: 4000 }),
  email: t.String({ maxLength: 400 }),
  ip: t.String({ maxLength: 64 }),
})

export const internalModels = { ResolveQuery, CachedLinkResponse, UnlockRequest, InternalReportRequest }
