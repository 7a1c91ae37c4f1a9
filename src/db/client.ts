// Postgres for the API: postgres.js when DATABASE_URL is set, else PGlite (real Postgres compiled to
// WASM) under DATA_DIR. Both are driven through the same drizzle schema, queries and migrations. With
// DATABASE_REPLICA_URL a second pool reads a streaming replica for the read-only API paths (readFromReplica).
import type { PGlite } from '@electric-sql/pglite'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import { sql } from 'drizzle-orm'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../../core/config'
import * as schema from './schema'
import { ADVISORY_LOCKS } from './locks'
import { isConnectionError } from './errors'
import { preparingStatements } from './prepared'

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>

export interface Database {
  db: Db
  /**
   * Where the read-only API paths read, through readFromReplica: the replica's pool when
   * DATABASE_REPLICA_URL is set, else `db` itself (no second pool; PGlite never has one).
   */
  readDb: Db
  engine: 'postgres' | 'pglite'
  /** Applies migrations/postgres; safe to call from several processes at once. */
  migrate(): Promise<void>
  close(): Promise<void>
}

const MIGRATIONS_DIR = join(import.meta.dir, '../../migrations/postgres')
/** Arbitrary constant naming the advisory lock that serialises migrations across API processes. */
const MIGRATION_LOCK_ID = ADVISORY_LOCKS.migration
/** Fewer connections than the primary's 10: the replica serves three routes' reads, nothing else. */
const REPLICA_POOL_MAX = 5

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'databaseReplicaUrl' | 'databasePreparedStatements'>>): Promise<Database> {
  if (config.databaseUrl) {
    const databaseUrl = config.databaseUrl
    const { default: postgres } = await import('postgres')
    const { drizzle } = await import('drizzle-orm/postgres-js')
    const { migrate } = await import('drizzle-orm/postgres-js/migrator')
    const client = postgres(config.databaseUrl, { max: 10, onnotice: () => {}, connect_timeout: 10 })
    // Named prepared statements unless DATABASE_PREPARED_STATEMENTS=false (prepared.ts says why).
    const statements = config.databasePreparedStatements === false ? <C>(c: C) => c : preparingStatements
    const db = drizzle(statements(client), { schema }) as unknown as Db
    // Connects on its first query, like the primary's pool: a replica that is down delays no start.
    const replica = config.databaseReplicaUrl ? postgres(config.databaseReplicaUrl, { max: REPLICA_POOL_MAX, onnotice: () => {}, connect_timeout: 10 }) : undefined
    return {
      db,
      readDb: replica ? (drizzle(statements(replica), { schema }) as unknown as Db) : db,
      engine: 'postgres',
      async migrate() {
        // A connection of its own holds a session advisory lock for the whole run, so two processes
        // never migrate at once; ending it releases the lock even when a migration throws.
        const lock = postgres(databaseUrl, { max: 1, onnotice: () => {}, connect_timeout: 10 })
        try {
          await lock`select pg_advisory_lock(${MIGRATION_LOCK_ID})`
          await migrate(drizzle(lock, { schema }), { migrationsFolder: MIGRATIONS_DIR })
        } finally {
          await lock.end({ timeout: 5 })
        }
      },
      async close() {
        await Promise.all([client.end({ timeout: 5 }), replica?.end({ timeout: 5 })])
      },
    }
  }
  // Imported lazily so production images never load the embedded engine. PGlite runs on a thread of its
  // own (pglite-thread.ts): alive on the thread that serves requests, it slows every request there.
  const { drizzle } = await import('drizzle-orm/pglite')
  const { migrate } = await import('drizzle-orm/pglite/migrator')
  const { openPgliteThread } = await import('./pglite-thread')
  const { initialisePgliteDir } = await import('./pglite-init')
  const dir = pgliteDir(config.dataDir)
  // An empty directory gets its cluster from a child process (pglite-init.ts: initdb's memory leaves with it).
  if (dir !== MEMORY_DIR) await initialisePgliteDir(dir)
  const client = await openPgliteThread(dir)
  // drizzle-orm/pglite calls query() and transaction() of its client, which the thread's client answers.
  const db = drizzle(client as unknown as PGlite, { schema }) as unknown as Db
  return {
    db,
    readDb: db,
    engine: 'pglite',
    // PGlite lives in this process alone, so there is nobody to race.
    migrate: () => migrate(drizzle(client as unknown as PGlite, { schema }), { migrationsFolder: MIGRATIONS_DIR }),
    close: () => client.close(),
  }
}

const MEMORY_DIR = 'memory://'

/** DATA_DIR=":memory:" keeps everything in memory (tests); otherwise PGlite persists under DATA_DIR/postgres. */
function pgliteDir(dataDir: string): string {
  if (dataDir === ':memory:') return MEMORY_DIR
  const dir = join(dataDir, 'postgres')
  mkdirSync(dir, { recursive: true })
  return dir
}

export async function ping(db: Db): Promise<void> {
  await db.execute(sql`select 1`)
}

/**
 * After the replica failed to connect, reads skip it this long: a replica host that does not answer
 * costs one connect timeout now and then, not one per request.
 */
const REPLICA_RETRY_MS = 5000
const replicaDownUntil = new WeakMap<Db, number>()

/**
 * A read of a read-only API path (the links list, one link, statistics' link lookup) on the replica, or
 * on the primary when there is none. Only for reads that may be a little behind: never authentication
 * (a revoked key must fail at once), idempotency, the redirector's resolve, or a read inside a write.
 * - Read-your-writes: when `maybeNotReplicated(error)` says the replica may just not have the row yet
 *   (a link created a moment ago: not found), the primary is asked before the caller hears "not found".
 * - A replica that cannot be reached does not fail the read: the primary answers it (and the next ones,
 *   for REPLICA_RETRY_MS). Other errors are the query's own and are thrown as they are.
 */
export async function readFromReplica<T>(handles: { db: Db; readDb: Db }, read: (db: Db) => Promise<T>, maybeNotReplicated: (error: unknown) => boolean = () => false): Promise<T> {
  const { db, readDb } = handles
  if (readDb === db || performance.now() < (replicaDownUntil.get(readDb) ?? 0)) return read(db)
  try {
    return await read(readDb)
  } catch (error) {
    if (isConnectionError(error)) replicaDownUntil.set(readDb, performance.now() + REPLICA_RETRY_MS)
    else if (!maybeNotReplicated(error)) throw error
    return read(db)
  }
}
