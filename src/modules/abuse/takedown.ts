// Existing links follow the lists: when a refresh adds entries, every stored link whose destination (or
// a routing destination) they block is disabled, written through to the cache and announced, so every
// redirector answers 410 within seconds. An "added" change names the new hosts and prefixes: the links
// to those hosts (and their subdomains) are one index range each (links.url_host_rev). A "rescan" (the
// first lists after a start, or too many new entries to list) checks every stored link, in pages. Links
// with routing are few: their rules and variants are checked on every change.
import { and, asc, eq, gt, inArray, isNotNull, like, ne, or } from 'drizzle-orm'
import { links, type LinkRow } from '../../db/schema'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import type { Services } from '../../services'
import { disableForGood, MARKS } from '../links/state'
import type { BlocklistChange } from './blocklists'

/** The outbox, when wired, carries each disabled link's `link.disabled` event (links/state.ts). */
type TakedownServices = Pick<Services, 'db' | 'kv' | 'counters' | 'config' | 'now' | 'webhookOutbox'>

/** Links read at a time by a rescan. */
const PAGE = 1000
const REASON = 'on a block list'

/** Whether any destination of the row (its URL, its rules' and its running test's) is listed. */
function listedRow(row: Pick<LinkRow, 'url' | 'routing'>, listed: (href: string) => boolean): boolean {
  if (listed(row.url)) return true
  const routing = row.routing
  if (!routing) return false
  return routing.rules.some((rule) => listed(rule.url)) || (routing.ab?.status === 'running' && routing.ab.variants.some((v) => listed(v.url)))
}

const reversed = (host: string) => [...host].reverse().join('')

/** Links a list may still take down: not disabled, or disabled only by their account's suspension (whose
 * restore must not bring back a link a list now covers). */
const takeable = () => or(ne(links.state, 'disabled'), inArray(links.stateReason, [...MARKS]))!

/** Disables the stored links a change of the lists covers; how many it disabled. */
export async function takeDownListed(services: TakedownServices, change: BlocklistChange, listed: (href: string) => boolean): Promise<number> {
  const candidates: Pick<LinkRow, 'id' | 'url' | 'routing'>[] = []
  const columns = { id: links.id, url: links.url, routing: links.routing }
  if (change.kind === 'added') {
    const hosts = [...new Set([...change.hosts, ...change.prefixes.map((p) => p.host)])]
    for (const host of hosts) {
      const key = reversed(host)
      const subdomains = `${key.replace(/[\\%_]/g, '\\$&')}.%`
      const rows = await services.db
        .select(columns)
        .from(links)
        .where(and(takeable(), or(eq(links.urlHostReversed, key), like(links.urlHostReversed, subdomains))))
      candidates.push(...rows)
    }
    // Routing destinations are not in the host index: the routed links are checked whole.
    candidates.push(
      ...(await services.db
        .select(columns)
        .from(links)
        .where(and(takeable(), isNotNull(links.routing)))),
    )
  } else {
    let after = ''
    for (;;) {
      const page = await services.db
        .select(columns)
        .from(links)
        .where(and(takeable(), gt(links.id, after)))
        .orderBy(asc(links.id))
        .limit(PAGE)
      candidates.push(...page.filter((row) => listedRow(row, listed)))
      if (page.length < PAGE) break
      after = page[page.length - 1]!.id
    }
  }
  const ids = [...new Set(candidates.filter((row) => listedRow(row, listed)).map((row) => row.id))]
  const disabled = await disableForGood(services, ids, REASON)
  return disabled.length
}

/** Wires a change of the lists to the takedown; failures are logged (the next change or restart tries again). */
export function takeDownOnChange(services: TakedownServices, listed: (href: string) => boolean) {
  return async (change: BlocklistChange): Promise<void> => {
    try {
      const disabled = await takeDownListed(services, change, listed)
      if (disabled > 0) log.warn({ component: 'blocklists', disabled, change: change.kind }, `${disabled} stored link(s) disabled: their destinations are on a block list`)
    } catch (error) {
      log.error({ component: 'blocklists', error: errorSummary(error) }, 'disabling the links a block list covers failed')
    }
  }
}
