// The cluster form of the ClickHouse migrations, on the engine we have: chDB, the ClickHouse engine in a
// process, with a cluster declared in its configuration (test/support/chdb-cluster.ts). What we found
// there, and what this file therefore checks:
//   - every generated statement parses (formatQuery);
//   - ON CLUSTER is refused ("Replicated DDL queries are disabled", QUERY_IS_PROHIBITED): chDB runs no
//     distributed DDL queue; a Replicated*MergeTree is refused too ("Can't create replicated table without
//     ZooKeeper", NO_ZOOKEEPER): there is no Keeper. Neither can be created here, so:
//   - the same statements with ON CLUSTER and replication taken out (demoted) are applied: the Distributed
//     tables over a declared cluster, the ALTERs on both tables, the view over the local tables. Only the
//     backfill INSERT fails, as it must: it reads the Distributed tables, whose shards are not reachable;
//   - the shapes the code promises are checked on the text (engines, Keeper paths, sharding keys, windows).
// The single-node path is checked unchanged on the shared chDB, and the migrator's cluster guards on a
// chDB behind the HTTP interface.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnChdbHttp, type ChdbHttpProcess } from '../../test/support/chdb-http-process'
import { runOnClusterChdb, type StatementOutcome } from '../../test/support/chdb-cluster'
import { testClickHouse } from '../../test/support/clickhouse'
import { migrateClickHouse, splitStatements } from './clickhouse'
import { clusterSchemaMigrations, clusterStatements, localName, SHARDING_KEYS, type ClusterTarget } from './clickhouse-cluster'
import { applyRetention } from './clickhouse-retention'

const DIR = join(import.meta.dir, '../../migrations/clickhouse')
const TARGET: ClusterTarget = { cluster: 'links', database: 'default' }
const files = readdirSync(DIR)
  .filter((f) => /^\d+_.+\.sql$/.test(f))
  .sort()
const singleNode = files.flatMap((file) => splitStatements(readFileSync(join(DIR, file), 'utf8')).map((sql) => ({ file, sql })))
const cluster = [clusterSchemaMigrations(TARGET), ...singleNode.flatMap(({ sql }) => clusterStatements(sql, TARGET))]

/** The statement as one server would run it: no ON CLUSTER, no replication, the single-node window. */
function demoted(sql: string): string {
  return sql
    .replace(/ ON CLUSTER \w+/, '')
    .replace(/Replicated(\w*MergeTree)\('[^']*', '[^']*'(?:, )?/, '$1(')
    .replace(/replicated_deduplication_window = (\d+), replicated_deduplication_window_seconds = \d+/, 'non_replicated_deduplication_window = $1')
}
const quoted = (sql: string) => `'${sql.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`

/** What applyRetention sends in cluster mode, recorded instead of run (chDB refuses ON CLUSTER). */
async function retentionStatements(client: ClickHouseClient): Promise<string[]> {
  const sent: string[] = []
  const recording = new Proxy(client, {
    get: (target, key) => (key === 'command' ? async ({ query }: { query: string }) => void sent.push(query) : Reflect.get(target, key, target)),
  })
  await applyRetention(recording, { clicks: 40, audit: 365 }, TARGET.cluster)
  return sent
}

let outcomes: { parsed: StatementOutcome[]; real: StatementOutcome[]; demoted: StatementOutcome[]; replicated: StatementOutcome; tables: string; retention: StatementOutcome[] }
let retention: string[]

beforeAll(async () => {
  retention = await retentionStatements(await testClickHouse())
  const replicatedWithoutCluster = "CREATE TABLE r (x String) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/r', '{replica}') ORDER BY x"
  const run = await runOnClusterChdb(TARGET.cluster, [
    ...cluster.map((sql) => `SELECT formatQuery(${quoted(sql)})`),
    ...cluster,
    ...cluster.map(demoted),
    replicatedWithoutCluster,
    "SELECT name, engine, engine_full FROM system.tables WHERE database = 'default' ORDER BY name",
    ...retention.map((sql) => `SELECT formatQuery(${quoted(sql)})`),
  ])
  const n = cluster.length
  outcomes = {
    parsed: run.slice(0, n),
    real: run.slice(n, 2 * n),
    demoted: run.slice(2 * n, 3 * n),
    replicated: run[3 * n]!,
    tables: run[3 * n + 1]?.output ?? '',
    retention: run.slice(3 * n + 2),
  }
}, 60_000)

describe('cluster form of the migrations, on chDB', () => {
  test('every statement parses', () => {
    const failed = outcomes.parsed.map((o, i) => ({ ...o, sql: cluster[i] })).filter((o) => !o.ok)
    expect(failed, JSON.stringify(failed, null, 2)).toEqual([])
    expect(cluster.length).toBeGreaterThan(singleNode.length)
  })

  test('chDB refuses ON CLUSTER and Replicated tables (no DDL queue, no Keeper): what a server with Keeper must run', () => {
    const onCluster = outcomes.real.filter((_, i) => / ON CLUSTER /.test(cluster[i]!))
    expect(onCluster.length).toBe(cluster.length - 1)
    for (const outcome of onCluster) expect(outcome.error ?? 'ran', JSON.stringify(outcome)).toMatch(/QUERY_IS_PROHIBITED|UNKNOWN_TABLE|UNKNOWN_IDENTIFIER/)
    expect(outcomes.replicated.error, JSON.stringify(outcomes.replicated)).toContain('NO_ZOOKEEPER')
  })

  test('without ON CLUSTER and replication the statements apply; only the backfill needs the shards', () => {
    const failed = outcomes.demoted.map((o, i) => ({ ...o, sql: demoted(cluster[i]!) })).filter((o) => !o.ok)
    expect(
      failed.map((f) => f.sql.split('\n')[0]),
      JSON.stringify(failed, null, 2),
    ).toEqual(['INSERT INTO clicks_hourly_v1'])
    expect(failed[0]!.error).toMatch(/NETWORK_ERROR|All connection tries failed/)
    const tables = new Map(
      outcomes.tables
        .trim()
        .split('\n')
        .map((line) => line.split('\t') as [string, string, string])
        .map(([name, engine, full]) => [name, { engine, full: full.replaceAll("\\'", "'") }]),
    )
    for (const table of Object.keys(SHARDING_KEYS)) {
      expect(tables.get(table)?.engine, outcomes.tables).toBe('Distributed')
      expect(tables.get(table)?.full, outcomes.tables).toContain(`Distributed('links', 'default', '${localName(table)}', ${SHARDING_KEYS[table]})`)
      expect(tables.get(localName(table))?.engine, outcomes.tables).toMatch(/MergeTree$/)
    }
    expect(tables.get('clicks_hourly_mv_v1')?.engine, outcomes.tables).toBe('MaterializedView')
  })
})

describe('cluster form: the shapes the code promises', () => {
  test('each single-node table becomes a replicated <table>_local and a Distributed <table> sharded by a key of its rows', () => {
    const created = singleNode.filter(({ sql }) => sql.startsWith('CREATE TABLE'))
    expect(created.length).toBe(Object.keys(SHARDING_KEYS).length)
    for (const { sql } of created) {
      const table = /^CREATE TABLE IF NOT EXISTS (\w+)/.exec(sql)![1]!
      const engine = /ENGINE = (\w+)/.exec(sql)![1]!
      const [local, distributed] = clusterStatements(sql, TARGET) as [string, string]
      expect(local).toStartWith(`CREATE TABLE IF NOT EXISTS ${table}_local ON CLUSTER links\n`)
      expect(local).toContain(`ENGINE = Replicated${engine}('/clickhouse/tables/{shard}/{database}/${table}', '{replica}')`)
      expect(local).toContain('SETTINGS replicated_deduplication_window = 10000, replicated_deduplication_window_seconds = 604800')
      expect(local).not.toContain('non_replicated')
      expect(distributed).toBe(`CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER links AS ${table}_local\nENGINE = Distributed(links, 'default', ${table}_local, ${SHARDING_KEYS[table]})`)
      // rand() would send a retried batch to other shards, past their dedup windows.
      expect(SHARDING_KEYS[table]).not.toMatch(/rand/i)
    }
  })

  test('columns change on both tables, the TTL only where the rows are; the view reads and writes the local tables', () => {
    const alter = singleNode.find(({ sql }) => sql.startsWith('ALTER TABLE clicks_v1 ADD COLUMN'))!.sql
    const change = alter.slice('ALTER TABLE clicks_v1 '.length)
    expect(clusterStatements(alter, TARGET)).toEqual([`ALTER TABLE clicks_v1_local ON CLUSTER links ${change}`, `ALTER TABLE clicks_v1 ON CLUSTER links ${change}`])
    expect(clusterStatements('ALTER TABLE clicks_v1 MODIFY TTL toDateTime(timestamp) + toIntervalDay(40)', TARGET)).toEqual([
      'ALTER TABLE clicks_v1_local ON CLUSTER links MODIFY TTL toDateTime(timestamp) + toIntervalDay(40)',
    ])
    const [view] = clusterStatements(singleNode.find(({ sql }) => sql.startsWith('CREATE MATERIALIZED VIEW'))!.sql, TARGET)
    expect(view).toStartWith('CREATE MATERIALIZED VIEW IF NOT EXISTS clicks_hourly_mv_v1 ON CLUSTER links TO clicks_hourly_v1_local AS SELECT')
    expect(view).toContain('FROM clicks_v1_local\n')
    expect(view).toContain('toString(country)')
    expect(view).not.toMatch(/\bclicks_v1\b|\bclicks_hourly_v1\b/)
  })

  test('schema_migrations is replicated to every node (no {shard} in its path) so any node knows what ran', () => {
    expect(cluster[0]).toContain("ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/{database}/schema_migrations', '{replica}')")
    expect(cluster[0]).toContain('ON CLUSTER links')
  })

  test('retention alters the local tables ON CLUSTER, in statements that parse', () => {
    expect(retention).toEqual([
      'ALTER TABLE clicks_v1_local ON CLUSTER links MODIFY TTL toDateTime(timestamp) + toIntervalDay(40)',
      'ALTER TABLE agent_audit_v1_local ON CLUSTER links MODIFY TTL toDateTime(at) + toIntervalDay(365)',
    ])
    for (const outcome of outcomes.retention) expect(outcome.ok, JSON.stringify(outcome)).toBe(true)
  })

  test('a statement or table it does not know is an error, never a guess', () => {
    expect(() => clusterStatements('CREATE TABLE IF NOT EXISTS pings_v1 (at DateTime) ENGINE = MergeTree ORDER BY at', TARGET)).toThrow(/no sharding key for pings_v1/)
    expect(() => clusterStatements('DROP TABLE clicks_v1', TARGET)).toThrow(/no cluster form/)
    expect(() => clusterStatements('ALTER TABLE clicks_v1 MODIFY SETTING non_replicated_deduplication_window = 5', TARGET)).toThrow(/deduplication window/)
    expect(() => clusterStatements(singleNode[0]!.sql, { cluster: 'links; DROP', database: 'default' })).toThrow(/plain identifiers/)
  })
})

describe('single node (CLICKHOUSE_CLUSTER unset)', () => {
  test('the migrations create the tables the files describe, nothing replicated or distributed', async () => {
    const client = await testClickHouse()
    const result = await client.query({
      query: "SELECT name, engine, engine_full FROM system.tables WHERE database = currentDatabase() AND (name LIKE '%_v1%' OR name = 'schema_migrations') ORDER BY name",
      format: 'JSONEachRow',
    })
    const rows = await result.json<{ name: string; engine: string; engine_full: string }>()
    const engines = Object.fromEntries(rows.map((r) => [r.name, r.engine]))
    expect(engines, JSON.stringify(rows)).toEqual({
      agent_audit_v1: 'ReplacingMergeTree',
      clicks_hourly_mv_v1: 'MaterializedView',
      clicks_hourly_v1: 'AggregatingMergeTree',
      clicks_v1: 'MergeTree',
      conversions_v1: 'ReplacingMergeTree',
      schema_migrations: 'ReplacingMergeTree',
    })
    for (const row of rows.filter((r) => r.name !== 'schema_migrations' && r.engine.endsWith('MergeTree'))) {
      expect(row.engine_full, row.name).toContain('non_replicated_deduplication_window = 10000')
    }
  })
})

describe('migrateClickHouse with a cluster, on chDB behind the HTTP interface', () => {
  let server: ChdbHttpProcess
  let url: string

  beforeAll(async () => {
    server = await spawnChdbHttp({ path: join(mkdtempSync(join(tmpdir(), 'cluster-migrate-')), 'chdb') })
    url = server.url
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
  })

  test('refuses to start while Distributed inserts would be queued in the background', async () => {
    const client = createClient({ url, request_timeout: 10_000, log: { level: ClickHouseLogLevel.OFF } })
    try {
      await expect(migrateClickHouse(client, { cluster: 'links' })).rejects.toThrow(/distributed_foreground_insert = 1/)
    } finally {
      await client.close()
    }
  })

  test('with foreground inserts it goes on to the ON CLUSTER DDL (this chDB declares no cluster); on a single-node store it refuses', async () => {
    const client = createClient({ url, request_timeout: 10_000, log: { level: ClickHouseLogLevel.OFF }, clickhouse_settings: { distributed_foreground_insert: 1 } })
    try {
      await expect(migrateClickHouse(client, { cluster: 'links' })).rejects.toThrow(/cluster 'links' not found/)
      expect(await migrateClickHouse(client)).toEqual(files)
      await expect(migrateClickHouse(client, { cluster: 'links' })).rejects.toThrow(/schema_migrations on this server is ReplacingMergeTree, a single-node store/)
    } finally {
      await client.close()
    }
  })
})
