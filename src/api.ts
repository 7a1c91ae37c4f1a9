// The management API as its own process (the production shape): Postgres, Redis and a ClickHouse
// server from the environment. The redirector runs beside it as redirect/main.ts.
import { createApi } from './app'
import { configOrExit, jobServices, openRuntimeOrExit, startBlocklistsOrExit } from './boot'
import { listenUrl } from '../core/listen'
import { stopOnSignal } from '../core/shutdown'
import { log } from './lib/log'
import { startApprovalRecovery } from './modules/approvals/recovery'
import { startUnusedClientSweep } from './modules/oauth/unused-clients'
import { startAbCompletion } from './modules/links/routing-manage'
import { startDomainRecheck } from './modules/domains/recheck'

const config = configOrExit()
// Every line of the production shape is the process log's (JSON); a failed start still prints one plain line.
const runtime = await openRuntimeOrExit(config, 'stop it, or give this one another DATA_DIR', (line) => log.info(line))
const blocklists = await startBlocklistsOrExit(runtime, (line) => log.info(line))
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
}).listen({ port: config.port, hostname: config.host, maxRequestBodySize: 1024 ** 3 })
const stopSweep = startUnusedClientSweep({ db: runtime.database.db, now: Date.now })
const stopRecovery = startApprovalRecovery({ db: runtime.database.db, now: Date.now })
const stopAbCompletion = startAbCompletion(jobServices(runtime))
const stopDomainRecheck = startDomainRecheck(jobServices(runtime))
log.info(`api listening on ${listenUrl(config.host, config.port)}, serving ${config.publicApiUrl} (swagger: ${config.publicApiUrl}/swagger)`)

stopOnSignal(
  'api',
  async () => {
    stopSweep()
    stopRecovery()
    stopAbCompletion()
    stopDomainRecheck()
    blocklists.stop()
    await app.stop()
    await runtime.close()
  },
  { log: (line) => log.info(line), timeoutMs: config.shutdownTimeoutMs },
)
