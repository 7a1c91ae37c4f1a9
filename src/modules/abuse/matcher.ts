// The lists in memory and the one question asked of them: does a destination's match key fall on one?
//
// Each source (a file or a URL of BLOCKLIST_FILES / BLOCKLIST_URLS) keeps its own host table and its
// URL prefixes keyed by host, so a refresh rebuilds only its source and a match says which source it
// was (for operators and metrics; never for the caller's answer). A Snapshot is every source's lists
// plus the allowlist, never changed once made: a refresh builds the next one off to the side and the
// service swaps it in with one assignment, so a check sees the old lists or the new, never a mix.
//
// A lookup: the allowlist (the host and its parent domains), then per source the same walk over its
// host table and the prefixes of the one exact host, so a few hash probes and a handful of startsWith.
// An IP address is looked up exactly: 1.2.3.4 has no parent domain 2.3.4.
import { HostTable, HostTableBuilder } from './host-table'
import type { ListSink } from './list-formats'
import { isIpHost, type MatchKey } from './normalize'
import type { Slices } from './slices'

export interface SourceLists {
  hosts: HostTable
  /** URL prefixes (path and query) by exact host, each host's sorted and without duplicates. */
  prefixes: ReadonlyMap<string, readonly string[]>
  prefixCount: number
}

export const NO_LISTS: SourceLists = { hosts: HostTable.EMPTY, prefixes: new Map(), prefixCount: 0 }

export interface Snapshot {
  allow: HostTable
  /** Indexed like the service's sources. */
  sources: readonly SourceLists[]
}

/** Gathers one list's entries while it is parsed; build() makes its SourceLists. */
export class SourceBuilder implements ListSink {
  private readonly hosts = new HostTableBuilder()
  private readonly prefixes = new Map<string, string[]>()

  host(host: string): void {
    this.hosts.add(host)
  }

  hostAt(text: string, start: number, end: number): void {
    this.hosts.add(text, start, end)
  }

  prefix(host: string, path: string): void {
    const list = this.prefixes.get(host)
    if (list) list.push(path)
    else this.prefixes.set(host, [path])
  }

  async build(slices: Slices): Promise<SourceLists> {
    const hosts = await this.hosts.build(slices)
    const byHost = [...this.prefixes]
    let prefixCount = 0
    await slices.run(byHost.length, (from) => {
      for (let i = from; i < byHost.length; i++) {
        if (slices.due()) return i
        const [host, list] = byHost[i]!
        const unique = [...new Set(list)].sort()
        this.prefixes.set(host, unique)
        prefixCount += unique.length
      }
      return byHost.length
    })
    return { hosts, prefixes: this.prefixes, prefixCount }
  }
}

/** The entry of `table` that `host` falls under (itself, or a parent domain unless it is an IP), or -1. */
export function hostEntry(table: HostTable, host: string): number {
  if (isIpHost(host)) return table.has(host) ? 0 : -1
  return table.matchDomain(host)
}

/** The first prefix of `lists` for this exact host that `path` starts with. */
function prefixEntry(lists: SourceLists, key: MatchKey): string | undefined {
  const prefixes = lists.prefixes.get(key.host)
  if (prefixes === undefined) return undefined
  for (const prefix of prefixes) if (key.path.startsWith(prefix)) return prefix
  return undefined
}

export type Match = { listed: true; source: number; entry: string } | { listed: false; allowlisted: boolean }

const UNLISTED: Match = { listed: false, allowlisted: false }
const ALLOWLISTED: Match = { listed: false, allowlisted: true }

/** Where the key is listed: the allowlist wins over every source; otherwise the first source that lists it. */
export function match(snapshot: Snapshot, key: MatchKey, withEntry = false): Match {
  if (key.host === '') return UNLISTED
  if (hostEntry(snapshot.allow, key.host) >= 0) return ALLOWLISTED
  for (let source = 0; source < snapshot.sources.length; source++) {
    const lists = snapshot.sources[source]!
    const at = hostEntry(lists.hosts, key.host)
    if (at >= 0) return { listed: true, source, entry: withEntry ? (isIpHost(key.host) ? key.host : lists.hosts.entry(at)) : '' }
    const prefix = prefixEntry(lists, key)
    if (prefix !== undefined) return { listed: true, source, entry: withEntry ? `${key.host}${prefix}` : '' }
  }
  return UNLISTED
}

/** What a new version of one source blocks that the snapshot before it did not. */
export interface Added {
  /** Host entries: links to the host or a subdomain of it may now be blocked. */
  hosts: string[]
  /** URL prefixes: links to this exact host whose path and query start with the prefix. */
  prefixes: { host: string; prefix: string }[]
}

/**
 * The entries of `next` (the new lists of source `source`) that `before` did not already block, or
 * null once there are more than `limit` (the caller then checks everything instead). An entry the old
 * version of the source had, or that another source or a parent domain already covered, is not new; one
 * the allowlist covers blocks nothing. Runs in slices: a million entries take a few hundred ms.
 */
export async function addedEntries(before: Snapshot, source: number, next: SourceLists, limit: number, slices: Slices): Promise<Added | null> {
  const old = before.sources[source] ?? NO_LISTS
  const added: Added = { hosts: [], prefixes: [] }
  const covered = (host: string) => hostEntry(before.allow, host) >= 0 || before.sources.some((lists) => hostEntry(lists.hosts, host) >= 0)
  let over = false
  await slices.run(next.hosts.size, (from) => {
    for (let i = from; i < next.hosts.size; i++) {
      if (slices.due()) return i
      if (old.hosts.hasEntryOf(next.hosts, i)) continue
      const host = next.hosts.entry(i)
      if (covered(host)) continue
      if (added.hosts.push(host) > limit) {
        over = true
        return next.hosts.size
      }
    }
    return next.hosts.size
  })
  if (over) return null
  const prefixes = [...next.prefixes].flatMap(([host, list]) => list.map((prefix) => ({ host, prefix })))
  await slices.run(prefixes.length, (from) => {
    for (let i = from; i < prefixes.length; i++) {
      if (slices.due()) return i
      const { host, prefix } = prefixes[i]!
      const oldPrefixes = old.prefixes.get(host)
      if (oldPrefixes && sortedHas(oldPrefixes, prefix)) continue
      if (match(before, { host, path: prefix }).listed || hostEntry(before.allow, host) >= 0) continue
      if (added.hosts.length + added.prefixes.push({ host, prefix }) > limit) {
        over = true
        return prefixes.length
      }
    }
    return prefixes.length
  })
  return over ? null : added
}

function sortedHas(sorted: readonly string[], value: string): boolean {
  let low = 0
  let high = sorted.length - 1
  while (low <= high) {
    const mid = (low + high) >>> 1
    const at = sorted[mid]!
    if (at === value) return true
    if (at < value) low = mid + 1
    else high = mid - 1
  }
  return false
}
