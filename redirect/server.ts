// Assembles the redirector from its parts. Used by redirect/main.ts (its own process) and by
// src/main.ts (the embedded default, one process with the API).
import type { Config } from '../src/core/config'
import { linkCacheKey } from '../src/core/link-cache'
import { ClickBatcher, type ClickSink } from './batcher'
import { handleRedirect, type PeerInfo } from './handler'
import { LinkResolver } from './resolver'
import type { LinkSource, Resolve } from './source'

export interface Redirector {
  fetch(request: Request, peer?: PeerInfo): Response | Promise<Response>
  health(): Response
  /** Stops listening for invalidations and drains the clicks (spooling what ClickHouse does not take in time). */
  stop(drainTimeoutMs?: number): Promise<void>
  resolver: LinkResolver
  batcher: ClickBatcher
}

export async function createRedirector(config: Config, parts: { source: LinkSource; resolve: Resolve; sink: ClickSink; log?: (line: string) => void }): Promise<Redirector> {
  const resolver = new LinkResolver(parts.source, parts.resolve, config.cache)
  await resolver.listen()
  const batcher = new ClickBatcher(parts.sink, { ...config.clicks, ipHashSecret: config.ipHashSecret, log: parts.log }).start()
  // Counters instead of per-request logs: what a person or a probe needs to see the hot path's health.
  const health = () => Response.json({ status: 'ok', clicks: batcher.snapshot(), cache: resolver.counters })
  const deps = {
    health,
    resolver,
    record: batcher.push.bind(batcher),
    shortDomain: config.shortDomain,
    keyPrefix: linkCacheKey(config.shortDomain, ''),
    countryHeader: config.countryHeader,
    clientIpHeader: config.clientIpHeader,
  }
  return {
    resolver,
    batcher,
    fetch: (request, peer) => handleRedirect(request, deps, peer),
    health,
    async stop(drainTimeoutMs = 10_000) {
      await resolver.close()
      await batcher.drain(drainTimeoutMs)
    },
  }
}
