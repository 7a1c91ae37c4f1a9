// The API bench's verdicts and summary (bench/api.ts): the issue's targets met or missed per scenario,
// and the checks that make a figure trustworthy (no failed request, every answered write stored).
import type { ApiRun } from './wrk-api'

export interface ScenarioResult {
  scenario: string
  /** Links each request creates (0: a read). */
  linksPerRequest: number
  full: ApiRun
  pilot: ApiRun
  half: ApiRun & { targetRps: number }
  /** Links the scenario's accounts gained over its three runs (null: a read). */
  linksCreated: number | null
}

interface Target {
  scenario: string
  target: string
  measured: string
  met: boolean
}

const ms = (us: number) => us / 1000
const runs = (r: ScenarioResult) => [r.full, r.pilot, r.half]

/** Failed requests and writes that do not add up: what makes the run fail (targets only report). */
function checks(r: ScenarioResult): string[] {
  const problems: string[] = []
  for (const run of runs(r)) {
    if (run.requests === 0) problems.push(`${r.scenario}: no answer within a run (${run.sent} sent): slower than wrk's 2 s timeout or the run`)
    const errors = Object.entries(run.errors).filter(([, n]) => n > 0)
    if (errors.length > 0) problems.push(`${r.scenario}: ${errors.map(([k, n]) => `${k} ${n}`).join(', ')} (4xx/5xx are "status"; wrk.log in the work dir)`)
  }
  if (r.linksCreated !== null) {
    // wrk stops with up to one request per connection in flight: the server may have done those too.
    const answered = runs(r).reduce((n, run) => n + run.requests - run.errors.status, 0) * r.linksPerRequest
    const inFlight = runs(r).reduce((n, run) => n + Math.max(0, run.sent - run.requests), 0) * r.linksPerRequest
    if (r.linksCreated < answered || r.linksCreated > answered + inFlight) {
      problems.push(`${r.scenario}: ${r.linksCreated} links stored for ${answered} answered (+${inFlight} in flight): not every answer is a stored link`)
    }
  }
  return problems
}

export function evaluate(results: ScenarioResult[]) {
  const by = Object.fromEntries(results.map((r) => [r.scenario, r]))
  const targets: Target[] = []
  for (const name of ['shorten-mk', 'shorten-at']) {
    const r = by[name]
    if (!r) continue
    targets.push({ scenario: name, target: '>= 2,000 requests/s', measured: `${Math.round(r.full.rps)}/s`, met: r.full.rps >= 2000 })
    targets.push({ scenario: name, target: 'p99 < 25 ms at half rate', measured: `${ms(r.half.latency.p99).toFixed(2)} ms at ${Math.round(r.half.rps)}/s`, met: ms(r.half.latency.p99) < 25 })
  }
  const rest = by['shorten-at'] ?? by['shorten-mk']
  if (by['mcp-create'] && rest) {
    const ratio = by['mcp-create'].full.rps / rest.full.rps
    targets.push({ scenario: 'mcp-create', target: `>= 0.5 of ${rest.scenario}'s rate`, measured: ratio.toFixed(2), met: ratio >= 0.5 })
  }
  if (by.bulk) {
    const linksPerS = by.bulk.full.rps * by.bulk.linksPerRequest
    targets.push({ scenario: 'bulk', target: '>= 20,000 links/s', measured: `${Math.round(linksPerS)} links/s`, met: linksPerS >= 20_000 })
  }
  for (const [name, limitMs] of [
    ['list-first', 20],
    ['list-deep', 20],
    ['stats', 100],
  ] as const) {
    const r = by[name]
    if (r)
      targets.push({
        scenario: name,
        target: `p99 < ${limitMs} ms at half rate`,
        measured: `${ms(r.half.latency.p99).toFixed(2)} ms at ${Math.round(r.half.rps)}/s`,
        met: ms(r.half.latency.p99) < limitMs,
      })
  }
  return { targets, failures: results.flatMap(checks) }
}

export function printSummary(s: { wrk: { threads: number; connections: number; bulkConnections: number; duration: string }; scenarios: ScenarioResult[]; targets: Target[] }) {
  const n = (x: number) => Math.round(x).toLocaleString('en-US')
  const f = (us: number) => ms(us).toFixed(2).padStart(8)
  const cpu = (run: ApiRun) => `api ${run.cores.api?.toFixed(2)} (${run.cpuUsPerRequest.api} µs/req), chdb ${run.cores.chdb?.toFixed(2)}, wrk ${run.cores.wrk?.toFixed(2)}`
  const lines = [
    '',
    `management API benchmark: wrk -t${s.wrk.threads} -c${s.wrk.connections} (bulk -c${s.wrk.bulkConnections}) -d${s.wrk.duration} per run; shared machine, figures indicative`,
    `${'scenario'.padEnd(12)}${'full req/s'.padStart(11)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'half req/s'.padStart(12)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}   cores at full rate`,
    ...s.scenarios.map(
      (r) =>
        `${r.scenario.padEnd(12)}${n(r.full.rps).padStart(11)}${f(r.full.latency.p50)}${f(r.full.latency.p99)}${n(r.half.rps).padStart(12)}${f(r.half.latency.p50)}${f(r.half.latency.p99)}   ${cpu(r.full)}` +
        (r.linksPerRequest > 1 ? `  (${n(r.full.rps * r.linksPerRequest)} links/s)` : ''),
    ),
    '',
    'targets (issue 22):',
    ...s.targets.map((t) => `  ${t.met ? 'met   ' : 'MISSED'} ${t.scenario.padEnd(12)} ${t.target.padEnd(30)} ${t.measured}`),
    '',
  ]
  console.log(lines.join('\n'))
}
