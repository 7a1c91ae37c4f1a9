// "This host and its subdomains" in SQL, for a link's destination and for its routing destinations. A
// host entry matches itself and every subdomain, as the blocklists do (src/modules/abuse/): a name
// without a dot, or an IP address, matches only itself, so banning `com` cannot take every .com link.
//
// Destinations: links.url_host_rev is the reversed lower-case host, indexed with text_pattern_ops, so
// `evil.example` and its subdomains are one equality and one range (`elpmaxe.live` and everything from
// `elpmaxe.live.` up to, not including, `elpmaxe.live/`: '/' follows '.' in byte order, and the range
// operators ~>=~ ~<~ are the ones that index answers). A stored URL may keep a trailing dot of its host
// (`https://evil.example./`), which reversed leads the value: those few rows are one more range ('.')
// compared without their dots.
//
// Routing rules and A/B variants live in links.routing (jsonb): their hosts are read with the expression
// that fills url_host_rev, over the links that have routing.
import { sql, type SQL } from 'drizzle-orm'
import { links } from '../../db/schema'
import { isIpHost } from '../abuse/normalize'

/** The host of an absolute URL, as the url_host_rev column reads it (schema/links.ts). */
const URL_HOST = '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#:]+)'

const reversed = (text: string) => [...text].reverse().join('')

/** Whether a ban or a search of `host` reaches its subdomains too. */
export const coversSubdomains = (host: string) => host.includes('.') && !isIpHost(host)

/** `value` (a reversed host, no dots in front) is the reversed `host`, or one of its subdomains'. */
function reversedMatch(value: SQL, host: string): SQL {
  const rev = reversed(host)
  if (!coversSubdomains(host)) return sql`${value} = ${rev}`
  return sql`(${value} = ${rev} or (${value} ~>=~ ${`${rev}.`} and ${value} ~<~ ${`${rev}/`}))`
}

/** Links whose destination's host is `host` (normalised: lower-case, punycode) or a subdomain of it. */
export function destinationHostIs(host: string): SQL {
  const column = sql`${links.urlHostReversed}`
  const trailingDots = sql`(${column} ~>=~ '.' and ${column} ~<~ '/' and ${reversedMatch(sql`ltrim(${column}, '.')`, host)})`
  return sql`(${reversedMatch(column, host)} or ${trailingDots})`
}

/** Links with a routing rule or an A/B variant whose destination's host is `host` or a subdomain of it. */
export function routingHostIs(host: string): SQL {
  const destinations = sql`coalesce(${links.routing} -> 'rules', '[]'::jsonb) || coalesce(${links.routing} -> 'ab' -> 'variants', '[]'::jsonb)`
  const hostOf = sql`ltrim(reverse(lower(substring(d.route ->> 'url' from ${URL_HOST}))), '.')`
  return sql`(${links.routing} is not null and exists (select 1 from jsonb_array_elements(${destinations}) as d(route) where ${reversedMatch(hostOf, host)}))`
}
