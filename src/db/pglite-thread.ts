// PGlite on a thread of its own (pglite-worker.ts), for the one-process product: a live PGlite instance
// (a large WebAssembly program, its memory and its in-memory files) on the thread that answers requests
// made every request on that thread slower, redirects included, whether or not the request touched the
// database (docs/decisions/0027-pglite-on-its-own-thread.md). Here the serving thread keeps a small client that speaks
// the part of PGlite's interface drizzle uses (query, transaction) and posts each call to the thread
// that owns PGlite.
//
// Calls keep PGlite's own semantics: one connection, so a transaction holds it and every other query
// waits until it ends (PGlite's mutex, on the owning thread); drizzle's type parsers for dates and
// intervals (functions, which cannot cross threads) are named by their type ids and applied over there;
// an error comes back with the fields drizzle's callers read (SQLSTATE `code`, `constraint`, …).
import type { PgliteCall, PgliteReply, PgliteErrorFields } from './pglite-worker'

/** The part of PGlite's query options that crosses: rows as objects or arrays, and types left as text. */
interface QueryOptions {
  rowMode?: 'object' | 'array'
  parsers?: Record<number, unknown>
}

export interface QueryResult<T = unknown> {
  rows: T[]
  fields: Array<{ name: string; dataTypeID: number }>
  affectedRows?: number
}

export interface PgliteTransactionClient {
  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<T>>
}

/** What drizzle-orm/pglite calls on its client, answered by the PGlite thread. */
export interface ThreadedPglite extends PgliteTransactionClient {
  transaction<T>(callback: (tx: PgliteTransactionClient) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** An error of the PGlite thread, with the fields of PGlite's DatabaseError it carried. */
export class PgliteThreadError extends Error {
  constructor(fields: PgliteErrorFields) {
    super(fields.message)
    const { message: _message, stack: _stack, ...rest } = fields
    Object.assign(this, rest)
  }
}

/** A call without its id (given when it is sent). */
type Call = PgliteCall extends infer C ? (C extends PgliteCall ? Omit<C, 'id'> : never) : never

/** Starts the thread, opens PGlite at `dir` there ('memory://' or a directory) and waits until it answers. */
export async function openPgliteThread(dir: string): Promise<ThreadedPglite> {
  const worker = new Worker(new URL('./pglite-worker.ts', import.meta.url).href)
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  let nextId = 1
  let stopped: Error | null = null

  const stop = (error: Error) => {
    stopped ??= error
    for (const call of pending.values()) call.reject(error)
    pending.clear()
  }
  worker.onmessage = (event: MessageEvent<PgliteReply>) => {
    const reply = event.data
    const call = pending.get(reply.id)
    if (!call) return
    pending.delete(reply.id)
    if (reply.ok) call.resolve(reply.value)
    else call.reject(new PgliteThreadError(reply.error))
  }
  worker.onerror = (event) => stop(new Error(`PGlite thread: ${event.message}`))
  worker.addEventListener('close', () => stop(new Error('PGlite thread: stopped')))

  const send = <T>(call: Call): Promise<T> => {
    if (stopped) return Promise.reject(stopped)
    const id = nextId++
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject })
      worker.postMessage({ ...call, id } as PgliteCall)
    })
  }

  const query = <T>(tx: number | undefined, sql: string, params: unknown[] = [], options: QueryOptions = {}) =>
    send<QueryResult<T>>({
      op: 'query',
      tx,
      sql,
      params,
      rowMode: options.rowMode ?? 'object',
      textTypes: options.parsers ? Object.keys(options.parsers).map(Number) : [],
    })

  await send({ op: 'open', dir })
  return {
    query: (sql, params, options) => query(undefined, sql, params, options),
    async transaction(callback) {
      const tx = await send<number>({ op: 'begin' })
      let result: Awaited<ReturnType<typeof callback>>
      try {
        result = await callback({ query: (sql, params, options) => query(tx, sql, params, options) })
      } catch (error) {
        // The caller's error is what it hears; a rollback that fails too (the thread stopped) adds nothing.
        await send({ op: 'end', tx, commit: false }).catch(() => {})
        throw error
      }
      await send({ op: 'end', tx, commit: true })
      return result
    },
    async close() {
      if (!stopped) await send({ op: 'close' })
      stop(new Error('PGlite thread: closed'))
      worker.terminate()
    },
  }
}
