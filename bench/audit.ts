// What audit recording costs the call it records (issue 12: under 0.1 ms at the median), measured two
// ways in one process, with the real recorder (spool on a temporary disk directory, chDB in-process as
// the store, so inserts run in this process as in the embedded default):
//
// 1. record() alone: over --calls calls in turns of --turn calls (after each turn the event loop runs the
//    group commit, as between requests); every other turn each call is timed on its own (Bun.nanoseconds,
//    whose own cost is in each sample), the others as a block (the mean per call). Also the
//    group commit itself (the turn's rows built and written with one write()), which runs after the
//    calls answered, reported per event.
// 2. A real request: GET /api/v1/tags through createApi(…).handle() (API key auth, per-key rate limit,
//    PGlite query, JSON body; a route that asks ClickHouse nothing, so the store's own work does not
//    swamp the comparison), plain and followed by record() as the request path will call it,
//    alternating rounds in the same run; after each request the event loop turns once (outside the
//    timed window, as a server's next request would come in a later turn), so each recorded request
//    also pays its own group commit: a write() per event, the dearest case. Reported: the median and
//    p99 latency of each, the difference of the medians (overall and the median of the per-round
//    differences), and the median per-request cycle (request + the turn after it), which includes that
//    commit. On a shared 2-core machine this difference is within the noise of a ~1 ms request; part 1
//    is the precise figure.
//
//   bun bench/audit.ts [--calls 200000] [--turn 1000] [--requests 3000] [--rounds 6]
// Writes bench/results/audit-latest.json (git-ignored). Exits 1 when record()'s median misses 0.1 ms or an event was
// lost (ClickHouse's count against the recorder's).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { openAdapters } from '../src/adapters'
import { createClickHouse, migrateClickHouse } from '../src/adapters/clickhouse'
import { createApi } from '../src/app'
import { parseConfig } from '../core/config'
import { openDatabase } from '../src/db/client'
import { accounts, links } from '../src/db/schema'
import { createApiKey } from '../src/modules/keys/verdicts'
import { createAuditRecorder } from '../src/modules/audit/recorder'
import { auditEvent, nextTurn, storedAudit, TEST_IP_HASH_SECRET } from '../test/support/audit-fixtures'

const RECORD_BUDGET_NS = 100_000 // 0.1 ms, the target at the median

const args = process.argv.slice(2)
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`)
  const n = i >= 0 ? Number(args[i + 1]) : fallback
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`)
  return n
}
const calls = flag('calls', 200_000)
const turn = flag('turn', 1000)
const requests = flag('requests', 3000)
const rounds = flag('rounds', 6)

const percentile = (sorted: ArrayLike<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!
const sortedCopy = (values: number[]) => Float64Array.from(values).sort()
const us = (ns: number) => Math.round(ns / 10) / 100

const dir = mkdtempSync(join(tmpdir(), 'bench-audit-'))
const clickhouse = await createClickHouse({ clickhouseUrl: undefined, dataDir: join(dir, 'data') })
await migrateClickHouse(clickhouse)
// The production defaults (1,000 events or 1 s a batch, 256 MiB spool, no fsync), on a temporary spool.
const defaults = parseConfig({ DATA_DIR: dir })
const recorder = createAuditRecorder({ clickhouse, config: { ipHashSecret: TEST_IP_HASH_SECRET, audit: defaults.audit }, log: (l) => console.error(l) })
const account = 'acct_bench_audit'
const agent = `agt_bench_audit_${Date.now()}`

// 1. record() alone. The caller builds its event before the call (its own cost, not recording's).
const ips = Array.from({ length: 100 }, (_, i) => `198.51.100.${i}`)
const recordNs: number[] = []
const blockNs: number[] = []
const commitNs: number[] = []
const emptyTurnNs: number[] = []
for (let done = 0; done < calls; done += turn) {
  const events = Array.from({ length: Math.min(turn, calls - done) }, (_, i) => auditEvent(account, agent, { ip: ips[i % ips.length]!, durationMs: i }))
  if ((done / turn) % 2 === 0) {
    for (const event of events) {
      const t0 = Bun.nanoseconds()
      recorder.record(event)
      recordNs.push(Bun.nanoseconds() - t0)
    }
  } else {
    // Every other turn timed as a block: the mean without the clock's own cost in each sample.
    const t0 = Bun.nanoseconds()
    for (const event of events) recorder.record(event)
    blockNs.push((Bun.nanoseconds() - t0) / events.length)
  }
  let t0 = Bun.nanoseconds()
  await nextTurn() // the group commit of this turn's events runs here
  commitNs.push(Bun.nanoseconds() - t0)
  t0 = Bun.nanoseconds()
  await nextTurn()
  emptyTurnNs.push(Bun.nanoseconds() - t0)
}
const record = sortedCopy(recordNs)
const commitPerEventNs = (percentile(sortedCopy(commitNs), 0.5) - percentile(sortedCopy(emptyTurnNs), 0.5)) / turn
const micro = {
  calls,
  turn,
  recordMedianUs: us(percentile(record, 0.5)),
  recordP99Us: us(percentile(record, 0.99)),
  recordP999Us: us(percentile(record, 0.999)),
  recordMaxUs: us(record[record.length - 1]!),
  recordMeanInBlocksUs: us(percentile(sortedCopy(blockNs), 0.5)),
  groupCommitPerEventUs: us(commitPerEventNs),
}
console.log(
  `record(): median ${micro.recordMedianUs} µs, p99 ${micro.recordP99Us} µs, p99.9 ${micro.recordP999Us} µs, max ${micro.recordMaxUs} µs over ${recordNs.length.toLocaleString('en')} calls timed one by one (clock included); ${micro.recordMeanInBlocksUs} µs a call timed in blocks of ${turn}`,
)
console.log(`group commit after the calls answered: ${micro.groupCommitPerEventUs} µs an event (turns of ${turn})`)

// 2. A real request, plain and recorded. The per-key limit (120 a minute on Pro) would refuse most of
// them: the real in-process limiter is kept, under a fresh key every 100 hits, so its cost stays in.
let hits = 0
const database = await openDatabase({ databaseUrl: undefined, dataDir: ':memory:' })
await database.migrate()
const adapters = await openAdapters({ redisUrl: undefined })
const app = createApi({
  config: parseConfig({
    SHORT_DOMAIN: 'sho.rt',
    SHORT_BASE_URL: 'https://sho.rt',
    PUBLIC_API_URL: 'https://api.sho.rt',
    TRUSTED_IP_HEADER: 'x-bench-ip',
    INTERNAL_SECRET: 'bench-internal-secret-0123456789abcdef',
    IP_HASH_SECRET: 'bench-ip-hash-secret-0123456789abcdef',
  }),
  db: database.db,
  kv: adapters.kv,
  idempotency: adapters.idempotency,
  clickhouse,
  limiter: { hit: (k, limit, windowMs) => adapters.limiter.hit(`${k}#${Math.floor(hits++ / 100)}`, limit, windowMs), close: () => adapters.limiter.close() },
})
await database.db.insert(accounts).values({ id: account, email: 'bench-audit@example.test', plan: 'pro' })
await database.db.insert(links).values({ id: 'link_bench_audit', domain: 'sho.rt', alias: 'bench-audit', url: 'https://example.com/audit', accountId: account })
const key = await createApiKey(database.db, account, new Date())
const url = 'http://localhost/api/v1/tags'
const headers = { authorization: `Bearer ${key}`, 'x-bench-ip': '203.0.113.7' }

async function request(recorded: boolean): Promise<{ latencyNs: number; cycleNs: number }> {
  const arrived = Date.now()
  const t0 = Bun.nanoseconds()
  const response = await app.handle(new Request(url, { headers }))
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`)
  if (recorded) {
    recorder.record({
      accountId: account,
      agentId: agent,
      via: 'rest',
      operation: 'tags.read',
      method: 'GET',
      path: new URL(url).pathname,
      status: response.status,
      scopesUsed: ['tags:read'],
      durationMs: (Bun.nanoseconds() - t0) / 1e6,
      ip: headers['x-bench-ip'],
      at: arrived,
    })
  }
  const latencyNs = Bun.nanoseconds() - t0
  await response.arrayBuffer()
  await nextTurn()
  return { latencyNs, cycleNs: Bun.nanoseconds() - t0 }
}

for (let i = 0; i < 500; i++) await request(i % 2 === 0) // warm-up: JIT, caches, PGlite
const runs: Record<'plain' | 'recorded', { latency: number[]; cycle: number[]; medians: number[] }> = {
  plain: { latency: [], cycle: [], medians: [] },
  recorded: { latency: [], cycle: [], medians: [] },
}
for (let r = 0; r < rounds; r++) {
  // Alternate which goes first, so drift within a round favours neither.
  for (const variant of r % 2 === 0 ? (['plain', 'recorded'] as const) : (['recorded', 'plain'] as const)) {
    const latency: number[] = []
    for (let i = 0; i < requests; i++) {
      const timing = await request(variant === 'recorded')
      latency.push(timing.latencyNs)
      runs[variant].cycle.push(timing.cycleNs)
    }
    runs[variant].latency.push(...latency)
    runs[variant].medians.push(percentile(sortedCopy(latency), 0.5))
  }
}
const summary = (variant: 'plain' | 'recorded') => {
  const latency = sortedCopy(runs[variant].latency)
  return {
    medianUs: us(percentile(latency, 0.5)),
    p99Us: us(percentile(latency, 0.99)),
    cycleMedianUs: us(percentile(sortedCopy(runs[variant].cycle), 0.5)),
    roundMediansUs: runs[variant].medians.map(us),
  }
}
const roundDifferences = runs.recorded.medians.map((m, i) => m - runs.plain.medians[i]!)
const endToEnd = {
  requests,
  rounds,
  route: 'GET /api/v1/tags',
  plain: summary('plain'),
  recorded: summary('recorded'),
  medianDifferenceUs: 0,
  cycleDifferenceUs: 0,
  medianOfRoundDifferencesUs: us(percentile(sortedCopy(roundDifferences), 0.5)),
}
endToEnd.medianDifferenceUs = Math.round((endToEnd.recorded.medianUs - endToEnd.plain.medianUs) * 100) / 100
endToEnd.cycleDifferenceUs = Math.round((endToEnd.recorded.cycleMedianUs - endToEnd.plain.cycleMedianUs) * 100) / 100
console.log(`${endToEnd.route} via app.handle, ${rounds} alternating rounds of ${requests}:`)
for (const variant of ['plain', 'recorded'] as const) {
  const s = endToEnd[variant]
  console.log(`  ${variant.padEnd(8)} median ${s.medianUs} µs, p99 ${s.p99Us} µs, cycle (with the turn after) ${s.cycleMedianUs} µs; round medians ${s.roundMediansUs.join(', ')}`)
}
console.log(
  `  recorded − plain: ${endToEnd.medianDifferenceUs} µs (medians), ${endToEnd.medianOfRoundDifferencesUs} µs (median of the rounds' differences) on the call, ${endToEnd.cycleDifferenceUs} µs a cycle`,
)

// Nothing lost: every recorded event is in ClickHouse once.
const flushed = await recorder.flush(60_000)
const stored = await storedAudit(clickhouse, agent)
const counters = await recorder.close()
const expected = calls + rounds * requests + 250
const lossless = flushed && counters.recorded === expected && counters.dropped === 0 && stored.rows === expected && stored.ids === expected
console.log(`events: ${expected.toLocaleString('en')} recorded, ${stored.rows.toLocaleString('en')} rows stored (${stored.ids.toLocaleString('en')} distinct ids), ${counters.batchesWritten} batches`)

const pass = lossless && percentile(record, 0.5) < RECORD_BUDGET_NS
const report = {
  at: new Date().toISOString(),
  machine: { cpus: cpus().length, bun: Bun.version },
  targetMedianUs: RECORD_BUDGET_NS / 1000,
  pass,
  micro,
  endToEnd,
  events: { expected, stored: stored.rows, distinct: stored.ids, batches: counters.batchesWritten },
}
await database.close()
await clickhouse.close()
rmSync(dir, { recursive: true, force: true })
const out = join(import.meta.dir, 'results')
mkdirSync(out, { recursive: true })
writeFileSync(join(out, 'audit-latest.json'), `${JSON.stringify(report, null, 2)}\n`)
console.log(`${pass ? 'PASS' : 'FAIL'}: record() median ${micro.recordMedianUs} µs (target < ${RECORD_BUDGET_NS / 1000} µs), no event lost → bench/results/audit-latest.json`)
process.exit(pass ? 0 : 1)
