// Load for the crash tests: `clients` loops of GET requests to one short link, each request with a
// referrer of its own (https://crash.test/<client>/<n>), so the rows in ClickHouse say exactly which
// requests were stored. A client stops at its first failed request (the server was killed): that
// request was in flight, and the server may or may not have recorded it. Each request has a connection of
// its own, so a failure is the client's to see (no transparent retry on a reused connection).
import { expect } from 'bun:test'
import type { ClickRows } from './click-rows'

export interface LoadResult {
  /** Referrers of the requests answered with a 302. */
  received: Set<string>
  /** Referrers of the requests that failed (in flight when the server died, or sent after). */
  inFlight: Set<string>
  /** Answers other than 302 (none expected). */
  others: number[]
}

export interface LoadOptions {
  /** Pause of each client between its requests (paced load); none by default. */
  pauseMs?: number
  /** Clients stop once this holds (besides at their first failed request). */
  until?: () => boolean
  userAgent?: string
}

export function clickLoad(url: string, clients: number, options: LoadOptions = {}): Promise<LoadResult> {
  const result: LoadResult = { received: new Set(), inFlight: new Set(), others: [] }
  const headers: Record<string, string> = options.userAgent === undefined ? {} : { 'user-agent': options.userAgent }
  const client = async (c: number) => {
    for (let n = 0; !options.until?.(); n++) {
      const referer = `https://crash.test/${c}/${n}`
      try {
        // A connection of its own for each request: on a reused one that a kill closed, fetch sends the GET
        // again by itself, and with several workers the other one answers it, so the client would see one
        // 302 for two requests the servers received (both stored, rightly) and never the failure.
        const response = await fetch(url, { redirect: 'manual', keepalive: false, headers: { ...headers, referer }, signal: AbortSignal.timeout(5000) })
        if (response.status === 302) result.received.add(referer)
        else result.others.push(response.status)
      } catch {
        result.inFlight.add(referer)
        return
      }
      if (options.pauseMs) await Bun.sleep(options.pauseMs)
    }
  }
  return Promise.all(Array.from({ length: clients }, (_, c) => client(c))).then(() => result)
}

/**
 * Every 302 a client received is stored exactly once. A request in flight at the kill may have been
 * written to the log without its 302 reaching the client (no client can tell), so such a row is allowed,
 * and only such rows: at most one per client.
 */
export function expectEachAnsweredClickOnce(stored: ClickRows, load: LoadResult): void {
  // The figures of the run, for the reader of the test output (one line, not per request).
  console.log(`crash: ${load.received.size} 302s received by clients, ${stored.rows} clicks stored (${stored.ids} distinct ids), ${load.inFlight.size} requests in flight at the kill`)
  const notOnce = [...load.received].filter((r) => stored.byReferrer[r] !== 1).map((r) => `${r}: ${stored.byReferrer[r] ?? 0}`)
  expect(notOnce.length, `${notOnce.length} of ${load.received.size} answered clicks stored other than once, e.g. ${notOnce.slice(0, 5).join(', ')}`).toBe(0)
  const extra = Object.keys(stored.byReferrer).filter((r) => !load.received.has(r))
  expect(
    extra.filter((r) => !load.inFlight.has(r)),
    'stored clicks nobody requested',
  ).toEqual([])
  expect(extra.every((r) => stored.byReferrer[r] === 1)).toBe(true)
  expect(stored.rows).toBe(load.received.size + extra.length)
  expect(stored.ids, 'distinct click ids').toBe(stored.rows)
  expect(load.others).toEqual([])
}
