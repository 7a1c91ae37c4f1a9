// Destination block lists: the one owner of "is this destination on a list?" (BLOCKLIST_FILES,
// BLOCKLIST_URLS, ALLOWLIST_HOSTS in docs/configuration.md). createBlocklists(config, deps) gives
//
//   check(url)    the verdict for a destination about to be written: { allowed: true }, or { allowed:
//                 false, code } with INVALID_URL (not a URL, or user-info in it) or DESTINATION_BLOCKED,
//                 which names no list. Synchronous: a few hash probes on the lists in memory.
//   explain(url)  for operators only: which source and entry blocks it, or whether the allowlist lets it by.
//   start()       reads BLOCKLIST_FILES and fetches BLOCKLIST_URLS once (a file that fails rejects: a
//                 list the operator named must be there), then refreshes every BLOCKLIST_REFRESH (5
//                 minutes after a failure, if sooner). Await it before serving writes.
//   refresh()     every source now (serialised with the timer's refreshes).
//   onChange(fn)  told, after each swap, what the new lists block that the old did not (the links to
//                 disable), or to check every stored link (after start, or when that is too many to list).
//   status()      per source: entries, format, loads, 304s, failures, blocks; for logs and /metrics.
//   stop()        ends the timer and any fetch in flight.
//
// A refresh reads one source at a time (files only when their mtime or size changed; URLs with
// If-None-Match / If-Modified-Since, a 304 keeping the list), parses and builds its lists in slices off
// to the side, works out what they add, and swaps the snapshot in one assignment. A source that fails
// (unreadable, refused by the SSRF guard, HTTP error, too large, not a list) keeps its last good lists;
// the failure is logged and counted. A list's validators are kept only once its body was accepted, so a
// body that failed to parse is fetched whole again next time.
import { stat } from 'node:fs/promises'
import type { BlocklistConfig } from '../../../core/config'
import { HostTable, HostTableBuilder } from './host-table'
import { fetchList, type Resolve, type Validators } from './list-fetch'
import { ListParser, type ListFormat } from './list-formats'
import { addedEntries, match, NO_LISTS, SourceBuilder, type Added, type Snapshot } from './matcher'
import { hasUserInfo, listHost, matchKey, parseUrl } from './normalize'
import { SLICE_MS, Slices } from './slices'

/** After a failed refresh, the next comes this soon (or at BLOCKLIST_REFRESH if sooner); URLhaus asks for no more than one fetch in 5 minutes. */
export const RETRY_AFTER_FAILURE_MS = 5 * 60_000
/** More new entries than this are not listed: the change says to check every stored link instead. */
export const MAX_LISTED_CHANGES = 50_000

export type DestinationVerdict = { allowed: true } | { allowed: false; code: 'INVALID_URL' | 'DESTINATION_BLOCKED' }

export type BlocklistChange =
  /** What source `source` now blocks that was not blocked before: disable the stored links it covers. */
  | ({ kind: 'added'; source: string } & Added)
  /** Check every stored link with check(): the first lists since start, or more new entries than MAX_LISTED_CHANGES. */
  | { kind: 'rescan'; reason: 'start' | 'many'; source?: string }

export interface SourceStatus {
  /** `file:<path>` or `url:<origin and path>` (no user-info, no query: it may hold a key). */
  name: string
  format: ListFormat | undefined
  hosts: number
  prefixes: number
  /** Lines of the last list accepted that were skipped (not of its format). */
  skippedLines: number
  loads: number
  notModified: number
  failures: number
  /** Destinations this source refused (check() calls). */
  blocked: number
  /** When its list was last read in full and accepted (unix ms). */
  lastLoadedAt: number | undefined
  /** When the source last answered with a list: read in full, or confirmed unchanged (a 304, the same file). */
  lastConfirmedAt: number | undefined
  lastError: string | undefined
}

export interface BlocklistStatus {
  sources: SourceStatus[]
  allowlistHosts: number
  checks: number
  /** Checks the allowlist decided (the host or a parent domain on it). */
  allowlisted: number
}

export interface BlocklistsDeps {
  /** Told of every load and failure, never per check. */
  log?: (line: string) => void
  resolve?: Resolve
  now?: () => number
  /** Budget of one list fetch and bound of its body (list-fetch.ts); tests shorten them. */
  fetchTimeoutMs?: number
  maxListBytes?: number
}

export interface Blocklists {
  check(url: string | URL): DestinationVerdict
  explain(url: string | URL): { source: string; entry: string } | { allowlisted: true } | null
  start(): Promise<void>
  refresh(): Promise<void>
  onChange(listener: (change: BlocklistChange) => void | Promise<void>): () => void
  status(): BlocklistStatus
  stop(): Promise<void>
}

interface Source {
  status: SourceStatus
  kind: 'file' | 'url'
  /** The path, or the URL as configured (it may hold a key: never logged). */
  location: string
  validators: Validators
  /** mtime and size of the file when it was last read. */
  stamp: string | undefined
}

const INVALID: DestinationVerdict = { allowed: false, code: 'INVALID_URL' }
const BLOCKED: DestinationVerdict = { allowed: false, code: 'DESTINATION_BLOCKED' }
const ALLOWED: DestinationVerdict = { allowed: true }

/** A URL as logs and metrics may show it. */
function shownUrl(text: string): string {
  const url = parseUrl(text)
  return url ? `${url.origin}${url.pathname}` : 'an invalid URL'
}

function newSource(kind: 'file' | 'url', location: string): Source {
  const name = kind === 'file' ? `file:${location}` : `url:${shownUrl(location)}`
  const status: SourceStatus = {
    name,
    format: undefined,
    hosts: 0,
    prefixes: 0,
    skippedLines: 0,
    loads: 0,
    notModified: 0,
    failures: 0,
    blocked: 0,
    lastLoadedAt: undefined,
    lastConfirmedAt: undefined,
    lastError: undefined,
  }
  return { status, kind, location, validators: {}, stamp: undefined }
}

export function createBlocklists(config: { blocklists: BlocklistConfig }, deps: BlocklistsDeps = {}): Blocklists {
  const settings = config.blocklists
  const log = deps.log ?? (() => {})
  const now = deps.now ?? Date.now
  const sources = [...settings.files.map((path) => newSource('file', path)), ...settings.urls.map((url) => newSource('url', url))]
  const listeners = new Set<(change: BlocklistChange) => void | Promise<void>>()
  let snapshot: Snapshot = { allow: HostTable.EMPTY, sources: sources.map(() => NO_LISTS) }
  const counts = { checks: 0, allowlisted: 0 }
  let started = false
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let queue: Promise<unknown> = Promise.resolve()
  const halt = new AbortController()

  /** Runs `work` after every refresh queued before it. */
  function serial<T>(work: () => Promise<T>): Promise<T> {
    const run = queue.then(work, work)
    queue = run.catch(() => {})
    return run
  }

  function notify(change: BlocklistChange): void {
    for (const listener of listeners) {
      try {
        Promise.resolve(listener(change)).catch((error) => log(`blocklists: a change listener failed: ${error instanceof Error ? error.message : error}`))
      } catch (error) {
        log(`blocklists: a change listener failed: ${error instanceof Error ? error.message : error}`)
      }
    }
  }

  /** The source's text, or null when it is unchanged (a file of the same mtime and size, a 304). */
  async function read(source: Source): Promise<{ text: AsyncIterable<string>; accepted: () => void } | null> {
    if (source.kind === 'file') {
      const info = await stat(source.location)
      const stamp = `${info.mtimeMs}:${info.size}`
      if (stamp === source.stamp) return null
      return { text: decoded(Bun.file(source.location).stream()), accepted: () => (source.stamp = stamp) }
    }
    const response = await fetchList(new URL(source.location), {
      allowHttpLoopback: settings.allowHttpLoopback,
      validators: source.validators,
      resolve: deps.resolve,
      timeoutMs: deps.fetchTimeoutMs,
      maxBytes: deps.maxListBytes,
      signal: halt.signal,
    })
    if (!response.modified) {
      source.status.notModified++
      return null
    }
    return { text: response.text, accepted: () => (source.validators = response.validators) }
  }

  /** Reads, parses and swaps in one source; false when it failed (and kept its last lists). */
  async function refreshSource(index: number, announce: boolean): Promise<boolean> {
    const source = sources[index]!
    const status = source.status
    const began = now()
    try {
      const body = await read(source)
      if (body === null) {
        status.lastConfirmedAt = now()
        return true
      }
      // At start nothing is served yet: full speed. A refresh rests between slices (slices.ts).
      const slices = new Slices(SLICE_MS, announce)
      const builder = new SourceBuilder()
      const parser = new ListParser(builder, slices)
      for await (const text of body.text) await parser.push(text)
      const summary = await parser.end()
      const lists = await builder.build(slices)
      const added = announce ? await addedEntries(snapshot, index, lists, MAX_LISTED_CHANGES, slices) : undefined
      if (stopped) return true
      snapshot = { allow: snapshot.allow, sources: snapshot.sources.map((old, i) => (i === index ? lists : old)) }
      body.accepted()
      Object.assign(status, {
        format: summary.format,
        hosts: lists.hosts.size,
        prefixes: lists.prefixCount,
        skippedLines: summary.skipped,
        lastLoadedAt: now(),
        lastConfirmedAt: now(),
        lastError: undefined,
      })
      status.loads++
      const skipped = summary.skipped > 0 ? `, ${summary.skipped} lines skipped (the first is line ${summary.firstSkipped})` : ''
      const fresh = added === undefined ? '' : added === null ? `; over ${MAX_LISTED_CHANGES} new entries` : `; ${added.hosts.length + added.prefixes.length} new entries`
      log(`blocklists: ${status.name}: ${lists.hosts.size} hosts and ${lists.prefixCount} URL prefixes (${summary.format}${skipped}) in ${now() - began} ms${fresh}`)
      if (added === null) notify({ kind: 'rescan', reason: 'many', source: status.name })
      else if (added && added.hosts.length + added.prefixes.length > 0) notify({ kind: 'added', source: status.name, ...added })
      return true
    } catch (error) {
      if (stopped) return true
      const reason = error instanceof Error ? error.message : String(error)
      status.failures++
      status.lastError = reason
      const kept = status.lastLoadedAt === undefined ? 'no list yet' : `the list of ${new Date(status.lastLoadedAt).toISOString()} stays`
      log(`blocklists: ${status.name}: refresh failed (${kept}): ${reason}`)
      return false
    }
  }

  /** Every source in turn; true when all of them succeeded. */
  async function refreshAll(announce: boolean): Promise<boolean> {
    let ok = true
    for (let i = 0; i < sources.length && !stopped; i++) ok = (await refreshSource(i, announce)) && ok
    return ok
  }

  function schedule(ok: boolean): void {
    if (stopped || sources.length === 0) return
    const delay = ok ? settings.refreshMs : Math.min(settings.refreshMs, RETRY_AFTER_FAILURE_MS)
    timer = setTimeout(() => void serial(() => refreshAll(true)).then(schedule), delay)
    timer.unref?.()
  }

  return {
    check(input) {
      const url = typeof input === 'string' ? parseUrl(input) : input
      if (url === null || hasUserInfo(url)) return INVALID
      counts.checks++
      const found = match(snapshot, matchKey(url))
      if (!found.listed) {
        if (found.allowlisted) counts.allowlisted++
        return ALLOWED
      }
      sources[found.source]!.status.blocked++
      return BLOCKED
    },

    explain(input) {
      const url = typeof input === 'string' ? parseUrl(input) : input
      if (url === null) return null
      const found = match(snapshot, matchKey(url), true)
      if (!found.listed) return found.allowlisted ? { allowlisted: true } : null
      return { source: sources[found.source]!.status.name, entry: found.entry }
    },

    async start() {
      if (started) throw new Error('blocklists: start() called twice')
      started = true
      const allow = new HostTableBuilder()
      for (const text of settings.allowlistHosts) {
        const host = listHost(text)
        if (host !== null) allow.add(host)
      }
      snapshot = { allow: await allow.build(new Slices()), sources: snapshot.sources }
      const ok = await serial(() => refreshAll(false))
      const failedFiles = sources.filter((source) => source.kind === 'file' && source.status.loads === 0)
      if (failedFiles.length > 0) {
        stopped = true
        throw new Error(`BLOCKLIST_FILES: ${failedFiles.map((source) => `${source.location}: ${source.status.lastError}`).join('; ')}`)
      }
      if (sources.length > 0) notify({ kind: 'rescan', reason: 'start' })
      schedule(ok)
    },

    refresh: () => serial(() => refreshAll(true)).then(() => {}),

    onChange(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },

    status: () => ({ sources: sources.map((source) => ({ ...source.status })), allowlistHosts: snapshot.allow.size, checks: counts.checks, allowlisted: counts.allowlisted }),

    async stop() {
      stopped = true
      clearTimeout(timer)
      halt.abort()
      await queue
    },
  }
}

/** A byte stream as UTF-8 text, piece by piece. */
async function* decoded(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8')
  for await (const chunk of stream) yield decoder.decode(chunk, { stream: true })
  const rest = decoder.decode()
  if (rest !== '') yield rest
}
