// The management API as its own process (the production shape): Postgres, Redis and a ClickHouse
// server from the environment. The redirector runs beside it as redirect/main.ts.
import { createApi } from './app'
import { configOrExit, openRuntimeOrExit } from './boot'
import { stopOnSignal } from './core/shutdown'
import { startUnusedClientSweep } from './modules/oauth/unused-clients'

const config = configOrExit()
const runtime = await openRuntimeOrExit(config, 'stop it, or give this one another DATA_DIR')
const app = createApi({ config, db: runtime.database.db, kv: runtime.adapters.kv, limiter: runtime.adapters.limiter, idempotency: runtime.adapters.idempotency, clickhouse: runtime.clickhouse, audit: runtime.audit }).listen({ port: config.port, maxRequestBodySize: 1024 ** 3 })
const stopSweep = startUnusedClientSweep({ db: runtime.database.db, now: Date.now })
console.log(`api listening on ${config.publicApiUrl} (swagger: ${config.publicApiUrl}/swagger)`)

stopOnSignal('api', async () => {
  stopSweep()
  await app.stop()
  await runtime.close()
})
