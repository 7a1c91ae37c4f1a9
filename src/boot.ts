// What the API process and the embedded default both do at start: parse config, open Postgres (or
// PGlite), ClickHouse (server or chDB), Redis (or in-process), and apply both stores' migrations.
import type { ClickHouseClient } from '@clickhouse/client'
import { openAdapters, type Adapters } from './adapters'
import { createClickHouse, migrateClickHouse } from './adapters/clickhouse'
import { applyRetention } from './adapters/clickhouse-retention'
import { ConfigError, parseConfig, type Config, type ConfigDefaults } from '../core/config'
import { passwordsIn, redactedRedisUrl } from '../core/redis-url'
import { storedSecret } from '../core/embedded-secrets'
import { openDatabase, type Database } from './db/client'
import { DataDirInUse, lockEmbeddedEngines, type EngineLock } from './embedded-lock'
import { log as processLog, logLevelOf, setLogLevel } from './lib/log'
import { createAuditRecorder, type AuditRecorder } from './modules/audit/recorder'
import { createBlocklists } from './modules/abuse/blocklists'
import { takeDownOnChange } from './modules/abuse/takedown'
import { createDispatcher, type Dispatcher } from './modules/webhooks/dispatcher'
import { webhookOutbox } from './modules/webhooks/outbox'
import { createServices, type BlocklistSourceFigures, type Services } from './services'

export interface Runtime {
  config: Config
  database: Database
  clickhouse: ClickHouseClient
  adapters: Adapters
  /** Agent call audit: batched to ClickHouse through a disk spool. */
  audit: AuditRecorder
  /** Sends the webhook outbox while the process runs (src/modules/webhooks/dispatcher.ts). */
  webhooks: Dispatcher
  close(): Promise<void>
}

/** Parses the configuration (and LOG_LEVEL, the process logger's) or exits with the message naming the bad variable. */
export function configOrExit(env: Record<string, string | undefined> = process.env, defaults: Omit<ConfigDefaults, 'secret'> = {}): Config {
  try {
    const config = parseConfig(env, { ...defaults, secret: storedSecret })
    setLogLevel(logLevelOf(env))
    return config
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
    if (error instanceof DependencyUnreachable) {
      console.error(error.message)
      process.exit(1)
    }
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
  const database = await reaching('postgres', config.databaseUrl, async () => {
    const opened = await openDatabase(config)
    await opened.migrate()
    return opened
  })
  log(`postgres: ${database.engine === 'pglite' ? `PGlite under ${config.dataDir}` : 'connected'}, migrations applied`)
  const clickhouse = await createClickHouse(config)
  const ran = await reaching('clickhouse', config.clickhouseUrl, () => migrateClickHouse(clickhouse, { cluster: config.clickhouseCluster }))
  log(`clickhouse: ${config.clickhouseUrl ? 'connected' : `chDB under ${config.dataDir}`}, ${ran.length} migration(s) applied`)
  for (const change of await applyRetention(clickhouse, config.retention, config.clickhouseCluster)) log(`clickhouse retention: ${change}`)
  const adapters = await reaching('redis', config.redisUrl, async () => {
    const opened = await openAdapters(config)
    // ioredis connects in the background and retries for ever: one command tells whether Redis answers.
    await opened.kv.get('linkservice:ready-probe')
    return opened
  })
  log(`cache, limiter, idempotency: ${adapters.engine === 'redis' ? 'Redis' : 'in-process'}`)
  // The audit spool speaks while the process runs (full, dropping, ClickHouse back): the process log's lines.
  const audit = createAuditRecorder({ clickhouse, config, log: (line) => processLog.warn({ component: 'audit' }, line) })
  // Its first claim is a second away: `npm run migrate`, which closes at once, sends nothing.
  const webhooks = createDispatcher({ db: database.db, config, log: (line) => processLog.warn({ component: 'webhooks' }, line) })
  webhooks.start()
  return {
    config,
    database,
    clickhouse,
    adapters,
    audit,
    webhooks,
    async close() {
      // First, while Postgres is open: attempts in flight are aborted and their deliveries handed back.
      await webhooks.stop()
      // What the audit could not ship waits in its spool for the next start.
      await audit.close(5000)
      await adapters.close()
      await clickhouse.close()
      await database.close()
      lock?.release()
    },
  }
}

/** A dependency that did not answer at start: one line naming it and its URL, never its password. */
export class DependencyUnreachable extends Error {
  constructor(name: string, url: string, cause: unknown) {
    super(`${name}: cannot reach ${redactedUrl(url)} (${causeOf(cause, url)}); is it running, and is the URL right?`)
    this.name = 'DependencyUnreachable'
  }
}

/** Runs a step against a configured server; its failure becomes DependencyUnreachable. Embedded engines fail as they are. */
async function reaching<T>(name: string, url: string | undefined, step: () => Promise<T>): Promise<T> {
  if (!url) return step()
  try {
    return await step()
  } catch (error) {
    throw new DependencyUnreachable(name, url, error)
  }
}

/** The URL with its password (and any query, which may carry one) left out. */
export function redactedUrl(raw: string): string {
  try {
    const url = new URL(raw)
    url.password = ''
    url.search = ''
    return url.href.replace(/\/$/, '')
  } catch {
    // A Redis Cluster or Sentinel URL names several hosts, which no WHATWG URL does.
    return redactedRedisUrl(raw)
  }
}

/** The error's code (ECONNREFUSED, 28P01…) or its first line, with the URL's password cut out in case a driver quoted it. */
function causeOf(error: unknown, url: string): string {
  const code = (error as { code?: unknown })?.code
  const message = error instanceof Error ? error.message.split('\n')[0]! : String(error)
  const said = typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message
  return passwordsIn(url)
    .reduce((text, password) => text.replaceAll(password, '***'), said)
    .slice(0, 300)
}

/**
 * The services of the process's own jobs (the block list takedown, the A/B sweep, the domain recheck):
 * the API's stores, with the webhook outbox, so a change a job makes sends its event as a request's would.
 */
export function jobServices(runtime: Runtime): Services {
  const services = createServices({
    config: runtime.config,
    db: runtime.database.db,
    kv: runtime.adapters.kv,
    limiter: runtime.adapters.limiter,
    idempotency: runtime.adapters.idempotency,
    clickhouse: runtime.clickhouse,
  })
  services.webhookOutbox = webhookOutbox
  return services
}

/**
 * The destination block lists, started (every BLOCKLIST_FILES read, every BLOCKLIST_URLS fetched once)
 * before the process serves writes, or one line and exit 1 when a list file cannot be read; a change of
 * the lists disables the stored links it covers. What the API's services take as `destinationListed`.
 */
export async function startBlocklistsOrExit(
  runtime: Runtime,
  log: (line: string) => void = console.log,
): Promise<{ listed: (href: string) => boolean; figures: () => BlocklistSourceFigures[]; stop(): void }> {
  const blocklists = createBlocklists(runtime.config, { log })
  const listed = (href: string) => {
    const verdict = blocklists.check(href)
    return !verdict.allowed && verdict.code === 'DESTINATION_BLOCKED'
  }
  blocklists.onChange(takeDownOnChange(jobServices(runtime), listed))
  try {
    await blocklists.start()
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error))
    await runtime.close()
    process.exit(1)
  }
  return { listed, figures: () => blocklists.status().sources, stop: () => void blocklists.stop() }
}
