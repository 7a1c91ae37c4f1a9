// Backup and restore of the production shape (scripts/backup.ts, scripts/restore.ts): Postgres with
// pg_dump / pg_restore (a consistent snapshot, taken while the service runs), ClickHouse table by table
// as JSON lines through the same client the service uses (so it works against any ClickHouse the service
// can reach, without a backup disk configured on the server). The embedded engines are backed up by
// stopping the service and copying DATA_DIR (docs/production.md#backups).
//
// Order: Postgres first, then ClickHouse. A click recorded before the backup started is in it; a link
// created during the backup may be missing from the Postgres dump while its first clicks are in the
// ClickHouse files, which does no harm (statistics are read per link the API knows).
import type { ClickHouseClient } from '@clickhouse/client'
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { once } from 'node:events'
import { createClickHouse, migrateClickHouse } from '../src/adapters/clickhouse'
import { configOrExit, redactedUrl } from '../src/boot'

/** Every ClickHouse table with data (schema_migrations is made again by the migrations). */
export const CLICKHOUSE_TABLES = ['clicks_v1', 'clicks_hourly_v1', 'conversions_v1', 'agent_audit_v1'] as const
/** Filled by a materialized view on every clicks_v1 insert (migrations/clickhouse/0003_clicks_hourly.sql). */
const ROLLUP_TABLE = 'clicks_hourly_v1'
/** Rows per insert on restore. */
const RESTORE_BATCH = 10_000

export interface Manifest {
  version: 1
  created_at: string
  postgres: { file: string; format: 'pg_dump custom' }
  clickhouse: Record<string, { file: string; rows: number }>
  /**
   * The rollup is kept only for the hours before the oldest raw click (what retention removed from
   * clicks_v1): the rest is made again from the raw clicks on restore, so the two always agree, however
   * many clicks arrived while the tables were read one after the other. null: every rollup row is kept
   * (no raw click at all).
   */
  rollup_before: string | null
}

type Log = (line: string) => void

/** pg_dump or pg_restore with the URL's password in PGPASSWORD, never on a command line others can read. */
async function runPg(tool: 'pg_dump' | 'pg_restore', args: string[], databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl)
  const password = decodeURIComponent(url.password)
  url.password = ''
  const proc = Bun.spawn([tool, ...args.map((a) => (a === '$URL' ? url.href : a))], {
    env: { ...process.env, ...(password && { PGPASSWORD: password }) },
    stdout: 'inherit',
    stderr: 'pipe',
  })
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${tool} failed (exit ${code}) for ${redactedUrl(databaseUrl)}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`)
}

export async function backup(options: StoresOptions): Promise<Manifest> {
  const { dir, log } = options
  if (existsSync(join(dir, 'manifest.json'))) throw new Error(`${dir} already holds a backup; give a new directory`)
  mkdirSync(join(dir, 'clickhouse'), { recursive: true })
  log(`postgres: pg_dump of ${redactedUrl(options.databaseUrl)}`)
  await runPg('pg_dump', ['--format=custom', '--no-owner', '--no-privileges', `--file=${join(dir, 'postgres.dump')}`, '$URL'], options.databaseUrl)
  const tables: Manifest['clickhouse'] = {}
  const rollupBefore = await oldestRawHour(options.clickhouse)
  for (const table of CLICKHOUSE_TABLES) {
    const file = `clickhouse/${table}.jsonl`
    const where = table === ROLLUP_TABLE && rollupBefore !== null ? { sql: ' WHERE hour < {before:DateTime}', params: { before: rollupBefore } } : undefined
    const rows = await exportTable(options.clickhouse, table, join(dir, file), where)
    tables[table] = { file, rows }
    log(`clickhouse: ${table}, ${rows.toLocaleString('en')} rows${where ? ` (hours before ${rollupBefore}; the rest is made again from clicks_v1)` : ''}`)
  }
  const manifest: Manifest = {
    version: 1,
    created_at: new Date().toISOString(),
    postgres: { file: 'postgres.dump', format: 'pg_dump custom' },
    clickhouse: tables,
    rollup_before: rollupBefore,
  }
  // Written last: a directory without it is an unfinished backup.
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  return manifest
}

/** The start of the hour of the oldest raw click ('YYYY-MM-DD hh:mm:ss', UTC), or null without any. */
async function oldestRawHour(client: ClickHouseClient): Promise<string | null> {
  const result = await client.query({ query: "SELECT count() AS n, formatDateTime(toStartOfHour(min(timestamp)), '%F %T', 'UTC') AS h FROM clicks_v1", format: 'JSONEachRow' })
  const [row] = await result.json<{ n: string; h: string }>()
  return Number(row?.n ?? 0) > 0 ? row!.h : null
}

/** Streams a table to a file, one JSON object a line; its row count. */
async function exportTable(client: ClickHouseClient, table: string, file: string, where?: { sql: string; params: Record<string, unknown> }): Promise<number> {
  const out = createWriteStream(file)
  const result = await client.query({ query: `SELECT * FROM ${table}${where?.sql ?? ''}`, query_params: where?.params, format: 'JSONEachRow' })
  let rows = 0
  for await (const batch of result.stream()) {
    const text = (batch as { text: string }[]).map((row) => `${row.text}\n`).join('')
    rows += (batch as unknown[]).length
    if (!out.write(text)) await once(out, 'drain')
  }
  out.end()
  await once(out, 'finish')
  return rows
}

/**
 * Into an empty Postgres database and a ClickHouse without the service's tables (a fresh server or data
 * directory): pg_restore, then the ClickHouse migrations and the rows.
 */
export async function restore(options: StoresOptions): Promise<Manifest> {
  const { dir, log, clickhouse } = options
  const manifestFile = join(dir, 'manifest.json')
  if (!existsSync(manifestFile)) throw new Error(`${dir} holds no finished backup (no manifest.json)`)
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest
  log(`postgres: pg_restore into ${redactedUrl(options.databaseUrl)}`)
  await runPg('pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', '--dbname', '$URL', join(dir, manifest.postgres.file)], options.databaseUrl)
  await migrateClickHouse(clickhouse)
  for (const table of CLICKHOUSE_TABLES) {
    const [row] = await (await clickhouse.query({ query: `SELECT count() AS n FROM ${table}`, format: 'JSONEachRow' })).json<{ n: string }>()
    if (Number(row?.n ?? 0) > 0) throw new Error(`clickhouse: ${table} is not empty; restore into a fresh ClickHouse`)
  }
  const load = async (table: string) => {
    const entry = manifest.clickhouse[table]
    if (!entry) return
    const rows = await importTable(clickhouse, table, join(dir, entry.file))
    if (rows !== entry.rows) throw new Error(`clickhouse: ${table} has ${rows} rows in its file, the manifest says ${entry.rows}`)
    log(`clickhouse: ${table}, ${rows.toLocaleString('en')} rows`)
  }
  // The rollup's kept hours first (its view is fed by clicks_v1 inserts only), then the raw clicks, which
  // the view rolls up again: restored, the two agree.
  await load(ROLLUP_TABLE)
  for (const table of CLICKHOUSE_TABLES) if (table !== ROLLUP_TABLE) await load(table)
  return manifest
}

async function importTable(client: ClickHouseClient, table: string, file: string): Promise<number> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity })
  let batch: unknown[] = []
  let rows = 0
  const flush = async () => {
    if (batch.length === 0) return
    await client.insert({ table, values: batch, format: 'JSONEachRow' })
    rows += batch.length
    batch = []
  }
  for await (const line of lines) {
    if (line === '') continue
    batch.push(JSON.parse(line))
    if (batch.length >= RESTORE_BATCH) await flush()
  }
  await flush()
  return rows
}

export interface StoresOptions {
  dir: string
  databaseUrl: string
  clickhouse: ClickHouseClient
  log: Log
}

/**
 * The command line of scripts/backup.ts and scripts/restore.ts: the directory argument, the stores of
 * the production shape from the environment, one line per step prefixed with the command's name, exit 1
 * with one line on failure (2 on a usage mistake).
 */
export async function runCommand(name: 'backup' | 'restore', usage: string, embeddedAdvice: string, work: (options: StoresOptions) => Promise<Manifest>): Promise<void> {
  const dir = process.argv[2]
  const config = configOrExit()
  if (!dir) {
    console.error(`usage: npm run ${name} -- ${usage}`)
    process.exit(2)
  }
  if (!config.databaseUrl || !config.clickhouseUrl) {
    console.error(`${name}: DATABASE_URL and CLICKHOUSE_URL are needed; ${embeddedAdvice} (docs/production.md#backups)`)
    process.exit(2)
  }
  const clickhouse = await createClickHouse(config)
  try {
    const manifest = await work({ dir, databaseUrl: config.databaseUrl, clickhouse, log: (line) => console.log(`${name}: ${line}`) })
    console.log(`${name}: done, ${dir} (backup of ${manifest.created_at})`)
  } catch (error) {
    console.error(`${name}: ${error instanceof Error ? error.message : String(error)}`)
    process.exitCode = 1
  } finally {
    await clickhouse.close()
  }
}
