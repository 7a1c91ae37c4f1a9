// REDIRECT_WORKERS under the redirect bench's load, with one worker killed: the click-equality check.
// Same processes as bench/run.ts (Postgres + Redis from scripts/services.sh, ClickHouse as the chDB
// stand-in, src/api.ts, redirect/main.ts), but the redirector runs REDIRECT_WORKERS=--workers processes
// on one port under its supervisor. wrk loads it over the seeded aliases; halfway through, one worker is
// killed with SIGKILL (the supervisor starts it again and it replays its spool). Then ClickHouse is
// polled until every click is in:
//   - none lost: rows >= the redirects clients received (warm-up GETs + wrk's 3xx),
//   - none stored twice: distinct click ids = rows,
//   - none invented: rows <= received + what was in flight (wrk's unanswered requests at its stop, and
//     one a connection at the kill, whose click may be logged while its 302 never left).
// A worker's own served counter cannot be summed here (/health answers from either worker, and the killed
// one's counter dies with it), so the bounds come from the clients.
//
//   bun bench/workers.ts [--workers 2] [--duration 10s] [--connections 64] [--links 1000] [--timeout 300s]
// Exits 1 when a check fails. Everything it starts, it stops.
import { createClient } from '@clickhouse/client'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../src/db/client'
import { spawnChdbHttp } from '../test/support/chdb-http-process'
import { benchRun, freePorts, log, optionReader, startApiAndRedirector, startServices } from './procs'
import { deleteSeededLinks, seedLinks, warmCache } from './seed'
import { durationMs, killRunningWrk, runWrk, writeWrkScript } from './wrk'
import { clickFigures } from '../test/support/metrics'

const { value, int } = optionReader(process.argv.slice(2))
const options = { workers: int('--workers', 2), duration: value('--duration', '10s'), connections: int('--connections', 64), links: int('--links', 1000) }
if (options.workers < 2) throw new Error('--workers must be at least 2 (one of them is killed)')
const bench = benchRun('linkservice-workers-', durationMs(value('--timeout', '300s')))
const { workDir, cleanup } = bench

/** The supervisor's children: its worker processes. */
function workerPids(supervisor: number): number[] {
  const children = readFileSync(`/proc/${supervisor}/task/${supervisor}/children`, 'utf8').trim()
  return children === '' ? [] : children.split(/\s+/).map(Number)
}

async function main() {
  const { databaseUrl, redisUrl } = await startServices(cleanup)
  const chdb = await spawnChdbHttp({ path: join(workDir, 'clickhouse') })
  cleanup.push('chdb-http', () => chdb.stop())
  const [apiPort, redirectPort] = freePorts(2) as [number, number]
  const { redirector, shortDomain, redirectUrl } = await startApiAndRedirector({
    cleanup,
    workDir,
    databaseUrl,
    redisUrl,
    clickhouseUrl: chdb.url,
    apiPort,
    redirectPort,
    env: { REDIRECT_WORKERS: String(options.workers) },
  })
  const supervisor = redirector.proc.pid
  const before = workerPids(supervisor)
  if (before.length !== options.workers) throw new Error(`expected ${options.workers} workers under ${supervisor}, found ${before.length}`)
  log(`redirector: supervisor ${supervisor}, workers ${before.join(', ')} on :${redirectPort}`)

  const database = await openDatabase({ databaseUrl, dataDir: workDir })
  cleanup.push('postgres client', () => database.close())
  const seeded = await seedLinks(database.db, { count: options.links, domain: shortDomain })
  cleanup.push('seeded links', () => deleteSeededLinks(database.db, seeded.ids))
  const warm = await warmCache(redirectUrl, seeded.aliases)
  if (warm.redirects !== seeded.aliases.length) throw new Error(`warm-up: ${warm.redirects} of ${seeded.aliases.length} redirected`)

  cleanup.push('wrk', async () => killRunningWrk())
  const script = writeWrkScript(join(workDir, 'redirect.lua'), { aliases: seeded.aliases, countStatuses: true })
  const load = runWrk({
    url: redirectUrl,
    script,
    duration: options.duration,
    label: 'workers',
    logFile: join(workDir, 'wrk.log'),
    headers: [],
    connections: options.connections,
    threads: 1,
    prefix: [],
  })
  await Bun.sleep(durationMs(options.duration) / 2)
  const killed = before[0]!
  process.kill(killed, 'SIGKILL')
  log(`SIGKILL to worker ${killed}, halfway through the load`)
  const run = await load
  const after = workerPids(supervisor)
  log(`wrk: ${Math.round(run.rps)} req/s, ${run.redirects} redirects, ${run.non3xx} non-3xx, errors ${JSON.stringify(run.errors)}; workers now ${after.join(', ')}`)

  const received = warm.redirects + run.redirects
  const inFlight = Math.max(0, run.sent - run.requests) + options.connections
  const client = createClient({ url: chdb.url, request_timeout: 5_000 })
  const stoppedAt = performance.now()
  let rows = 0
  let distinct = 0
  let settledAfterMs: number | null = null
  try {
    // The restarted worker waits its backoff (1 s) before it replays what the killed one left.
    while (performance.now() - stoppedAt < 30_000) {
      const result = await client.query({
        query: 'SELECT count() AS n, uniqExact(click_id) AS d FROM clicks_v1 WHERE startsWith(link_id, {prefix:String})',
        query_params: { prefix: seeded.idPrefix },
        format: 'JSONEachRow',
      })
      const [counts] = await result.json<{ n: string; d: string }>()
      rows = Number(counts?.n ?? 0)
      distinct = Number(counts?.d ?? 0)
      // Three scrapes: the port is shared, so each may reach another worker.
      const spools = await Promise.all([0, 1, 2].map(() => clickFigures(redirectUrl)))
      if (rows >= received && spools.every((c) => c.spooledFiles === 0)) {
        settledAfterMs = Math.round(performance.now() - stoppedAt)
        break
      }
      await Bun.sleep(200)
    }
  } finally {
    await client.close()
  }
  const checks = [
    { check: 'a worker was killed and the supervisor started another', met: !after.includes(killed) && after.length === options.workers },
    { check: `no click lost: rows ${rows} >= redirects received ${received}`, met: rows >= received },
    { check: `none stored twice: distinct click ids ${distinct} = rows ${rows}`, met: distinct === rows },
    { check: `none invented: rows ${rows} <= received + in flight ${received + inFlight}`, met: rows <= received + inFlight },
  ]
  console.log(
    [
      '',
      `REDIRECT_WORKERS=${options.workers}, wrk -t1 -c${options.connections} -d${options.duration} over ${options.links} links, one worker SIGKILLed halfway`,
      `  ${Math.round(run.rps)} req/s, p99 ${(run.latency.p99 / 1000).toFixed(2)} ms; clients received ${received} redirects (${warm.redirects} warm-up), ${inFlight} in flight at most`,
      `  clicks in ClickHouse: ${rows} rows, ${distinct} distinct click ids${settledAfterMs === null ? ' (not settled within 30 s)' : `, settled ${settledAfterMs} ms after the load stopped`}`,
      ...checks.map((c) => `  ${c.met ? 'met   ' : 'FAILED'}  ${c.check}`),
      '',
    ].join('\n'),
  )
  if (checks.some((c) => !c.met)) bench.fail()
}

await bench.run(main)
