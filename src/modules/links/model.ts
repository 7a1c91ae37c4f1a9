import { t } from 'elysia'
import { ALIAS_PATTERN } from '../../core/link-cache'
import { Int, Meta } from '../../plugins/errors'
import { MAX_URL_LENGTH } from './url'

/** A host name, optionally with a port and a trailing dot; normalised to lower case by the service. */
export const DOMAIN_PATTERN = '^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9.])?(?::[0-9]{1,5})?$'

const Alias = t.String({
  pattern: ALIAS_PATTERN.source,
  description: 'A-Z a-z 0-9 _ -; 4-64 characters on the default domain, 1-64 on a verified custom domain',
  examples: ['spring-sale'],
})
const Domain = t.String({ pattern: DOMAIN_PATTERN, maxLength: 260, description: 'Domain that owns the alias; default: the service default domain', examples: ['sho.rt'] })

export const ShortenRequest = t.Object(
  {
    url: t.String({
      description: `Destination: an absolute http(s) URL, at most ${MAX_URL_LENGTH} characters, not on the short domain`,
      examples: ['https://example.com/products/spring?utm_source=newsletter'],
    }),
    alias: t.Optional(Alias),
    domain: t.Optional(Domain),
    password: t.Optional(t.String({ minLength: 1, maxLength: 128, description: 'Visitors must enter it before the redirect' })),
    expiration: t.Optional(t.String({ format: 'date-time', description: 'Default: 30 days after creation' })),
    activated_at: t.Optional(t.String({ format: 'date-time', description: 'The link answers 404 until then' })),
  },
  {
    description: 'With a guest token only url is applied; the other fields are ignored and listed in meta.notices',
    examples: [{ url: 'https://example.com/products/spring?utm_source=newsletter' }],
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
    ],
  },
)

export const AliasCheckRequest = t.Object(
  { alias: Alias, domain: t.Optional(Domain) },
  { examples: [{ alias: 'spring-sale' }, { alias: 'promo', domain: 'links.example.com' }] },
)

export const AliasCheckResponse = t.Object(
  { exists: t.Boolean({ description: 'true when the alias is taken or reserved on that domain' }) },
  { examples: [{ exists: false }] },
)

export const linkModels = { ShortenRequest, LinkResponse, AliasCheckRequest, AliasCheckResponse }

export type ShortenInput = typeof ShortenRequest.static
export type LinkRecord = typeof Link.static
