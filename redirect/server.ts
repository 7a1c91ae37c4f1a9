// Assembles the redirector from its parts. Used by redirect/main.ts (its own process) and by
// src/main.ts (the embedded default, one process with the API).
import type { Config } from '../src/core/config'
import type { Peer } from '../src/core/client-ip'
import { linkCacheKey } from '../src/core/link-cache'
import { DomainSet } from './domains'
import { handleRedirect, type RedirectDeps } from './handler'
import type { InternalApi } from './internal-api'
import type { ClickRecorder } from './recorder'
import { LinkResolver } from './resolver'
import type { LinkSource } from './source'

export interface Redirector {
  fetch(request: Request, peer?: Peer): Response | Promise<Response>
  health(): Response
  /** Stops listening for invalidations and drains the clicks (spooling what ClickHouse does not take in time). */
  stop(drainTimeoutMs?: number): Promise<void>
  resolver: LinkResolver
  recorder: ClickRecorder
  domains: DomainSet
}

/**
 * `api` is the API's /internal endpoints (redirect/internal-api.ts): over HTTP for the stand-alone
 * redirector, through the app's handle() in the embedded default.
 */
export async function createRedirector(config: Config, parts: { source: LinkSource; api: InternalApi; recorder: ClickRecorder }): Promise<Redirector> {
  const { recorder, api } = parts
  const resolver = new LinkResolver(parts.source, api.resolve, config.cache)
  await resolver.listen()
  const domains = new DomainSet(config.shortDomain, api.domains, parts.source, { refreshMs: config.cache.domainRefreshMs, log: console.log })
  await domains.start()
  // Counters instead of per-request logs: what a person or a probe needs to see the hot path's health.
  const health = () => Response.json({ status: 'ok', clicks: recorder.stats(), cache: resolver.counters, domains: domains.counters })
  const deps: RedirectDeps = {
    health,
    resolver,
    record: recorder.record,
    unlock: api.unlock,
    shortDomain: config.shortDomain,
    keyPrefix: linkCacheKey(config.shortDomain, ''),
    countryHeader: config.countryHeader,
    clientIp: config.clientIp,
    domains,
    clickKeys: config.clickSigningKeys,
    rootRedirectUrl: config.rootRedirectUrl,
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
