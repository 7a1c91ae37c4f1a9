// The protected resources an at_ token may be for (RFC 8707 audiences), and where each is accepted. The
// server has two resource identifiers: the issuer (the REST API and /mcp) and `<issuer>/mcp`, which the
// /mcp metadata document names (RFC 9728 3.3) and MCP hosts therefore ask for. A token for the issuer
// works everywhere; one for `<issuer>/mcp` only at /mcp, as its holder asked.
import type { Config } from '../../../core/config'

/** Where a token is presented: the REST API, or the MCP endpoint. */
export type Endpoint = 'api' | 'mcp'

type Urls = Pick<Config, 'publicApiUrl'>

/** The two resource identifiers, as stored with codes and tokens (the issuer has no trailing slash). */
export function resourcesOf(config: Urls): Record<Endpoint, string> {
  return { api: config.publicApiUrl, mcp: `${config.publicApiUrl}/mcp` }
}

/**
 * RFC 3986 6.2.2-6.2.3 normalisation of an absolute URI: scheme and host lower-case, the default port
 * dropped (the URL parser does these), and an empty path equal to `/` and to a trailing `/` (SDK 1.x up
 * to 1.29 sends `http://host/` for `http://host`). Null for what cannot be a resource (RFC 8707 2: an
 * absolute URI without fragment; credentials are refused too).
 */
export function normalizeResource(raw: string): string | null {
  if (raw.includes('#') || !URL.canParse(raw)) return null
  const url = new URL(raw)
  if (url.username !== '' || url.password !== '' || !url.host) return null
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}${url.search}`
}

/** The stored identifier of the resource a request names: absent is the issuer; null for neither of ours. */
export function resolveResource(config: Urls, raw: string | undefined): string | null {
  const resources = resourcesOf(config)
  if (raw === undefined) return resources.api
  const normalized = normalizeResource(raw)
  if (normalized === null) return null
  return Object.values(resources).find((resource) => normalizeResource(resource) === normalized) ?? null
}

/** Whether a token whose audience is `resource` may be used at `endpoint`. */
export function audienceAllows(config: Urls, resource: string, endpoint: Endpoint): boolean {
  const resources = resourcesOf(config)
  return resource === resources.api || (endpoint === 'mcp' && resource === resources.mcp)
}

/**
 * The resource a token request may ask for, given what its grant covers (RFC 8707 2.2): the same one, or
 * `<issuer>/mcp` out of an issuer grant (a narrower audience); null for anything else.
 */
export function narrowResource(config: Urls, granted: string, raw: string | undefined): string | null {
  if (raw === undefined) return granted
  const asked = resolveResource(config, raw)
  if (asked === null) return null
  return asked === granted || granted === resourcesOf(config).api ? asked : null
}
