// What the API process and the embedded default both do at start: parse config, open Postgres (or
// PGlite), ClickHouse (server or chDB), Redis (or in-process), and apply both stores' migrations.
import type { ClickHouseClient } from '@clickhouse/client'
import { openAdapters, type Adapters } from './adapters'
import { createClickHouse, migrateClickHouse } from './adapters/clickhouse'
import { ConfigError, parseConfig, type Config, type ConfigDefaults } from './core/config'
import { storedSecret } from './core/embedded-secrets'
import { openDatabase, type Database } from './db/client'
import { DataDirInUse, lockEmbeddedEngines, type EngineLock } from './embedded-lock'
import { createAuditRecorder, type AuditRecorder } from './modules/audit/recorder'

export interface Runtime {
  config: Config
  database: Database
  clickhouse: ClickHouseClient
  adapters: Adapters
  /** Agent call audit: batched to ClickHouse through a disk spool. */
  audit: AuditRecorder
  close(): Promise<void>
}

/** Parses the configuration or exits with the message naming the bad variable. */
export function configOrExit(env: Record<string, string | undefined> = process.env, defaults: Omit<ConfigDefaults, 'secret'> = {}): Config {
  try {
    return parseConfig(env, { ...defaults, secret: storedSecret })
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message)
      process.exit(1)
    }
    throw error
  }
}

/**
 * openRuntime, or exit with one line when another process has this DATA_DIR's embedded engines open.
 * `advice` says what the person should do about it (it differs between the service and `npm run migrate`).
 */
export async function openRuntimeOrExit(config: Config, advice: string, log?: (line: string) => void): Promise<Runtime> {
  try {
    return await openRuntime(config, log)
  } catch (error) {
    if (!(error instanceof DataDirInUse)) throw error
    console.error(`${error.message}: ${advice}`)
    process.exit(1)
  }
}

/** The embedded engines (PGlite, chDB) open files under DATA_DIR that one process at a time may use. */
function lockIfEmbedded(config: Config): EngineLock | undefined {
  const embeddedEngine = !config.databaseUrl || !config.clickhouseUrl
  return embeddedEngine && config.dataDir !== ':memory:' ? lockEmbeddedEngines(config.dataDir) : undefined
}

export async function openRuntime(config: Config, log: (line: string) => void = console.log): Promise<Runtime> {
  const lock = lockIfEmbedded(config)
  try {
    return await openStores(config, log, lock)
  } catch (error) {
    lock?.release()
    throw error
  }
}

async function openStores(config: Config, log: (line: string) => void, lock: EngineLock | undefined): Promise<Runtime> {
  const database = await openDatabase(config)
  await database.migrate()
  log(`postgres: ${database.engine === 'pglite' ? `PGlite under ${config.dataDir}` : 'connected'}, migrations applied`)
  const clickhouse = await createClickHouse(config)
  const ran = await migrateClickHouse(clickhouse)
  log(`clickhouse: ${config.clickhouseUrl ? 'connected' : `chDB under ${config.dataDir}`}, ${ran.length} migration(s) applied`)
  const adapters = await openAdapters(config)
  log(`cache, limiter, idempotency: ${adapters.engine === 'redis' ? 'Redis' : 'in-process'}`)
  const audit = createAuditRecorder({ clickhouse, config, log })
  return {
    config,
    database,
    clickhouse,
    adapters,
    audit,
    async close() {
      // What the audit could not ship waits in its spool for the next start.
      await audit.close(5000)
      await adapters.close()
      await clickhouse.close()
      await database.close()
      lock?.release()
    },
  }
}
