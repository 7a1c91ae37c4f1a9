// One ClickHouse client for both engines: over HTTP to a server when CLICKHOUSE_URL is set, else over
// chDB (the real ClickHouse engine, in-process) under DATA_DIR. Same SQL, same client code.
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client'
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../../core/config'
import type { RawInsert } from '../../core/spool-sink'
import { clusterSchemaMigrations, clusterStatements, clusterTarget } from './clickhouse-cluster'

/** The zero-copy insert of each client made over chDB (rawInsertOf). */
const rawInserts = new WeakMap<ClickHouseClient, RawInsert>()

/**
 * For a client over chDB, an insert that hands the bytes to chDB's parser without decoding them into a
 * string on this thread (the client's own insert over chDB does that); undefined for a server's client.
 */
export function rawInsertOf(client: ClickHouseClient): RawInsert | undefined {
  return rawInserts.get(client)
}

export async function createClickHouse(config: Pick<Config, 'clickhouseUrl' | 'dataDir'>): Promise<ClickHouseClient> {
  if (config.clickhouseUrl) {
    // Failures reach the caller as errors; the client's own log would repeat each one.
    // Parameters too long for a URL (the link ids of a list sorted by clicks) go in the request body.
    return createClient({ url: config.clickhouseUrl, request_timeout: 10_000, log: { level: ClickHouseLogLevel.OFF }, use_multipart_params_auto: true })
  }
  // Imported lazily so the production images, which carry no embedded engine, never load it.
  const { createChdbConnection } = await import('chdb/connection')
  // chDB binds one data directory per process: ":memory:" is shared by every client in the process.
  const path = config.dataDir === ':memory:' ? ':memory:' : join(config.dataDir, 'clickhouse')
  if (path !== ':memory:') mkdirSync(path, { recursive: true })
  const connection = createChdbConnection({ path })
  const client = createClient({ connection } as Parameters<typeof createClient>[0])
  rawInserts.set(client, async ({ table, columns, format, values, settings }) => {
    await connection.chdb.rawInsert({ table, columns, format, values, settings })
  })
  return client
}

const MIGRATIONS_DIR = join(import.meta.dir, '../../migrations/clickhouse')

export interface MigrateOptions {
  /** CLICKHOUSE_CLUSTER: apply the cluster form of each statement (clickhouse-cluster.ts); unset, the files as written. */
  cluster?: string
  dir?: string
}

/**
 * Applies the numbered SQL files not yet recorded in schema_migrations, in order. Each file is written
 * to be idempotent too (IF NOT EXISTS), so a crash between applying and recording is harmless.
 */
export async function migrateClickHouse(client: ClickHouseClient, { cluster, dir = MIGRATIONS_DIR }: MigrateOptions = {}): Promise<string[]> {
  const target = cluster ? await clusterTarget(client, cluster) : undefined
  const forms = (statement: string) => (target ? clusterStatements(statement, target) : [statement])
  await client.command({
    query: target
      ? clusterSchemaMigrations(target)
      : `CREATE TABLE IF NOT EXISTS schema_migrations (name String, applied_at DateTime DEFAULT now())
            ENGINE = ReplacingMergeTree ORDER BY name`,
  })
  const done = await client.query({ query: 'SELECT name FROM schema_migrations FINAL', format: 'JSONEachRow' })
  const applied = new Set((await done.json<{ name: string }>()).map((row) => row.name))
  const files = readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort()
  const ran: string[] = []
  for (const file of files) {
    if (applied.has(file)) continue
    const sql = readFileSync(join(dir, file), 'utf8')
    for (const statement of splitStatements(sql)) for (const query of forms(statement)) await client.command({ query })
    await client.insert({ table: 'schema_migrations', values: [{ name: file }], format: 'JSONEachRow' })
    ran.push(file)
  }
  return ran
}

/** Splits a migration file on semicolons at line ends; comments are dropped. */
export function splitStatements(sql: string): string[] {
  return sql
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter(Boolean)
}
