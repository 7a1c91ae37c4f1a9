// Destination URL rules. A short link is only ever a redirect to a web page: anything a browser would
// execute or read locally (javascript:, data:, file:, blob:, …) is refused, and so is a link back to
// our own short domain (a loop or a chain that hides the real destination).
import type { Config } from '../../core/config'
import { ApiError } from '../../plugins/errors'

/** Longest destination accepted; the de-facto browser-safe URL length. */
export const MAX_URL_LENGTH = 2048
const ALLOWED_PROTOCOLS = new Set(['http:', 'https:'])
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/

/** Host names that are this service's short domain(s), lower-case, without port or trailing dot. */
export function ownHosts(config: Pick<Config, 'shortDomain' | 'shortBaseUrl'>): Set<string> {
  const hosts = new Set<string>([normalizeHost(config.shortDomain.replace(/:\d+$/, ''))])
  try {
    hosts.add(normalizeHost(new URL(config.shortBaseUrl).hostname))
  } catch {
    // parseConfig has already validated it; nothing to add otherwise.
  }
  return hosts
}

export function normalizeHost(host: string): string {
  return host.toLowerCase().replace(/\.+$/, '')
}

/** Returns the normalised destination (WHATWG href) or throws INVALID_URL / URL_POINTS_TO_SHORT_DOMAIN. */
export function validateDestination(raw: string, config: Pick<Config, 'shortDomain' | 'shortBaseUrl'>): string {
  const input = raw.trim()
  if (input.length === 0) throw new ApiError('INVALID_URL', 'url is empty.')
  if (input.length > MAX_URL_LENGTH) throw new ApiError('INVALID_URL', `url must be at most ${MAX_URL_LENGTH} characters.`)
  // The URL parser silently drops tabs and newlines ("java\nscript:"); refuse them instead.
  if (CONTROL_CHARS.test(input)) throw new ApiError('INVALID_URL', 'url must not contain control characters.')
  let url: URL
  try {
    url = new URL(input)
  } catch {
    throw new ApiError('INVALID_URL', 'url is not an absolute URL; include the scheme, e.g. https://example.com/page.')
  }
  if (!ALLOWED_PROTOCOLS.has(url.protocol)) {
    throw new ApiError('INVALID_URL', `url must use http or https, not ${url.protocol.slice(0, 20)}`)
  }
  const host = normalizeHost(url.hostname)
  if (host === '') throw new ApiError('INVALID_URL', 'url must have a host.')
  if (ownHosts(config).has(host)) {
    throw new ApiError('URL_POINTS_TO_SHORT_DOMAIN', `url must not point at ${host}, this service's short domain.`)
  }
  const href = url.href
  if (href.length > MAX_URL_LENGTH) throw new ApiError('INVALID_URL', `url must be at most ${MAX_URL_LENGTH} characters once encoded.`)
  return href
}
