// Postgres for the API: postgres.js when DATABASE_URL is set, else PGlite (real Postgres compiled to
// WASM) under DATA_DIR. Both are driven through the same drizzle schema, queries and migrations.
import type { PGlite } from '@electric-sql/pglite'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import { sql } from 'drizzle-orm'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../core/config'
import * as schema from './schema'
import { ADVISORY_LOCKS } from './locks'

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>

export interface Database {
  db: Db
  engine: 'postgres' | 'pglite'
  /** Applies migrations/postgres; safe to call from several processes at once. */
  migrate(): Promise<void>
  close(): Promise<void>
}

const MIGRATIONS_DIR = join(import.meta.dir, '../../migrations/postgres')
/** Arbitrary constant naming the advisory lock that serialises migrations across API processes. */
const MIGRATION_LOCK_ID = ADVISORY_LOCKS.migration

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Promise<Database> {
  if (config.databaseUrl) {
    const databaseUrl = config.databaseUrl
    const { default: postgres } = await import('postgres')
    const { drizzle } = await import('drizzle-orm/postgres-js')
    const { migrate } = await import('drizzle-orm/postgres-js/migrator')
    const client = postgres(config.databaseUrl, { max: 10, onnotice: () => {}, connect_timeout: 10 })
    const db = drizzle(client, { schema }) as unknown as Db
    return {
      db,
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
      close: () => client.end({ timeout: 5 }),
    }
  }
  // Imported lazily so production images never load the embedded engine. PGlite runs on a thread of its
  // own (pglite-thread.ts): alive on the thread that serves requests, it slows every request there.
  const { drizzle } = await import('drizzle-orm/pglite')
  const { migrate } = await import('drizzle-orm/pglite/migrator')
  const { openPgliteThread } = await import('./pglite-thread')
  const client = await openPgliteThread(pgliteDir(config.dataDir))
  // drizzle-orm/pglite calls query() and transaction() of its client, which the thread's client answers.
  const db = drizzle(client as unknown as PGlite, { schema }) as unknown as Db
  return {
    db,
    engine: 'pglite',
    // PGlite lives in this process alone, so there is nobody to race.
    migrate: () => migrate(drizzle(client as unknown as PGlite, { schema }), { migrationsFolder: MIGRATIONS_DIR }),
    close: () => client.close(),
  }
}

/** DATA_DIR=":memory:" keeps everything in memory (tests); otherwise PGlite persists under DATA_DIR/postgres. */
function pgliteDir(dataDir: string): string {
  if (dataDir === ':memory:') return 'memory://'
  const dir = join(dataDir, 'postgres')
  mkdirSync(dir, { recursive: true })
  return dir
}

export async function ping(db: Db): Promise<void> {
  await db.execute(sql`select 1`)
}
