// The thread that owns PGlite in the one-process product (see pglite-thread.ts): it opens PGlite and
// answers each call the serving thread posts, concurrently as PGlite itself would (its one connection
// orders them: an open transaction holds it and other queries wait).
import { PGlite, type Transaction } from '@electric-sql/pglite'

declare const self: Worker

/** What the serving thread asks; every call has an id its reply carries. */
export type PgliteCall = { id: number } & (
  | { op: 'open'; dir: string }
  | { op: 'query'; tx: number | undefined; sql: string; params: unknown[]; rowMode: 'object' | 'array'; textTypes: number[] }
  /** Opens a transaction; the reply is its number, for the queries and the end that follow. */
  | { op: 'begin' }
  | { op: 'end'; tx: number; commit: boolean }
  | { op: 'close' }
)

/** An error as it crosses: message, name and PGlite's DatabaseError fields (code, constraint, detail, …). */
export type PgliteErrorFields = { message: string; name?: string; stack?: string } & Record<string, unknown>

export type PgliteReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: PgliteErrorFields }

let db: PGlite | null = null
/** Open transactions by number: PGlite's transaction client, how to end it and how it ended. */
const transactions = new Map<number, { tx: Transaction; finish: (commit: boolean) => void; outcome: Promise<void> }>()
let nextTx = 1
/** Thrown inside PGlite's transaction callback to make it roll back; not an error of the caller's. */
const ROLLBACK = Symbol('rollback')

/** Type parsers that keep a value as the text Postgres sent, by type id (drizzle's for dates and intervals). */
const textParsers = new Map<string, Record<number, (value: string) => string>>()
function parsersFor(types: number[]): Record<number, (value: string) => string> | undefined {
  if (types.length === 0) return undefined
  const key = types.join(',')
  let parsers = textParsers.get(key)
  if (!parsers) {
    parsers = Object.fromEntries(types.map((type) => [type, (value: string) => value]))
    textParsers.set(key, parsers)
  }
  return parsers
}

function errorFields(error: unknown): PgliteErrorFields {
  if (!(error instanceof Error)) return { message: String(error) }
  const fields: PgliteErrorFields = { message: error.message, name: error.name }
  for (const [key, value] of Object.entries(error)) {
    if (value === undefined || typeof value === 'function' || (typeof value === 'object' && value !== null)) continue
    fields[key] = value
  }
  return fields
}

function opened(): PGlite {
  if (!db) throw new Error('PGlite is not open')
  return db
}

/**
 * Opens a transaction and resolves with its number once BEGIN has run. PGlite's transaction callback
 * then waits for the call that ends it: COMMIT when it resolves, ROLLBACK when it throws.
 */
function begin(): Promise<number> {
  const number = nextTx++
  return new Promise((resolve, reject) => {
    let finish!: (commit: boolean) => void
    const decided = new Promise<boolean>((resolve) => (finish = resolve))
    const outcome: Promise<void> = opened()
      .transaction(async (tx) => {
        transactions.set(number, { tx, finish, outcome })
        resolve(number)
        if (!(await decided)) throw ROLLBACK
      })
      .then(
        () => undefined,
        (error: unknown) => {
          if (error !== ROLLBACK) throw error
        },
      )
    // BEGIN itself failed: the callback never ran, and the caller of begin hears of it.
    outcome.catch((error: unknown) => {
      if (!transactions.has(number)) reject(error)
    })
  })
}

async function end(number: number, commit: boolean): Promise<void> {
  const open = transactions.get(number)
  if (!open) throw new Error(`no open transaction ${number}`)
  transactions.delete(number)
  open.finish(commit)
  await open.outcome
}

async function answer(call: PgliteCall): Promise<unknown> {
  switch (call.op) {
    case 'open':
      db = new PGlite(call.dir)
      await db.waitReady
      return null
    case 'query': {
      const client = call.tx === undefined ? opened() : transactions.get(call.tx)?.tx
      if (!client) throw new Error(`no open transaction ${call.tx}`)
      return client.query(call.sql, call.params, { rowMode: call.rowMode, parsers: parsersFor(call.textTypes) })
    }
    case 'begin':
      return begin()
    case 'end':
      return end(call.tx, call.commit)
    case 'close':
      await db?.close()
      db = null
      return null
  }
}

self.onmessage = (event: MessageEvent<PgliteCall>) => {
  const call = event.data
  answer(call).then(
    (value) => self.postMessage({ id: call.id, ok: true, value } satisfies PgliteReply),
    (error: unknown) => self.postMessage({ id: call.id, ok: false, error: errorFields(error) } satisfies PgliteReply),
  )
}
