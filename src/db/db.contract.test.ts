// One contract for both Postgres engines: PGlite always, postgres.js when DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { eq, inArray, sql } from 'drizzle-orm'
import { openDatabase, type Database, type Db } from './client'
import { isUniqueViolation } from './errors'
import { links } from './schema'

const DATABASE_URL = process.env.DATABASE_URL

/** Awaits `promise`, expecting it to fail, and returns what it failed with. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (err) {
    return err
  }
  throw new Error('expected the query to fail, it succeeded')
}

function dbContract(name: string, databaseUrl: string | undefined): void {
  describe(`Database contract: ${name}`, () => {
    let database: Database
    // Unique per run, and every row is deleted afterwards: the real database is shared with other tests.
    const run = crypto.randomUUID()
    const domain = `contract-${run}.test`
    const created: string[] = []
    const link = (id: string, alias: string, extra: Partial<typeof links.$inferInsert> = {}) => {
      created.push(`${run}:${id}`)
      return { id: `${run}:${id}`, domain, alias, url: 'https://example.com/', ...extra }
    }

    beforeAll(async () => {
      database = await openDatabase({ databaseUrl, dataDir: ':memory:' })
      await database.migrate()
    })

    afterAll(async () => {
      if (!database) return
      if (created.length > 0) await database.db.delete(links).where(inArray(links.id, created))
      await database.close()
    })

    it('opens the expected engine', () => {
      expect(database.engine).toBe(databaseUrl ? 'postgres' : 'pglite')
    })

    it('migrates again without changing anything', async () => {
      await database.migrate()
      await database.migrate()
      const rows = await database.db.select().from(links).where(eq(links.domain, domain))
      expect(rows, 'the links table exists and is queryable').toEqual([])
    })

    it('rejects a duplicate (domain, alias) with SQLSTATE 23505, which isUniqueViolation recognises', async () => {
      await database.db.insert(links).values(link('first', 'taken'))
      const err = await failure(database.db.insert(links).values(link('second', 'taken')))
      expect(isUniqueViolation(err), `error was: ${String(err)} / cause: ${String((err as Error).cause)}`).toBe(true)
      expect(isUniqueViolation(err, 'links_domain_alias_key'), 'the violated index is named').toBe(true)
      expect(isUniqueViolation(err, 'links_pkey'), 'another constraint does not match').toBe(false)

      // The same alias on another domain is a different link.
      await database.db.insert(links).values({ ...link('other-domain', 'taken'), domain: `other-${domain}` })
    })

    it('tells a primary-key clash from an alias clash', async () => {
      await database.db.insert(links).values(link('pk', 'pk-a'))
      const err = await failure(database.db.insert(links).values({ ...link('pk', 'pk-b') }))
      expect(isUniqueViolation(err), String(err)).toBe(true)
      expect(isUniqueViolation(err, 'links_domain_alias_key'), 'a duplicate id is not ALIAS_TAKEN').toBe(false)
    })

    it('does not call other failures unique violations', async () => {
      const notNull = await failure(database.db.insert(links).values({ ...link('nn', 'nn'), url: null as unknown as string }))
      expect(isUniqueViolation(notNull), `not-null failure: ${String(notNull)}`).toBe(false)
      for (const other of [undefined, null, 'x', new Error('23505'), { code: 23505 }]) {
        expect(isUniqueViolation(other), `value ${String(other)}`).toBe(false)
      }
    })

    it('round-trips timestamptz as Date, to the millisecond', async () => {
      const expiresAt = new Date('2031-02-03T04:05:06.789Z')
      await database.db.insert(links).values(link('ts', 'ts', { expiresAt }))
      const [row] = await database.db
        .select()
        .from(links)
        .where(eq(links.id, `${run}:ts`))
      expect(row?.expiresAt, `row: ${JSON.stringify(row)}`).toBeInstanceOf(Date)
      expect(row?.expiresAt?.toISOString()).toBe(expiresAt.toISOString())
      expect(row?.createdAt, 'defaultNow() column').toBeInstanceOf(Date)
      expect(Math.abs(row!.createdAt.getTime() - Date.now()), 'createdAt is about now').toBeLessThan(60_000)
    })
  })
}

dbContract('PGlite', undefined)

// Skipped, not silently passed, without DATABASE_URL: the Postgres half runs in CI's second pass,
// where scripts/services.sh provides PostgreSQL and sets DATABASE_URL.
describe.skipIf(!DATABASE_URL)('PostgreSQL (DATABASE_URL)', () => {
  dbContract('postgres.js', DATABASE_URL)

  // What the connection a query ran on has prepared. Each check below opens a pool of its own and uses it
  // one query at a time, so postgres.js opens a single connection and this lists that connection's.
  const prepared = async (db: Db): Promise<string[]> => ((await db.execute(sql`select statement from pg_prepared_statements`)) as unknown as { statement: string }[]).map((row) => row.statement)

  it('runs the queries drizzle builds as named prepared statements, reused on their next run (DATABASE_PREPARED_STATEMENTS default)', async () => {
    const database = await openDatabase({ databaseUrl: DATABASE_URL, dataDir: ':memory:' })
    try {
      for (const alias of ['prep-a', 'prep-b']) {
        expect(await database.db.select({ id: links.id }).from(links).where(eq(links.alias, alias))).toEqual([])
      }
      const statements = await prepared(database.db)
      expect(
        statements.filter((text) => text.includes('"links"."alias" = $1')),
        statements.join('\n'),
      ).toHaveLength(1)
    } finally {
      await database.close()
    }
  })

  it('prepares them inside transactions and savepoints too', async () => {
    const database = await openDatabase({ databaseUrl: DATABASE_URL, dataDir: ':memory:' })
    try {
      const statements = await database.db.transaction(async (tx) => {
        await tx.select({ id: links.id }).from(links).where(eq(links.url, 'https://prep.example/tx'))
        await tx.transaction((savepoint) => savepoint.select({ id: links.id }).from(links).where(eq(links.domain, 'prep.example')))
        return prepared(tx)
      })
      expect(
        statements.some((text) => text.includes('"links"."url" = $1')),
        statements.join('\n'),
      ).toBe(true)
      expect(
        statements.some((text) => text.includes('"links"."domain" = $1')),
        statements.join('\n'),
      ).toBe(true)
    } finally {
      await database.close()
    }
  })

  it('leaves them unnamed with DATABASE_PREPARED_STATEMENTS=false (a pooler in transaction mode)', async () => {
    const database = await openDatabase({ databaseUrl: DATABASE_URL, dataDir: ':memory:', databasePreparedStatements: false })
    try {
      for (const alias of ['prep-a', 'prep-b']) {
        expect(await database.db.select({ id: links.id }).from(links).where(eq(links.alias, alias))).toEqual([])
      }
      // postgres.js' own type lookup at connect is prepared either way; none of drizzle's queries is.
      const statements = await prepared(database.db)
      expect(
        statements.filter((text) => text.includes('"links"')),
        statements.join('\n'),
      ).toEqual([])
    } finally {
      await database.close()
    }
  })

  it('lets two processes migrate one fresh database at once (advisory lock)', async () => {
    // A database of its own, so the two really race on an empty schema (needs CREATEDB, which
    // scripts/services.sh grants).
    const { default: postgres } = await import('postgres')
    const admin = postgres(DATABASE_URL!, { max: 1, onnotice: () => {} })
    const name = `linkservice_migrate_${crypto.randomUUID().replaceAll('-', '')}`
    await admin.unsafe(`create database ${name}`)
    try {
      const url = new URL(DATABASE_URL!)
      url.pathname = `/${name}`
      const clients = await Promise.all([1, 2].map(() => openDatabase({ databaseUrl: url.href, dataDir: ':memory:' })))
      try {
        await Promise.all(clients.map((c) => c.migrate()))
        const [a] = clients
        expect(await a!.db.select().from(links), 'both migrations done, table usable').toEqual([])
      } finally {
        await Promise.all(clients.map((c) => c.close()))
      }
    } finally {
      await admin.unsafe(`drop database if exists ${name}`)
      await admin.end()
    }
  })
})
