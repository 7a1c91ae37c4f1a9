// The whole product in one process: `bun run start`. With nothing configured it runs on the embedded
// engines (PGlite, chDB, in-process cache and limiter) under DATA_DIR. One port serves both the API
// paths and the short links; the API's paths are reserved aliases, so they never collide.
import { clickhouseSink } from '../redirect/clickhouse-sink'
import { CustomDomain, parseDomainList } from '../redirect/domains'
import { inThreadRecorder } from '../redirect/recorder'
import { createRedirector } from '../redirect/server'
import { decodeCachedLink } from './core/link-cache'
import { createApi } from './app'
import { configOrExit, openRuntime } from './boot'

const config = configOrExit()
const runtime = await openRuntime(config)
// The app is served through app.handle() below, so Elysia has no server of its own to ask for the peer.
let server: ReturnType<typeof Bun.serve> | undefined
const app = createApi({
  config,
  db: runtime.database.db,
  kv: runtime.adapters.kv,
  limiter: runtime.adapters.limiter,
  idempotency: runtime.adapters.idempotency,
  clickhouse: runtime.clickhouse,
  requestIP: (request) => server?.requestIP(request)?.address ?? null,
})

const redirector = await createRedirector(config, {
  source: runtime.adapters.kv,
  // The same resolve endpoint the stand-alone redirector calls over HTTP, handled in-process.
  resolve: async (domain, alias) => {
    const query = new URLSearchParams({ domain, alias })
    const response = await app.handle(
      new Request(`http://internal/internal/resolve?${query}`, { headers: { 'x-internal-secret': config.internalSecret } }),
    )
    if (response.status === 404) return null
    const link = response.ok ? decodeCachedLink(await response.text()) : null
    if (!link) throw new Error(`resolve answered ${response.status}`)
    return link
  },
  // The verified custom domains, from the same process.
  loadDomains: async () => {
    const response = await app.handle(new Request('http://internal/internal/domains', { headers: { 'x-internal-secret': config.internalSecret } }))
    if (!response.ok) throw new Error(`/internal/domains answered ${response.status}`)
    return parseDomainList(await response.text())
  },
  // chDB lives in this process, so clicks are batched on this thread too.
  recorder: inThreadRecorder(clickhouseSink(runtime.clickhouse), { ...config.clicks, ipHashSecret: config.ipHashSecret, log: console.log }),
})

/** First path segments that belong to the API; everything else is a short link. */
const API_PREFIXES = ['/api/', '/swagger', '/internal/', '/health', '/billing/', '/oauth/', '/.well-known/']

function isApiPath(url: string): boolean {
  const path = url.slice(url.indexOf('/', url.indexOf('//') + 2))
  return API_PREFIXES.some((prefix) => path.startsWith(prefix) || path === prefix.replace(/\/$/, ''))
}

const listening = Bun.serve({
  port: config.port,
  // Outer bound; the API answers bodies over its own limit with 413 JSON before this is reached.
  maxRequestBodySize: 1024 * 1024,
  // On a custom domain every path is a short link: the API answers on the service's own hosts only.
  fetch: (request, srv) =>
    isApiPath(request.url) && !(redirector.domains.match(request.url) instanceof CustomDomain) ? app.handle(request) : redirector.fetch(request, srv),
})

server = listening
console.log(`link service running (embedded: ${config.embedded ? 'yes' : 'no'})
  API:         http://localhost:${listening.port}/api/v1
  Swagger:     http://localhost:${listening.port}/swagger
  Short links: ${config.shortBaseUrl}/<alias>`)

let stopping = false
async function shutdown(signal: string) {
  if (stopping) return
  stopping = true
  console.log(`${signal}: stopping, draining clicks`)
  listening.stop()
  await redirector.stop()
  await runtime.close()
  process.exit(0)
}
process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.on('SIGINT', () => void shutdown('SIGINT'))
