// The one shape a redirect needs, shared by the API (which writes it through to the cache after every
// Postgres commit) and the redirector (which reads it). Only what a redirect needs, flags only when set,
// never a secret. `v` lets a reader ignore a record written by a newer format during a rolling deploy:
// a link taken down for abuse is written as version 3 (its `st`), a link with routing as version 2 (its
// `r`), every other link as version 1, which a redirector of any earlier release still reads. The
// internal resolve endpoint answers an older redirector (LINK_CACHE_VERSION_HEADER) what it can follow
// safely: a routed link as version 1 (the link's own URL), a link taken down as not found.
import type { CachedRouting } from './routing'

/** The newest version this code writes and reads. */
export const LINK_CACHE_VERSION = 3
/** Versions a record may have: 1 plain, 2 with routing, 3 taken down (with or without routing). */
export type LinkCacheVersion = 1 | 2 | 3
/** The header a redirector sends to /internal/resolve and /internal/unlock with the newest version it reads. */
export const LINK_CACHE_VERSION_HEADER = 'x-link-cache-version'

export interface CachedLink {
  v: LinkCacheVersion
  /** Link id (`link_…`), stored with every click. */
  id: string
  /** Destination URL. */
  url: string
  /** Expiry, unix milliseconds; absent when the link never expires. */
  exp?: number
  /** Activation time, unix milliseconds; absent when active from creation. */
  act?: number
  /** Set when the link is password protected (the hash stays in Postgres). */
  pw?: 1
  /** Set when the owning account is on Pro (attribution parameters are appended). */
  pro?: 1
  /** Rules and a running A/B test (version 2 and 3): where a visitor goes instead of `url`. */
  r?: CachedRouting
  /**
   * Taken down for abuse (version 3 only): `flagged`, visitors see a warning and continue by a signed
   * link; `disabled`, a 410 page. Absent for a link in good standing.
   */
  st?: 'flagged' | 'disabled'
}

/** Pub/sub channel on which the API announces a changed link; the message is the cache key. */
export const INVALIDATION_CHANNEL = 'link:invalidate'

/**
 * Pub/sub channel on which the API announces that a custom domain was verified, unverified or removed; the message
 * is the host name. Redirectors then reload their set of verified custom domains.
 */
export const DOMAIN_CHANNEL = 'domain:changed'

/** Cache key of a (domain, alias) pair. Domains are case-insensitive, aliases are not. */
export function linkCacheKey(domain: string, alias: string): string {
  return `link:${domain.toLowerCase()}:${alias}`
}

/** How long a cached link may live in Redis: bounded so a stale record heals even without invalidation. */
export const LINK_CACHE_TTL_SECONDS = 24 * 3600

/**
 * The record as a reader of `version` sees it: version 1 drops the routing; a link taken down is none
 * to a reader that would redirect it anyway (null: answered as not found).
 */
export function cachedLinkFor(link: CachedLink, version: number): CachedLink | null {
  if (link.v <= version) return link
  if (link.st !== undefined) return null
  const { r: _routing, ...plain } = link
  return { ...plain, v: 1 }
}

export function encodeCachedLink(link: CachedLink): string {
  return JSON.stringify(link)
}

/** Parses a cached record; anything unreadable or of a version this code does not know counts as a miss. */
export function decodeCachedLink(raw: string): CachedLink | null {
  try {
    const value = JSON.parse(raw) as CachedLink
    if ((value?.v !== 1 && value?.v !== 2 && value?.v !== 3) || typeof value.id !== 'string' || typeof value.url !== 'string') return null
    if (value.v === 1) delete value.r
    if (value.v !== 3) delete value.st
    return value
  } catch {
    return null
  }
}

export type LinkState = 'active' | 'expired' | 'not_yet_active'

export function linkState(link: Pick<CachedLink, 'exp' | 'act'>, now: number): LinkState {
  if (link.exp !== undefined && link.exp <= now) return 'expired'
  if (link.act !== undefined && link.act > now) return 'not_yet_active'
  return 'active'
}

/** Aliases that cannot be taken on the default domain because the API shares its host in the embedded default. */
export const RESERVED_ALIASES = new Set([
  'api',
  'oauth',
  'swagger',
  'health',
  'healthz',
  'internal',
  'billing',
  '.well-known',
  'admin',
  'login',
  'logout',
  'static',
  'assets',
  'favicon.ico',
  'robots.txt',
  'docs',
  'status',
  'metrics',
  'ready',
  'readyz',
  'mcp',
  'signin',
  'signout',
  'consent',
  'approvals',
  'app',
  'tls',
])

/** Alias syntax: A-Z a-z 0-9 _ -, length checked by the caller (4-64 default, 1-64 custom). */
export const ALIAS_PATTERN = /^[A-Za-z0-9_-]{1,64}$/
