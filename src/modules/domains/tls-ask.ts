// GET /tls/ask?domain=: whether a host is one this service serves, for Caddy's on-demand TLS (Caddy asks
// before it obtains, or loads from its storage, a certificate for a name it holds none for in memory,
// and refuses the handshake on any answer but 2xx). Served: the default short domain, the API's own
// host, and every verified custom domain. Nothing else: an unverified, deleted or unknown host, an IP
// literal, a value that is no host name. The API's host is there because Caddy files a site it issues
// certificates for itself (a *.localhost name) under the on-demand catch-all, and asks for it too.
//
// Caddy sends no credential and asks from one address, its own, on every handshake for such a name. A
// limit per client IP would throttle Caddy itself and refuse certificates to real domains exactly while
// someone floods it with made-up names; so answers are cached instead. A repeated name costs a Map
// lookup, concurrent asks for one name share one query, and a new name costs one probe of the unique
// index on domains.hostname. A domain's change (verify, unverify, delete) drops its answer in this
// process before it is announced on DOMAIN_CHANNEL, and in every other API process when the announcement
// arrives; the TTL only bounds an announcement that was lost.
import { isIP } from 'node:net'
import { and, eq, isNotNull } from 'drizzle-orm'
import type { Config } from '../../../core/config'
import { DOMAIN_CHANNEL } from '../../../core/link-cache'
import { domains } from '../../db/schema'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import type { Services } from '../../services'
import { normalizeHost } from '../links/url'
import { parseHostname } from './hostname'

/** How long an answer is reused when no announcement replaced it. */
export const ANSWER_TTL_MS = 60_000
/** Answers kept at most: a flood of made-up names cannot grow the cache past this (it starts over). */
const MAX_ANSWERS = 10_000

/** A port Caddy or a caller may leave on the name: "links.example.com:443". One colon only (not IPv6). */
const WITH_PORT = /^([^:]*):\d{1,5}$/

/**
 * The asked value as a host name: trimmed, lower-case, without a port and trailing dots; null for an IP
 * literal (v4, v6, bracketed) or nothing at all.
 */
export function askedHost(raw: string): string | null {
  let value = raw.trim().toLowerCase()
  if (value.startsWith('[')) return null
  const withPort = WITH_PORT.exec(value)
  if (withPort) value = withPort[1]!
  value = normalizeHost(value)
  if (value === '' || isIP(value) !== 0) return null
  return value
}

/** The service's own host names: SHORT_DOMAIN without its port, the short URL's host, the API's host. */
export function serviceHosts(config: Pick<Config, 'shortDomain' | 'shortBaseUrl' | 'publicApiUrl'>): Set<string> {
  const hosts = new Set<string>()
  const fromDomain = askedHost(config.shortDomain)
  if (fromDomain) hosts.add(fromDomain)
  for (const url of [config.shortBaseUrl, config.publicApiUrl]) {
    try {
      const host = askedHost(new URL(url).hostname)
      if (host) hosts.add(host)
    } catch {
      // parseConfig has validated it.
    }
  }
  return hosts
}

/** This process's answer caches by store: a domain change drops its host here before it is published. */
const localCaches = new WeakMap<object, Set<(host: string) => void>>()

/** Drops this process's answers for `host` (service.ts's announce calls it before publishing). */
export function forgetAnswers(services: Pick<Services, 'kv'>, host: string): void {
  for (const drop of localCaches.get(services.kv) ?? []) drop(host)
}

export interface ServedHosts {
  /** The host as served (normalised, international names as punycode), or null when it is not served here. */
  served(raw: string): Promise<string | null>
  /** Resolves once this process listens for domain changes (until then nothing is cached). */
  ready: Promise<void>
}

export function servedHosts(services: Pick<Services, 'db' | 'kv' | 'config' | 'now'>): ServedHosts {
  const own = serviceHosts(services.config)
  const answers = new Map<string, { served: boolean; until: number }>()
  const asking = new Map<string, Promise<boolean>>()
  // Bumped by every announcement: an answer read while one arrived may be older than it, and is not kept.
  let epoch = 0
  let listening = false
  const drop = (host: string) => {
    epoch++
    answers.delete(host)
  }
  let local = localCaches.get(services.kv)
  if (!local) localCaches.set(services.kv, (local = new Set()))
  local.add(drop)
  const ready = services.kv
    .subscribe(DOMAIN_CHANNEL, drop, () => {
      epoch++
      answers.clear()
    })
    .then(() => {
      listening = true
    })
    .catch((error) => {
      log.error({ component: 'domains', error: errorSummary(error) }, 'not subscribed to domain changes; /tls/ask answers are not cached')
    })

  async function lookup(host: string): Promise<boolean> {
    const started = epoch
    const [row] = await services.db
      .select({ id: domains.id })
      .from(domains)
      .where(and(eq(domains.hostname, host), isNotNull(domains.verifiedAt)))
      .limit(1)
    const served = row !== undefined
    if (listening && epoch === started) {
      if (answers.size >= MAX_ANSWERS) answers.clear()
      answers.set(host, { served, until: services.now() + ANSWER_TTL_MS })
    }
    return served
  }

  return {
    ready,
    async served(raw) {
      const asked = askedHost(raw)
      if (asked === null) return null
      if (own.has(asked)) return asked
      let host: string
      try {
        host = parseHostname(asked)
      } catch {
        return null
      }
      const cached = answers.get(host)
      if (cached && cached.until > services.now()) return cached.served ? host : null
      let pending = asking.get(host)
      if (!pending) {
        pending = lookup(host).finally(() => asking.delete(host))
        asking.set(host, pending)
      }
      return (await pending) ? host : null
    },
  }
}
