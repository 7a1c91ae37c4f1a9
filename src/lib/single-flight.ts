// Concurrent identical reads share one call: while a call for a key runs, callers asking for the same
// key get its promise instead of starting another. Nothing is kept once it settles, so an answer is at
// most one call old: a caller never receives a result of a call that finished before it asked.
// Used for the ClickHouse reads of link lists and statistics, which a dashboard watched by many people
// or a polling client asks for many times at once.

export type SingleFlight<V> = (key: string, run: () => Promise<V>) => Promise<V>

export function singleFlight<V>(): SingleFlight<V> {
  const running = new Map<string, Promise<V>>()
  return (key, run) => {
    const joined = running.get(key)
    if (joined) return joined
    const call = run().finally(() => {
      if (running.get(key) === call) running.delete(key)
    })
    running.set(key, call)
    return call
  }
}

/**
 * A flight table per owner (a ClickHouse client, say): two services in one process, each with its own
 * database, never share an answer.
 */
export function singleFlightPer<V>(): (owner: object, key: string, run: () => Promise<V>) => Promise<V> {
  const tables = new WeakMap<object, SingleFlight<V>>()
  return (owner, key, run) => {
    let table = tables.get(owner)
    if (!table) tables.set(owner, (table = singleFlight()))
    return table(key, run)
  }
}
