// Assembles the redirector from its parts. Used by redirect/main.ts (its own process) and by
// src/main.ts (the embedded default, one process with the API).
import type { Config } from '../src/core/config'
import { linkCacheKey } from '../src/core/link-cache'
import { handleRedirect, type PeerInfo } from './handler'
import type { ClickRecorder } from './recorder'
import { LinkResolver } from './resolver'
import type { LinkSource, Resolve } from './source'

export interface Redirector {
  fetch(request: Request, peer?: PeerInfo): Response | Promise<Response>
  health(): Response
  /** Stops listening for invalidations and drains the clicks (spooling what ClickHouse does not take in time). */
  stop(drainTimeoutMs?: number): Promise<void>
  resolver: LinkResolver
  recorder: ClickRecorder
}

export async function createRedirector(config: Config, parts: { source: LinkSource; resolve: Resolve; recorder: ClickRecorder }): Promise<Redirector> {
  const { recorder } = parts
  const resolver = new LinkResolver(parts.source, parts.resolve, config.cache)
  await resolver.listen()
  // Counters instead of per-request logs: what a person or a probe needs to see the hot path's health.
  const health = () => Response.json({ status: 'ok', clicks: recorder.stats(), cache: resolver.counters })
  const deps = {
    health,
    resolver,
    record: recorder.record,
    shortDomain: config.shortDomain,
    keyPrefix: linkCacheKey(config.shortDomain, ''),
    countryHeader: config.countryHeader,
    clientIpHeader: config.clientIpHeader,
  }
  return {
    resolver,
    recorder,
    fetch: (request, peer) => handleRedirect(request, deps, peer),
    health,
    async stop(drainTimeoutMs = 10_000) {
      await resolver.close()
      await recorder.stop(drainTimeoutMs)
    },
  }
}
