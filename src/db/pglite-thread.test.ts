import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/pglite'
import type { PGlite } from '@electric-sql/pglite'
import { isUniqueViolation } from './errors'
import { openPgliteThread, type ThreadedPglite } from './pglite-thread'
import { until } from '../../test/support/wait'

// PGlite's own answers, as the serving thread gets them from the thread that owns it.
describe('PGlite on its own thread', () => {
  let pg: ThreadedPglite

  beforeAll(async () => {
    pg = await openPgliteThread('memory://')
    await pg.query('create table t (id int primary key, at timestamptz, note text)')
  })
  afterAll(() => pg.close())

  test('answers queries with parameters, rows as objects or arrays, named types kept as text', async () => {
    await pg.query('insert into t values ($1, $2, $3)', [1, '2026-11-25T10:00:00Z', 'a\tb'])
    const objects = await pg.query<{ id: number; note: string }>('select id, note from t where id = $1', [1])
    expect(objects.rows).toEqual([{ id: 1, note: 'a\tb' }])
    const arrays = await pg.query('select id, at from t where id = $1', [1], { rowMode: 'array', parsers: { 1184: () => {} } })
    expect(arrays.rows).toEqual([[1, '2026-11-25 10:00:00+00']])
    // Without the type named, PGlite parses it (a Date crosses the thread as a Date).
    const parsed = await pg.query<{ at: Date }>('select at from t where id = 1')
    expect(parsed.rows[0]!.at).toEqual(new Date('2026-11-25T10:00:00Z'))
  })

  test('a transaction commits what its callback did, and rolls back when it throws, with the caller hearing its own error', async () => {
    await pg.transaction(async (tx) => {
      await tx.query('insert into t (id) values (10)')
      await tx.query('insert into t (id) values (11)')
    })
    const thrown = await pg
      .transaction(async (tx) => {
        await tx.query('insert into t (id) values (12)')
        throw new Error('changed my mind')
      })
      .catch((error: Error) => error)
    expect((thrown as Error).message).toBe('changed my mind')
    const ids = await pg.query<{ id: number }>('select id from t where id >= 10 order by id')
    expect(ids.rows.map((row) => row.id)).toEqual([10, 11])
  })

  test('a query from outside waits until the open transaction ends (one connection, as PGlite in process)', async () => {
    const order: string[] = []
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let inserted!: () => void
    const insertDone = new Promise<void>((resolve) => (inserted = resolve))
    let sent!: () => void
    const outsideSent = new Promise<void>((resolve) => (sent = resolve))
    const transaction = pg.transaction(async (tx) => {
      await tx.query('insert into t (id) values (20)')
      inserted()
      // A query of the transaction's own, sent after the outside one: the thread has had the outside
      // query before this one, so had it not waited for the transaction it would have answered first.
      await outsideSent
      await tx.query('select 1')
      order.push('transaction went on')
      await held
      order.push('commit')
    })
    await insertDone
    const outside = pg.query<{ n: number }>('select count(*)::int as n from t where id = 20').then((result) => {
      order.push('outside')
      return result.rows[0]!.n
    })
    sent()
    await until(
      () => order.length > 0,
      () => `the transaction's own query: ${JSON.stringify(order)}`,
    )
    expect(order, 'the outside query answered while the transaction was open').toEqual(['transaction went on'])
    release()
    await transaction
    // It ran after the commit, so it sees the row.
    expect(await outside).toBe(1)
    expect(order).toEqual(['transaction went on', 'commit', 'outside'])
  })

  test('errors keep the fields callers read: a duplicate key is a unique violation of its constraint, through drizzle too', async () => {
    const error = await pg.query('insert into t (id) values (1)').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: '23505', constraint: 't_pkey' })
    const db = drizzle(pg as unknown as PGlite)
    const viaDrizzle = await db.execute(sql`insert into t (id) values (1)`).catch((e: unknown) => e)
    expect(isUniqueViolation(viaDrizzle, 't_pkey')).toBe(true)
    expect(isUniqueViolation(viaDrizzle, 'another_key')).toBe(false)
    // The connection is fine afterwards.
    expect((await pg.query('select 1 as one')).rows).toEqual([{ one: 1 }])
  })

  // Last: it closes the instance the tests share (closing twice is harmless, afterAll does it again).
  test('after close every call is refused with a clear error', async () => {
    await pg.close()
    await expect(pg.query('select 1')).rejects.toThrow('PGlite thread: closed')
    await expect(pg.transaction(async () => {})).rejects.toThrow('PGlite thread: closed')
  })
})
