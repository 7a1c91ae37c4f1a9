// drizzle runs every query it builds through postgres.js' `unsafe(text, params, { prepare: false })`
// unless the query was given a name with `.prepare(name)`. For a query with parameters, postgres.js then
// needs two round trips (Parse + Describe, wait for the parameter types, then Bind + Execute) and the
// server parses and plans the text every time. As a named prepared statement, cached per connection by
// its text and parameter types, the same query is one round trip (Bind + Execute) from its second use
// on: about a third of the client's and the server's CPU a query on this project's machine, and about
// 1.8 times the shorten rate of bench/api.ts (docs/benchmarks.md). docs/scaling.md says what it needs.
//
// Poolers in transaction mode (PgBouncer before 1.21, or without max_prepared_statements) cannot carry
// a connection's prepared statements from one transaction to the next: DATABASE_PREPARED_STATEMENTS=false
// leaves drizzle's unnamed statements as they were.
import type { Sql, TransactionSql } from 'postgres'

type Client = Sql | TransactionSql

/** A callback given a transaction's client, handed the same client with its statements prepared. */
function preparingCallback(args: unknown[]): unknown[] {
  const last = args.length - 1
  const callback = args[last]
  if (typeof callback !== 'function') return args
  return [...args.slice(0, last), (tx: TransactionSql) => callback(preparingStatements(tx))]
}

/**
 * `client` with every `unsafe()` query run as a named prepared statement, in transactions and their
 * savepoints too. Everything else (tagged queries, `end`, `options`) is the client's own.
 */
export function preparingStatements<C extends Client>(client: C): C {
  return new Proxy(client, {
    get(target, key) {
      switch (key) {
        case 'unsafe':
          return (text: string, params?: Parameters<Sql['unsafe']>[1], options?: Parameters<Sql['unsafe']>[2]) => target.unsafe(text, params, { ...options, prepare: true })
        case 'begin':
          return (...args: unknown[]) => ((target as Sql).begin as (...a: unknown[]) => unknown)(...preparingCallback(args))
        case 'savepoint':
          return (...args: unknown[]) => ((target as TransactionSql).savepoint as (...a: unknown[]) => unknown)(...preparingCallback(args))
        default:
          return Reflect.get(target, key)
      }
    },
  })
}
