// Destination URL rules. A short link is only ever a redirect to a web page: anything a browser would
// execute or read locally (javascript:, data:, file:, blob:, …) is refused, and so is a link back to
// this service — its short domain, its API host, a verified custom domain of any account, or any
// spelling of an address of the machine that follows it (loopback, unspecified, link-local): such a
// link redirects to itself until the client gives up, counting a click at every hop. A DNS name that
// resolves to us slips through; the redirector's loop marker ends that after one hop (508).
import { and, inArray, isNotNull } from 'drizzle-orm'
import type { Config } from '../../../core/config'
import { domains } from '../../db/schema'
import { isThisMachine } from '../../lib/hosts'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { MAX_URL_LENGTH } from './model'

const ALLOWED_PROTOCOLS = new Set(['http:', 'https:'])
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/

type DestinationConfig = Pick<Config, 'shortDomain' | 'shortBaseUrl' | 'publicApiUrl'>

/** Host names of this service: its short domain(s) and its API host, lower-case, without port or trailing dot. */
export function ownHosts(config: DestinationConfig): Set<string> {
  const hosts = new Set<string>([normalizeHost(config.shortDomain.replace(/:\d+$/, ''))])
  for (const base of [config.shortBaseUrl, config.publicApiUrl]) {
    try {
      hosts.add(normalizeHost(new URL(base).hostname))
    } catch {
      // parseConfig has already validated it; nothing to add otherwise.
    }
  }
  return hosts
}

export function normalizeHost(host: string): string {
  return host.toLowerCase().replace(/\.+$/, '')
}

/** Returns the normalised destination (WHATWG href) or throws INVALID_URL / DESTINATION_LOOPS. */
export function validateDestination(raw: string, config: DestinationConfig): string {
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
  // "https://paypal.com@evil.example/" reads as paypal.com to a person and leads to evil.example.
  if (url.username !== '' || url.password !== '') throw new ApiError('INVALID_URL', 'url must not carry a user name or password before its host (user@host).')
  const host = normalizeHost(url.hostname)
  if (host === '') throw new ApiError('INVALID_URL', 'url must have a host.')
  if (ownHosts(config).has(host)) throw loops(`${host} is this service's own host`)
  if (isThisMachine(host)) throw loops(`${host.slice(0, 64)} is an address of the machine that would follow the link`)
  const href = url.href
  if (href.length > MAX_URL_LENGTH) throw new ApiError('INVALID_URL', `url must be at most ${MAX_URL_LENGTH} characters once encoded.`)
  return href
}

function loops(why: string): ApiError {
  return new ApiError('DESTINATION_LOOPS', `url must not lead back to this service: ${why}.`)
}

/** validateDestination, and not a verified custom domain of any account (those are served here too). */
export async function checkDestination(services: Pick<Services, 'config' | 'db'>, raw: string): Promise<string> {
  const [checked] = await checkDestinations(services, [raw])
  if (checked instanceof ApiError) throw checked
  return checked!
}

/** checkDestination of many URLs (a bulk request) with one query: each normalised URL, or its refusal. */
export async function checkDestinations(services: Pick<Services, 'config' | 'db'>, raws: readonly string[]): Promise<(string | ApiError)[]> {
  const checked = raws.map((raw) => {
    try {
      const href = validateDestination(raw, services.config)
      return { href, host: normalizeHost(new URL(href).hostname) }
    } catch (error) {
      if (error instanceof ApiError) return error
      throw error
    }
  })
  const hosts = [...new Set(checked.flatMap((c) => (c instanceof ApiError ? [] : [c.host])))]
  const served = new Set(
    hosts.length === 0
      ? []
      : (
          await services.db
            .select({ hostname: domains.hostname })
            .from(domains)
            .where(and(inArray(domains.hostname, hosts), isNotNull(domains.verifiedAt)))
        ).map((row) => row.hostname),
  )
  return checked.map((c) => (c instanceof ApiError ? c : served.has(c.host) ? loops(`${c.host} is a custom domain served here`) : c.href))
}
