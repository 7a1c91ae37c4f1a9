// Assembles the redirector from its parts. Used by redirect/main.ts (its own process) and by
// src/main.ts (the embedded default, one process with the API).
import type { Config } from '../src/core/config'
import { linkCacheKey } from '../src/core/link-cache'
import { DomainSet, httpLoadDomains, type LoadDomains } from './domains'
import { handleRedirect, type PeerInfo } from './handler'
import type { ClickRecorder } from './recorder'
import { httpUnlock, type Unlock } from './password'
import { LinkResolver } from './resolver'
import type { LinkSource, Resolve } from './source'

export interface Redirector {
  fetch(request: Request, peer?: PeerInfo): Response | Promise<Response>
  health(): Response
  /** Stops listening for invalidations and drains the clicks (spooling what ClickHouse does not take in time). */
  stop(drainTimeoutMs?: number): Promise<void>
  resolver: LinkResolver
  recorder: ClickRecorder
  domains: DomainSet
}

/**
 * `unlock` checks passwords of protected links; by default the API's /internal/unlock over HTTP at
 * API_INTERNAL_URL (which, in the embedded default, is this same process's port).
 */
export async function createRedirector(config: Config, parts: { source: LinkSource; resolve: Resolve; recorder: ClickRecorder; unlock?: Unlock; loadDomains?: LoadDomains }): Promise<Redirector> {
  const { recorder } = parts
  const resolver = new LinkResolver(parts.source, parts.resolve, config.cache)
  await resolver.listen()
  // The verified custom domains, by default from the API's /internal/domains over HTTP.
  const loadDomains = parts.loadDomains ?? httpLoadDomains(config.apiInternalUrl, config.internalSecret, config.cache.resolveTimeoutMs)
  const domains = new DomainSet(config.shortDomain, loadDomains, parts.source, { refreshMs: config.cache.domainRefreshMs, log: console.log })
  await domains.start()
  // Counters instead of per-request logs: what a person or a probe needs to see the hot path's health.
  const health = () => Response.json({ status: 'ok', clicks: recorder.stats(), cache: resolver.counters, domains: domains.counters })
  const deps = {
    health,
    resolver,
    record: recorder.record,
    unlock: parts.unlock ?? httpUnlock(config.apiInternalUrl, config.internalSecret),
    shortDomain: config.shortDomain,
    keyPrefix: linkCacheKey(config.shortDomain, ''),
    countryHeader: config.countryHeader,
    clientIpHeader: config.clientIpHeader,
    domains,
    clickKeys: config.clickSigningKeys,
  }
  return {
    resolver,
    recorder,
    domains,
    fetch: (request, peer) => handleRedirect(request, deps, peer),
    health,
    async stop(drainTimeoutMs = 10_000) {
      await resolver.close()
      await domains.close()
      await recorder.stop(drainTimeoutMs)
    },
  }
}
