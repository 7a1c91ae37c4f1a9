// The redirector as its own process: Redis for links, the API's resolve endpoint on a miss, a
// ClickHouse server for clicks. It never opens Postgres and loads no embedded engine. With
// REDIRECT_WORKERS above 1 (default: the machine's cores) this process supervises that many redirector
// processes sharing the port (redirect/workers.ts) and serves nothing itself.
import { ConfigError, parseConfig } from '../core/config'
import { listenUrl } from '../core/listen'
import { keepServingThreadFirst } from '../core/threads'
import { stopOnSignal } from '../core/shutdown'
import { fetchTransport, internalApi } from './internal-api'
import { workerRecorder } from './recorder'
import { createRedirector } from './server'
import { redisLinkSource } from './source'
import { adoptLeftoverSpools, stopWithSupervisor, superviseWorkers, WORKER_INDEX_VAR } from './workers'

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

const workerIndex = process.env[WORKER_INDEX_VAR]
if (workerIndex === undefined && config.redirectWorkers > 1) {
  const supervisor = superviseWorkers({ count: config.redirectWorkers, entry: import.meta.path, spoolDir: config.clicks.spoolDir, log: console.log })
  stopOnSignal('redirector', () => supervisor.stop(), { timeoutMs: config.shutdownTimeoutMs })
} else {
  if (workerIndex === undefined) adoptLeftoverSpools(config.clicks.spoolDir, 1, console.log)
  else stopWithSupervisor()
  await serve(workerIndex === undefined ? 'redirector' : `redirector worker ${workerIndex}`, workerIndex !== undefined)
}

async function serve(name: string, sharedPort: boolean) {
  // Clicks are batched and written to ClickHouse by a worker thread, off the thread serving redirects.
  const recorder = await workerRecorder({ clickhouseUrl: config.clickhouseUrl }, { ...config.clicks, ipHashSecret: config.ipHashSecret, log: console.log })
  const source = redisLinkSource(config.redisUrl, config.cache.redisTimeoutMs)
  const api = internalApi(fetchTransport, { apiUrl: config.apiInternalUrl, secret: config.internalSecret, timeoutMs: config.cache.resolveTimeoutMs })
  const probes = { clickhouse: { required: false, probe: () => pingClickHouse(config.clickhouseUrl) } }
  const redirector = await createRedirector(config, { source, api, recorder, probes })

  const server = Bun.serve({
    port: config.redirectPort,
    hostname: config.host,
    reusePort: sharedPort,
    fetch: (request, srv) => redirector.fetch(request, srv),
    error: () => new Response('Internal error', { status: 500 }),
  })
  console.log(`${name} listening on ${listenUrl(config.host, server.port ?? config.redirectPort)} for ${config.shortDomain}`)
  // This thread answers redirects; the click worker and the runtime's own threads yield to it when they
  // want the same core (core/threads.ts).
  const stopLowering = keepServingThreadFirst()

  stopOnSignal(
    name,
    async () => {
      stopLowering()
      server.stop()
      await redirector.stop()
      const stats = redirector.recorder.stats()
      console.log(`${name}: clicks drained (written ${stats.written}, spooled files ${stats.spooledFiles})`)
      await source.close?.()
    },
    { timeoutMs: config.shutdownTimeoutMs },
  )
}

/** GET /ping of the ClickHouse HTTP interface (answers "Ok."), credentials from the URL as Basic auth. */
async function pingClickHouse(url: string): Promise<void> {
  const target = new URL(url)
  const headers: Record<string, string> = {}
  if (target.username) headers.authorization = `Basic ${btoa(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`)}`
  target.username = ''
  target.password = ''
  target.pathname = '/ping'
  const response = await fetch(target, { headers, signal: AbortSignal.timeout(1000) })
  if (!response.ok) throw new Error(`ping answered ${response.status}`)
}
