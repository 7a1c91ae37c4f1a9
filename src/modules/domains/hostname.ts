// What a custom domain may be: a DNS host name someone can prove control of with a TXT record, that a
// browser sends as Host. Stored lower-case, international names in their ASCII (punycode) form, which is
// what browsers send and what DNS holds.
import type { Config } from '../../../core/config'
import { ApiError } from '../../plugins/errors'
import { normalizeHost, ownHosts } from '../links/url'

/** RFC 1035 2.3.4. */
const MAX_HOSTNAME_LENGTH = 253
const MAX_LABEL_LENGTH = 63
const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/
const IPV4 = /^\d+\.\d+\.\d+\.\d+$/
/** Anything a host name cannot contain: a port, a path, credentials, an IPv6 literal, escapes, spaces. */
const NOT_HOST_CHARS = /[\s/?#@:\\%[\]<>"'`^{}|]/
/**
 * Special-use names (RFC 6761, RFC 6762, RFC 7686, ICANN's .internal): never resolvable on the public
 * internet, so no visitor could reach a link on them.
 */
const SPECIAL_TLDS = new Set(['localhost', 'local', 'internal', 'invalid', 'arpa', 'onion', 'home', 'lan'])

function invalid(hint: string): ApiError {
  return new ApiError('INVALID_DOMAIN', hint)
}

/** Normalises a host name as given by a caller, or throws INVALID_DOMAIN with the reason. */
export function parseHostname(raw: string): string {
  let input = raw.trim()
  if (input === '') throw invalid('hostname is empty.')
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(input)) throw invalid('hostname is a URL; send only the host name, e.g. links.example.com.')
  if (NOT_HOST_CHARS.test(input)) throw invalid('hostname must be a host name only: no scheme, port, path, spaces or IP literal.')
  // An absolute name ("links.example.com.") is the same host.
  if (input.endsWith('.')) input = input.slice(0, -1)
  let host: string
  try {
    // The WHATWG parser lower-cases and applies IDNA (UTS 46): "Bücher.Example" → "xn--bcher-kva.example".
    host = normalizeHost(new URL(`http://${input}`).hostname)
  } catch {
    throw invalid('hostname is not a valid domain name.')
  }
  if (IPV4.test(host)) throw invalid('hostname must be a domain name, not an IP address.')
  if (host.length > MAX_HOSTNAME_LENGTH) throw invalid(`hostname must be at most ${MAX_HOSTNAME_LENGTH} characters.`)
  const labels = host.split('.')
  if (labels.length < 2) throw invalid('hostname needs at least two labels, e.g. example.com.')
  for (const label of labels) {
    if (label.length === 0 || label.length > MAX_LABEL_LENGTH || !LABEL.test(label)) {
      throw invalid(`hostname label "${label.slice(0, MAX_LABEL_LENGTH + 1)}" is not valid: 1-63 letters, digits or inner hyphens.`)
    }
  }
  const tld = labels.at(-1)!
  if (/^\d+$/.test(tld)) throw invalid('hostname must end in a top-level domain, not a number.')
  if (SPECIAL_TLDS.has(tld)) throw invalid(`.${tld} names are not reachable on the public internet.`)
  return host
}

/** Host names that belong to the service: the short domain (and its subdomains) and the API's host. */
export function assertNotOwnHost(host: string, config: Pick<Config, 'shortDomain' | 'shortBaseUrl' | 'publicApiUrl'>): void {
  const own = ownHosts(config)
  try {
    own.add(normalizeHost(new URL(config.publicApiUrl).hostname))
  } catch {
    // parseConfig has validated it.
  }
  for (const ownHost of own) {
    if (host === ownHost || host.endsWith(`.${ownHost}`)) {
      throw new ApiError('DOMAIN_RESERVED', `${host} belongs to this service (${ownHost}) and cannot be added as a custom domain.`)
    }
  }
}
