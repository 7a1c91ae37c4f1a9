// The redirector as its own process: Redis for links, the API's resolve endpoint on a miss, a
// ClickHouse server for clicks. It never opens Postgres and loads no embedded engine.
import { ConfigError, parseConfig } from '../src/core/config'
import { stopOnSignal } from '../src/core/shutdown'
import { fetchTransport, internalApi } from './internal-api'
import { workerRecorder } from './recorder'
import { createRedirector } from './server'
import { redisLinkSource } from './source'

function boot() {
  const config = parseConfig(process.env)
  if (!config.redisUrl) throw new ConfigError('REDIS_URL', 'is required for the stand-alone redirector (bun run start runs the embedded default)')
  if (!config.clickhouseUrl) throw new ConfigError('CLICKHOUSE_URL', 'is required for the stand-alone redirector')
  return { ...config, redisUrl: config.redisUrl, clickhouseUrl: config.clickhouseUrl }
}

let config: ReturnType<typeof boot>
try {
  config = boot()
} catch (error) {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
}

// Clicks are batched and written to ClickHouse by a worker thread, off the thread serving redirects.
const recorder = await workerRecorder(config.clickhouseUrl, { ...config.clicks, ipHashSecret: config.ipHashSecret, log: console.log })
const source = redisLinkSource(config.redisUrl, config.cache.redisTimeoutMs)
const api = internalApi(fetchTransport, { apiUrl: config.apiInternalUrl, secret: config.internalSecret, timeoutMs: config.cache.resolveTimeoutMs })
const redirector = await createRedirector(config, { source, api, recorder })

const server = Bun.serve({
  port: config.redirectPort,
  fetch: (request, srv) => redirector.fetch(request, srv),
  error: () => new Response('Internal error', { status: 500 }),
})
console.log(`redirector listening on http://localhost:${server.port} for ${config.shortDomain}`)

stopOnSignal('redirector', async () => {
  server.stop()
  await redirector.stop()
  const stats = redirector.recorder.stats()
  console.log(`redirector: clicks drained (written ${stats.written}, spooled files ${stats.spooledFiles})`)
  await source.close?.()
})
