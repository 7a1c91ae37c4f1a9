// Destination URL rules. A short link is only ever a redirect to a web page: anything a browser would
// execute or read locally (javascript:, data:, file:, blob:, …) is refused, and so is a link back to
// this service — its short domain, its API host, a verified custom domain of any account, or any
// spelling of an address of the machine that follows it (loopback, unspecified, link-local): such a
// link redirects to itself until the client gives up, counting a click at every hop. A DNS name that
// resolves to us slips through; the redirector's loop marker ends that after one hop (508).
import { and, inArray, isNotNull } from 'drizzle-orm'
import type { Config } from '../../../core/config'
import { bannedHosts, domains } from '../../db/schema'
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
export async function checkDestination(services: Pick<Services, 'config' | 'db' | 'destinationListed'>, raw: string): Promise<string> {
  const [checked] = await checkDestinations(services, [raw])
  if (checked instanceof ApiError) throw checked
  return checked!
}

/**
 * checkDestination of many URLs (a bulk request) with two queries: each normalised URL, or its refusal.
 * Besides the rules above, a destination on a block list or whose host (or a parent domain of it) an
 * operator banned is 400 DESTINATION_BLOCKED, which names no list.
 */
export async function checkDestinations(services: Pick<Services, 'config' | 'db' | 'destinationListed'>, raws: readonly string[]): Promise<(string | ApiError)[]> {
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
  const banned = await bannedAmong(services, hosts)
  return checked.map((c) => {
    if (c instanceof ApiError) return c
    if (served.has(c.host)) return loops(`${c.host} is a custom domain served here`)
    if (hostAndParents(c.host).some((name) => banned.has(name)) || services.destinationListed?.(c.href)) return blocked()
    return c.href
  })
}

function blocked(): ApiError {
  return new ApiError('DESTINATION_BLOCKED')
}

/** A host and each parent domain that still has a dot: `a.b.example.com`, `b.example.com`, `example.com`. */
export function hostAndParents(host: string): string[] {
  const names = [host]
  for (let dot = host.indexOf('.'); dot >= 0 && host.indexOf('.', dot + 1) >= 0; dot = host.indexOf('.', dot + 1)) names.push(host.slice(dot + 1))
  return names
}

/** The names among `hosts` and their parents that an operator banned (every process reads the table). */
async function bannedAmong(services: Pick<Services, 'db'>, hosts: readonly string[]): Promise<Set<string>> {
  const names = [...new Set(hosts.flatMap(hostAndParents))]
  if (names.length === 0) return new Set()
  const rows = await services.db.select({ host: bannedHosts.host }).from(bannedHosts).where(inArray(bannedHosts.host, names))
  return new Set(rows.map((row) => row.host))
}
