// The cluster form of the ClickHouse migrations (CLICKHOUSE_CLUSTER): each single-node statement of
// migrations/clickhouse/ rewritten for shards × replicas, so there is one set of SQL files to review
// and the single-node form stays exactly what the files say. docs/scaling.md describes the topology.
//
// Naming: every table of a file becomes `<table>_local` (Replicated*MergeTree, ON CLUSTER: one per
// replica of every shard) plus `<table>` (Distributed over the `_local` ones). The application's
// queries and inserts keep the names they use today and reach every shard through the Distributed
// table; the materialized view reads and writes the `_local` tables, so each shard rolls up the clicks
// it stores, on the replica the insert reached (replication copies the rollup's part like any other).
//
// Retried inserts stay deduplicated. Writers send a batch with insert_deduplication_token into the
// Distributed table; the server must insert in the foreground (distributed_foreground_insert = 1, in
// the user's profile: checked by migrateClickHouse), so an INSERT succeeds only once every shard holds
// its rows and the writer's spool is what keeps a batch until then. The Distributed table splits a batch
// by a sharding key computed from the rows themselves (SHARDING_KEYS), never rand(): a retried batch,
// through any node, splits into the same per-shard blocks, each reaches the same shard with the same
// token, and that shard's replicas (one Keeper path, '{shard}' in it) drop the copy. The token may repeat
// across shards because each shard keeps its own block ids.
import type { ClickHouseClient } from '@clickhouse/client'

/** What the cluster form needs: the cluster of the server's remote_servers and the migrated database. */
export interface ClusterTarget {
  cluster: string
  database: string
}

/**
 * How each table is split across shards. By link for clicks, their rollup and conversions: a link's
 * statistics then live on one shard (reads may skip the others), a retried conversion meets its first
 * copy (ReplacingMergeTree collapses only within a shard) and the backfill of 0003 lands where the MV
 * would have put it. By account for the audit trail, whose one read is one account's events. A table
 * a new migration creates must be added here: a missing key is an error, not a silent rand().
 */
export const SHARDING_KEYS: Record<string, string> = {
  clicks_v1: 'cityHash64(link_id)',
  clicks_hourly_v1: 'cityHash64(link_id)',
  conversions_v1: 'cityHash64(link_id)',
  agent_audit_v1: 'cityHash64(account_id)',
}

/**
 * A replicated table keeps the hashes of its newest blocks in Keeper, bounded by a count and by seconds
 * measured from the newest block (default 3600 in ClickHouse 26.x). The single-node tables are bounded by
 * the count alone (non_replicated_deduplication_window), so the seconds bound is set far out, a week: at
 * a trickle of one insert a second an hour would otherwise forget a batch the spool retries later.
 */
const DEDUP_WINDOW_SECONDS = 7 * 24 * 3600

/**
 * schema_migrations is one table replicated on every node of the cluster (no '{shard}' in its path), so
 * whichever node CLICKHOUSE_URL reaches next time knows what was applied. Replica names ('{replica}')
 * must then be unique across the whole cluster, as host names are.
 */
export function clusterSchemaMigrations({ cluster }: ClusterTarget): string {
  return `CREATE TABLE IF NOT EXISTS schema_migrations ON CLUSTER ${cluster} (name String, applied_at DateTime DEFAULT now())
            ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/{database}/schema_migrations', '{replica}') ORDER BY name`
}

/**
 * The database the migrations run in, after checking what the cluster form relies on and a test cannot
 * show: inserts in the foreground (see the top of this file) for the user of CLICKHOUSE_URL, whom the
 * redirector and the API insert as too; and no single-node schema_migrations on this node, which would
 * mean a single-node store is being turned into a cluster in place (docs/scaling.md says how to move).
 */
export async function clusterTarget(client: ClickHouseClient, cluster: string): Promise<ClusterTarget> {
  // insert_distributed_sync: the name every version knows (distributed_foreground_insert since 23.x).
  const result = await client.query({
    query: `SELECT currentDatabase() AS database, toString(getSetting('insert_distributed_sync')) AS foreground,
                   (SELECT any(engine) FROM system.tables WHERE database = currentDatabase() AND name = 'schema_migrations') AS migrations`,
    format: 'JSONEachRow',
  })
  const [row] = await result.json<{ database: string; foreground: string; migrations: string }>()
  if (!row || !['1', 'true'].includes(row.foreground)) {
    throw new Error(
      `CLICKHOUSE_CLUSTER is set but inserts into Distributed tables would be queued in the background: set distributed_foreground_insert = 1 in the profile of the ClickHouse user (docs/scaling.md)`,
    )
  }
  if (row.migrations && !row.migrations.startsWith('Replicated')) {
    throw new Error(`CLICKHOUSE_CLUSTER is set but schema_migrations on this server is ${row.migrations}, a single-node store (docs/scaling.md: moving to a cluster)`)
  }
  return { cluster, database: row.database }
}

/** The replicated table behind the Distributed table an application query names. */
export function localName(table: string): string {
  return `${table}_local`
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/
const CREATE_TABLE = /^CREATE TABLE IF NOT EXISTS (\w+)\s*(\([\s\S]*\))\s*ENGINE = (\w*MergeTree)(?:\(([^)]*)\))?([\s\S]*)$/
const ALTER_TABLE = /^ALTER TABLE (\w+)\s+([\s\S]+)$/
const CREATE_VIEW = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+)\s+TO\s+(\w+)\s+AS\s+([\s\S]+)$/
const INSERT_SELECT = /^INSERT INTO (\w+)\s+SELECT\b/
/** ALTERs that change data or storage: on the replicated tables only, never on the Distributed one. */
const LOCAL_ONLY_ALTER = /^(MODIFY|REMOVE) TTL\b|^MODIFY SETTING\b/

/**
 * The cluster form of one single-node statement: one or more statements, in the order to run them.
 * Throws on a statement it does not know how to translate, so a new kind of migration fails in the
 * test (src/adapters/clickhouse-cluster.test.ts) rather than on a cluster.
 */
export function clusterStatements(statement: string, target: ClusterTarget): string[] {
  const { cluster, database } = target
  if (!IDENTIFIER.test(cluster) || !IDENTIFIER.test(database)) throw new Error(`cluster and database must be plain identifiers, got ${cluster}, ${database}`)
  const sql = statement.trim()

  const create = CREATE_TABLE.exec(sql)
  if (create) {
    const [, table, columns, engine, engineArgs, rest] = create as unknown as [string, string, string, string, string | undefined, string]
    const local = localName(table)
    const path = `'/clickhouse/tables/{shard}/{database}/${table}'`
    const args = [path, "'{replica}'", ...(engineArgs?.trim() ? [engineArgs.trim()] : [])].join(', ')
    return [
      `CREATE TABLE IF NOT EXISTS ${local} ON CLUSTER ${cluster}\n${columns}\nENGINE = Replicated${engine}(${args})${replicatedSettings(rest)}`,
      `CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER ${cluster} AS ${local}\nENGINE = Distributed(${cluster}, '${database}', ${local}, ${shardingKey(table)})`,
    ]
  }

  const alter = ALTER_TABLE.exec(sql)
  if (alter) {
    const [, table, change] = alter as unknown as [string, string, string]
    if (/non_replicated_deduplication_window/.test(change)) throw new Error(`no cluster form for a deduplication window changed by ALTER: ${sql.slice(0, 120)}`)
    const local = `ALTER TABLE ${localName(table)} ON CLUSTER ${cluster} ${change}`
    // Columns (and their comments) change on both: the Distributed table lists the columns it serves.
    return LOCAL_ONLY_ALTER.test(change) ? [local] : [local, `ALTER TABLE ${table} ON CLUSTER ${cluster} ${change}`]
  }

  const view = CREATE_VIEW.exec(sql)
  if (view) {
    const [, name, to, select] = view as unknown as [string, string, string, string]
    return [`CREATE MATERIALIZED VIEW IF NOT EXISTS ${name} ON CLUSTER ${cluster} TO ${localName(to)} AS ${toLocalTables(select)}`]
  }

  // A backfill INSERT … SELECT runs once, from the migrating node, through the Distributed tables: it
  // reads every shard, and its rows are sharded by the same key as the rows they summarise.
  if (INSERT_SELECT.test(sql)) return [sql]

  throw new Error(`no cluster form for this migration statement: ${sql.slice(0, 120)}`)
}

/** The sharding key of a table, or an error naming where to add one. */
function shardingKey(table: string): string {
  const key = SHARDING_KEYS[table]
  if (!key) throw new Error(`no sharding key for ${table}: add one to SHARDING_KEYS in src/adapters/clickhouse-cluster.ts`)
  return key
}

/** Table names in a view's SELECT replaced by their local tables (names are whole words). */
function toLocalTables(select: string): string {
  return select.replace(/\b(\w+)\b/g, (word) => (Object.hasOwn(SHARDING_KEYS, word) ? localName(word) : word))
}

/**
 * The SETTINGS of a single-node table for its replicated form: non_replicated_deduplication_window
 * becomes the replicated window with the same count, and the seconds bound above; others are kept.
 */
function replicatedSettings(rest: string): string {
  const match = /\bSETTINGS\s+([\s\S]+)$/.exec(rest)
  const before = match ? rest.slice(0, match.index) : rest
  const settings = (match?.[1] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .flatMap((setting) => {
      const [name, value] = setting.split('=').map((s) => s.trim()) as [string, string | undefined]
      if (name !== 'non_replicated_deduplication_window') return [setting]
      return [`replicated_deduplication_window = ${value}`, `replicated_deduplication_window_seconds = ${DEDUP_WINDOW_SECONDS}`]
    })
  return settings.length ? `${before.trimEnd()}\nSETTINGS ${settings.join(', ')}` : before.trimEnd()
}
