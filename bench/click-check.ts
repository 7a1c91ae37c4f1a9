// The redirect bench's click check (bench/run.ts): after the load stops, clicks recorded in ClickHouse
// against what the redirectors say they served and what their clients saw.
import { createClient } from '@clickhouse/client'
import { clickFigures } from '../test/support/metrics'
import type { WrkResult } from './wrk'

/**
 * Clicks a server logged: from its /metrics, or, for an older revision run beside this one (--compare)
 * that has none yet, from the counters its /health showed then; -1 when neither answers.
 */
async function clicksServed(url: string): Promise<number> {
  try {
    return (await clickFigures(url)).pushed
  } catch {
    const health = (await (await fetch(`${url}/health`)).json().catch(() => ({}))) as { clicks?: { pushed?: number } }
    return health.clicks?.pushed ?? -1
  }
}

/** A redirector whose clicks are checked: what its clients saw (warm-up GETs and wrk runs). */
export interface ClickSource {
  name: string
  url: string
  warmUp: number
  runs: WrkResult[]
}

/**
 * After the load stops: polls ClickHouse every 100 ms (up to 5 s) for the clicks of the seeded links and
 * the redirectors' own counts of redirects served (GET; HEAD is never counted). wrk stops reading with
 * up to one request per connection in flight; the redirector may still have answered those, so the
 * clients' count is a lower bound and clients' count + in flight an upper bound on what it served.
 * With --compare both redirectors write the same links to the same ClickHouse: their counts are summed
 * for the comparison with ClickHouse, and each must lie within its own clients' bounds.
 */
export async function checkClicks(chdbUrl: string, idPrefix: string, servers: ClickSource[]) {
  const stoppedAt = performance.now()
  const bounds = servers.map((s) => {
    const seen = s.warmUp + s.runs.reduce((n, r) => n + r.redirects, 0)
    return { name: s.name, url: s.url, warmUp: s.warmUp, seenByClients: seen, inFlightAtStop: s.runs.reduce((n, r) => n + Math.max(0, r.sent - r.requests), 0) }
  })
  const seenByClients = bounds.reduce((n, b) => n + b.seenByClients, 0)
  const inFlightAtStop = bounds.reduce((n, b) => n + b.inFlightAtStop, 0)
  const warmUp = bounds.reduce((n, b) => n + b.warmUp, 0)
  const client = createClient({ url: chdbUrl, request_timeout: 5_000 })
  let recorded = 0
  let pushed = servers.map(() => -1)
  let equalAfterMs: number | null = null
  try {
    while (performance.now() - stoppedAt < 5_000) {
      const result = await client.query({
        query: 'SELECT count() AS n FROM clicks_v1 WHERE startsWith(link_id, {prefix:String})',
        query_params: { prefix: idPrefix },
        format: 'JSONEachRow',
      })
      recorded = Number((await result.json<{ n: string }>())[0]?.n ?? 0)
      pushed = await Promise.all(servers.map((s) => clicksServed(s.url)))
      const served = pushed.reduce((a, b) => a + b, 0)
      if (pushed.every((p) => p >= 0) && recorded === served && recorded >= seenByClients) {
        equalAfterMs = Math.round(performance.now() - stoppedAt)
        break
      }
      await Bun.sleep(100)
    }
  } finally {
    await client.close()
  }
  // What each redirector says it served must lie between what its clients saw and that plus in flight.
  const perServer = bounds.map((b, i) => ({
    ...b,
    served: pushed[i]!,
    consistent: pushed[i]! >= b.seenByClients && pushed[i]! <= b.seenByClients + b.inFlightAtStop,
  }))
  const served = pushed.some((p) => p < 0) ? -1 : pushed.reduce((a, b) => a + b, 0)
  const servedConsistent = perServer.every((p) => p.consistent)
  const common = { recorded, servedByRedirector: served, seenByClients, warmUp, inFlightAtStop, servedConsistent, equalAfterMs }
  // One redirector: the fields as they always were (undefined is left out of the JSON).
  return { ...common, perServer: servers.length === 1 ? undefined : perServer.map(({ url: _url, ...rest }) => rest) }
}
