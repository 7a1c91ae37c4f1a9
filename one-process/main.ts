// The whole product in one process: `bun run start`. With nothing configured it runs on the embedded
// engines (PGlite, chDB, in-process cache and limiter) under DATA_DIR. One port serves both the API
// paths and the short links; the API's paths are reserved aliases, so they never collide.
import { clickhouseSink, rawClickSink } from '../redirect/clickhouse-sink'
import { CustomDomain } from '../redirect/domains'
import { internalApi } from '../redirect/internal-api'
import { workerRecorder } from '../redirect/recorder'
import { createRedirector } from '../redirect/server'
import { createApi } from '../src/app'
import { rawInsertOf } from '../src/adapters/clickhouse'
import { configOrExit, jobServices, openRuntimeOrExit, startBlocklistsOrExit } from '../src/boot'
import { stopOnSignal } from '../core/shutdown'
import { listenUrl } from '../core/listen'
import type { MetricsRegistry } from '../core/metrics'
import type { ReadinessCheck } from '../core/readiness'
import { keepServingThreadFirst } from '../core/threads'
import { log } from '../src/lib/log'
import { startApprovalRecovery } from '../src/modules/approvals/recovery'
import { startUnusedClientSweep } from '../src/modules/oauth/unused-clients'
import { startAbCompletion } from '../src/modules/links/routing-manage'
import { startDomainRecheck } from '../src/modules/domains/recheck'

// One process: short links are served on PORT, so that is what short_url names (REDIRECT_PORT is the
// stand-alone redirector's).
const config = configOrExit(process.env, { singleProcess: true })
const runtime = await openRuntimeOrExit(config, 'stop it, or give this one another DATA_DIR')
const extraMetrics: MetricsRegistry[] = []
const extraReadiness: Record<string, ReadinessCheck> = {}
// The app is served through app.handle() below, so Elysia has no server of its own to ask for the peer.
let server: ReturnType<typeof Bun.serve> | undefined
const blocklists = await startBlocklistsOrExit(runtime)
const app = createApi({
  destinationListed: blocklists.listed,
  blocklistFigures: blocklists.figures,
  config,
  db: runtime.database.db,
  readDb: runtime.database.readDb,
  kv: runtime.adapters.kv,
  limiter: runtime.adapters.limiter,
  idempotency: runtime.adapters.idempotency,
  clickhouse: runtime.clickhouse,
  audit: runtime.audit,
  requestIP: (request) => server?.requestIP(request)?.address ?? null,
  // The redirector's figures and checks, filled in once it exists (below): /metrics and /ready are the API's here.
  extraMetrics,
  extraReadiness,
})

// The API's /internal endpoints through the app itself: the same client as the stand-alone redirector's,
// without a request to this process's own port.
const api = internalApi((request) => app.handle(request), {
  apiUrl: config.apiInternalUrl,
  secret: config.internalSecret,
  timeoutMs: config.cache.resolveTimeoutMs,
})
const redirector = await createRedirector(config, {
  source: runtime.adapters.kv,
  api,
  // Clicks are encoded, enriched and shipped by a worker thread, off this one. With a ClickHouse server it
  // inserts over HTTP itself; chDB lives in this process, so its batches come back here as bytes handed
  // to chDB's parser, which runs on chDB's own threads.
  recorder: await workerRecorder(
    config.clickhouseUrl ? { clickhouseUrl: config.clickhouseUrl } : { sink: embeddedSink() },
    // The click spool's outage lines (full, dropping, ClickHouse back) go to the process log, like the API's.
    { ...config.clicks, ipHashSecret: config.ipHashSecret, log: (line) => log.warn({ component: 'clicks' }, line) },
  ),
})

extraMetrics.push(redirector.metrics.registry)
// Only the click spool: the link lookups are this process's own API and in-process cache, checked already.
extraReadiness.click_spool = redirector.readinessChecks.click_spool!

function embeddedSink() {
  const raw = rawInsertOf(runtime.clickhouse)
  return raw ? rawClickSink(raw) : clickhouseSink(runtime.clickhouse)
}

/**
 * First path segments that belong to the API (its routes, the pages people see: sign-in, consent,
 * approvals; the MCP endpoint; /tls/ask for a Caddy in front); everything else is a short link. A
 * prefix ending in '/' also names its bare path ('/signin' as well as '/signin/code'). These words are
 * reserved aliases (core/link-cache.ts).
 */
const API_PREFIXES = [
  '/api/',
  '/swagger',
  '/internal/',
  '/health',
  '/ready',
  '/metrics',
  '/billing/',
  '/oauth/',
  '/.well-known/',
  '/mcp/',
  '/signin/',
  '/signout/',
  '/consent/',
  '/approvals/',
  '/app/',
  '/tls/',
  '/favicon.ico',
]
const API_BARE_PATHS = new Set(API_PREFIXES.filter((prefix) => prefix.endsWith('/')).map((prefix) => prefix.slice(0, -1)))
/** The character after the first '/' of every API path: most short links are ruled out by it alone. */
const API_FIRST_CHARS = new Set(API_PREFIXES.map((prefix) => prefix.charCodeAt(1)))

function isApiPath(url: string): boolean {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (!API_FIRST_CHARS.has(url.charCodeAt(start + 1))) return false
  const query = url.indexOf('?', start)
  const path = query === -1 ? url.slice(start) : url.slice(start, query)
  return API_BARE_PATHS.has(path) || API_PREFIXES.some((prefix) => path.startsWith(prefix))
}

const listening = Bun.serve({
  port: config.port,
  hostname: config.host,
  // Bun's own limit answers a bare 413 before any code runs; the API's body plugin refuses an announced
  // length over its 512 KiB with a JSON 413 without reading a byte, and stops reading a chunked body at
  // the same mark. So Bun's limit stays far above it, only a last resort.
  maxRequestBodySize: 1024 ** 3,
  // On a custom domain every path is a short link: the API answers on the service's own hosts only.
  fetch: (request, srv) => (isApiPath(request.url) && !(redirector.domains.match(request.url) instanceof CustomDomain) ? app.handle(request) : redirector.fetch(request, srv)),
})

server = listening
// This thread answers redirects and API requests; chDB's threads, PGlite's and the click worker yield to
// it when they want the same core (core/threads.ts).
const stopLowering = keepServingThreadFirst()
const stopSweep = startUnusedClientSweep({ db: runtime.database.db, now: Date.now })
const stopRecovery = startApprovalRecovery({ db: runtime.database.db, now: Date.now })
const stopAbCompletion = startAbCompletion(jobServices(runtime))
const stopDomainRecheck = startDomainRecheck(jobServices(runtime))
console.log(`link service running (embedded: ${config.embedded ? 'yes' : 'no'}), listening on ${listenUrl(config.host, listening.port ?? config.port)}
  Dashboard:   ${config.publicApiUrl}/app
  API:         ${config.publicApiUrl}/api/v1
  Swagger:     ${config.publicApiUrl}/swagger
  Short links: ${config.shortBaseUrl}/<alias>`)

stopOnSignal(
  'link service',
  async () => {
    stopLowering()
    stopSweep()
    stopRecovery()
    stopAbCompletion()
    blocklists.stop()
    stopDomainRecheck()
    listening.stop()
    await redirector.stop()
    await runtime.close()
  },
  { timeoutMs: config.shutdownTimeoutMs },
)
