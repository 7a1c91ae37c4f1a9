// Assembles the redirector from its parts. Used by redirect/main.ts (its own process) and by
// one-process/main.ts (the embedded default, one process with the API).
import { bucketSeed } from '../core/routing'
import { continueKey } from './continue-token'
import type { Config } from '../core/config'
import type { Peer } from '../core/client-ip'
import { linkCacheKey } from '../core/link-cache'
import { metricsResponse } from '../core/metrics'
import { checkReadiness, readinessResponse, ReadinessFailure, type ReadinessCheck } from '../core/readiness'
import { DomainSet } from './domains'
import { redirectMetrics, type RedirectMetrics } from './metrics'
import { TurnAnswers } from './answers'
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
  metrics: RedirectMetrics
  /** What its /ready asks: the embedded default adds these to the API's. */
  readinessChecks: Record<string, ReadinessCheck>
}

/** A key no link has: reading it tells whether Redis answers, without touching a link. */
const PROBE_KEY = 'linkservice:ready-probe'

/**
 * `api` is the API's /internal endpoints (redirect/internal-api.ts): over HTTP for the stand-alone
 * redirector, through the app's handle() in the embedded default.
 */
export async function createRedirector(config: Config, parts: { source: LinkSource; api: InternalApi; recorder: ClickRecorder; probes?: Record<string, ReadinessCheck> }): Promise<Redirector> {
  const { recorder, api } = parts
  const resolver = new LinkResolver(parts.source, api.resolve, config.cache)
  await resolver.listen()
  const domains = new DomainSet(config.shortDomain, api.domains, parts.source, { refreshMs: config.cache.domainRefreshMs, log: console.log })
  await domains.start()
  // Liveness only: the process answers. The counters are at /metrics (behind METRICS_TOKEN), no longer here.
  const health = () => Response.json({ status: 'ok' }, { headers: { 'cache-control': 'no-store' } })
  const metrics = redirectMetrics({ resolver, recorder, domains })
  const checks = readinessChecks(parts, domains)
  const observe = (started: number) => metrics.latency.observe((performance.now() - started) / 1000)
  const answers = new TurnAnswers(observe)
  const ready = async () => readinessResponse(await checkReadiness(checks))
  const deps: RedirectDeps = {
    health,
    ready,
    metrics: (request) => metricsResponse(request, config.metricsToken, metrics.registry),
    resolver,
    record: (click, response) => answers.after(recorder.record(click), response),
    unlock: api.unlock,
    inspect: api.inspect,
    report: api.report,
    continueKey: continueKey(config.internalSecret),
    shortDomain: config.shortDomain,
    keyPrefix: linkCacheKey(config.shortDomain, ''),
    countryHeader: config.countryHeader,
    clientIp: config.clientIp,
    domains,
    clickKeys: config.clickSigningKeys,
    rootRedirectUrl: config.rootRedirectUrl,
    routingSeed: bucketSeed(config.ipHashSecret),
  }
  return {
    resolver,
    recorder,
    domains,
    metrics,
    readinessChecks: checks,
    fetch: (request, peer) => {
      // The one per-request figure: an array bump once the answer is ready (for a counted redirect, once
      // its click is on disk, which is when the 302 leaves: observed as its turn's answers are released).
      const started = performance.now()
      const answer = handleRedirect(request, deps, peer)
      if (answer instanceof Response) {
        observe(started)
        return answer
      }
      if (answers.claim(answer, started)) return answer
      return answer.then((response) => {
        observe(started)
        return response
      })
    },
    health,
    async stop(drainTimeoutMs = 10_000) {
      await resolver.close()
      await domains.close()
      await recorder.stop(drainTimeoutMs)
    },
  }
}

/**
 * Ready while links can be looked up (Redis or, on a miss, the API answers) and clicks can be logged (the
 * spool is below its bound). Redis, the API and ClickHouse are also shown one by one; a ClickHouse
 * outage alone leaves the redirector ready: its clicks wait in the spool.
 */
function readinessChecks(parts: { source: LinkSource; api: InternalApi; recorder: ClickRecorder; probes?: Record<string, ReadinessCheck> }, domains: DomainSet): Record<string, ReadinessCheck> {
  const redis = () => parts.source.get(PROBE_KEY)
  const api = () => parts.api.domains()
  return {
    links: { required: true, probe: () => Promise.any([redis(), api()]) },
    redis: { required: false, probe: redis },
    api: { required: false, probe: async () => (domains.answering ? undefined : api()) },
    click_spool: {
      required: true,
      probe: async () => {
        const stats = parts.recorder.stats()
        if (stats.spoolBytes >= stats.spoolMaxBytes) throw new ReadinessFailure('is full: clicks are being dropped')
      },
    },
    ...parts.probes,
  }
}
