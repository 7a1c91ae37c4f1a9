import { t } from 'elysia'
import { FreeForm, Int, Meta } from '../../plugins/errors'

/** RFC 1035: 253 characters of host name; a little more is accepted so the service can say why it is wrong. */
export const MAX_HOSTNAME_INPUT = 300

const Hostname = t.String({
  minLength: 1,
  maxLength: MAX_HOSTNAME_INPUT,
  description: 'A domain name you control, e.g. links.example.com; stored lower-case, international names as punycode',
  examples: ['links.example.com'],
})

export const VerificationRecord = t.Object(
  {
    type: t.Literal('TXT'),
    name: t.String({ description: 'Where to create the record', examples: ['_linkservice.links.example.com'] }),
    value: t.String({ description: 'The exact text of the record', examples: ['link-service-verification=3q2-7wEJ9c1yJ8rF0a3x4gAbCdEf'] }),
  },
  { description: 'The DNS record that proves you control the domain' },
)

export const DomainItem = t.Object({
  hostname: t.String({ examples: ['links.example.com'] }),
  verified: t.Boolean(),
  verification: VerificationRecord,
  created_at: t.String({ format: 'date-time' }),
  verified_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  root_url: t.Union([t.String({ format: 'uri' }), t.Null()], {
    description: "Where a visit to the domain's root (`/`) is redirected once the domain is verified; null: a neutral page saying the address serves short links",
  }),
  record_missing_since: t.Union([t.String({ format: 'date-time' }), t.Null()], {
    description:
      'Set when the daily re-check of a verified domain did not find its TXT record (the owner is mailed then); the domain is unverified 7 days after unless the record is back. null while the record is there.',
  }),
})

const pending = {
  hostname: 'links.example.com',
  verified: false,
  verification: { type: 'TXT', name: '_linkservice.links.example.com', value: 'link-service-verification=3q2-7wEJ9c1yJ8rF0a3x4gAbCdEf' },
  created_at: '2026-01-01T12:00:00.000Z',
  verified_at: null,
  root_url: null,
  record_missing_since: null,
}
const verified = { ...pending, verified: true, verified_at: '2026-01-01T12:05:00.000Z', root_url: 'https://example.com/' }
const usage = { domains: 1, domains_limit: 1, domains_remaining: 0 }

export const DomainListResponse = t.Object(
  {
    success: t.Boolean(),
    data: t.Object({ domains: t.Array(DomainItem), total: Int() }),
    meta: Meta,
  },
  { examples: [{ success: true, data: { domains: [verified], total: 1 }, meta: { account_type: 'free', usage } }] },
)

export const DomainResponse = t.Object(
  { success: t.Boolean(), data: DomainItem, meta: Meta },
  {
    examples: [
      {
        success: true,
        data: pending,
        meta: { account_type: 'free', usage, hint: 'Create the TXT record, then call POST /api/v1/domains/links.example.com/verify.' },
      },
    ],
  },
)

export const DomainMessageResponse = t.Object(
  { success: t.Boolean(), message: t.String(), data: t.Optional(FreeForm('links_deleted: how many links went with the domain')), meta: Meta },
  {
    examples: [
      {
        success: true,
        message: 'Domain links.example.com removed with its 3 links.',
        data: { links_deleted: 3 },
        meta: { account_type: 'free', usage: { domains: 0, domains_limit: 1, domains_remaining: 1 } },
      },
    ],
  },
)

export const AddDomainRequest = t.Object({ hostname: Hostname }, { examples: [{ hostname: 'links.example.com' }] })

export const HostnameParams = t.Object({ hostname: Hostname })

export const UpdateDomainRequest = t.Object(
  {
    root_url: t.Union([t.String({ minLength: 1, maxLength: 2048, description: 'An http or https URL that is not served by this service' }), t.Null()], {
      description: "Where the domain's root (`/`) sends visitors; null restores the neutral page",
    }),
  },
  { examples: [{ root_url: 'https://example.com/' }, { root_url: null }] },
)

/**
 * GET /internal/domains: what the redirector keeps in memory. The root URLs are a map beside the list
 * (not objects in it) so a redirector of the previous version, which reads only `domains`, keeps working
 * during a rolling deploy.
 */
export const VerifiedDomainsResponse = t.Object(
  { domains: t.Array(t.String()), root_urls: t.Record(t.String(), t.String()) },
  { examples: [{ domains: ['links.example.com', 'go.example.org'], root_urls: { 'links.example.com': 'https://example.com/' } }] },
)

/** GET /tls/ask: Caddy sends the name of the TLS handshake as `domain`. */
export const TlsAskQuery = t.Object({
  domain: t.String({ description: 'The host name a certificate is wanted for; a port, upper case and a trailing dot are ignored', examples: ['links.example.com'] }),
})

export const TlsAskResponse = t.Object(
  { success: t.Boolean(), data: t.Object({ domain: t.String({ description: 'The host as this service serves it (lower case, punycode)' }) }) },
  { examples: [{ success: true, data: { domain: 'links.example.com' } }] },
)

export const domainModels = { DomainListResponse, DomainResponse, DomainMessageResponse, AddDomainRequest, UpdateDomainRequest, VerifiedDomainsResponse, TlsAskResponse }

export type DomainRecord = typeof DomainItem.static
