// The redirect bench's figures per server (bench/run.ts): medians over the alternating rounds of
// requests/s, p50/p99 and CPU per request of every measured process, the ratios (the routed links' to
// the plain ones too), --compare's difference to the reference, and the printed summary.
import type { checkClicks } from './click-check'
import { median } from './procs'
import { formatVerdicts, type Verdict } from './redirect-targets'
import type { WrkResult } from './wrk'

/**
 * One wrk run. cores: each process's CPU per wall second (1.0 = a whole core, rounded); cpuUsed: CPU
 * seconds each used during the run, unrounded (CPU per request is computed from these). Both include wrk.
 */
export type Run = WrkResult & { cores: Record<string, number>; cpuUsed: Record<string, number> }

/** A server under test: its label in the output and its process's name among the measured pids. */
export interface Server {
  label: string
  process: string
}

export const SERVERS = {
  bare: { label: 'bare Bun.serve 302 (ceiling)', process: 'baseline' },
  floor: { label: 'capture floor', process: 'floor' },
  redirector: { label: 'redirector (warm cache)', process: 'redirect' },
  // This tree's redirector on the routed links (bench/routed-links.ts), as many as the plain ones, each
  // kind on a process of its own (bench/run.ts).
  rules: { label: 'redirector, 10th of 10 rules', process: 'rules' },
  ab: { label: 'redirector, sticky A/B', process: 'ab' },
  reference: { label: 'reference redirector', process: 'reference' },
  embedded: { label: 'embedded default (1 link)', process: 'embedded' },
} satisfies Record<string, Server>

/** The name under which a server process's main thread (the one answering requests) is measured. */
export const servingThread = (process: string) => `${process} serving thread`

/** CPU µs of one process per response wrk read (a server's: all its threads, e.g. the click worker). */
export function cpuPerRequestUs(run: Run, process: string): number {
  return (run.cpuUsed[process]! / run.requests) * 1e6
}

const medianOf = (runs: Run[], pick: (r: Run) => number) => median(runs.map(pick))

/**
 * A server's runs summed up: medians of requests/s, p50/p99 and its own CPU per request (with the range of
 * the rounds), and the median cores and CPU per request of every measured process during its runs: the
 * ClickHouse stand-in, the API and wrk reported apart from the server.
 */
export function summarise(runs: Run[], server: Server) {
  const own = runs.map((r) => cpuPerRequestUs(r, server.process))
  const processes = Object.keys(runs[0]!.cpuUsed)
  return {
    label: server.label,
    rps: medianOf(runs, (r) => r.rps),
    p50Ms: medianOf(runs, (r) => r.latency.p50) / 1000,
    p99Ms: medianOf(runs, (r) => r.latency.p99) / 1000,
    cpuUsPerRequest: median(own),
    /** Of it, the main thread's (the one answering requests); NaN where it was not measured. */
    servingThreadCpuUsPerRequest: runs[0]!.cpuUsed[servingThread(server.process)] === undefined ? Number.NaN : medianOf(runs, (r) => cpuPerRequestUs(r, servingThread(server.process))),
    cpuUsPerRequestRange: [Math.min(...own), Math.max(...own)] as [number, number],
    cores: Object.fromEntries(processes.map((p) => [p, medianOf(runs, (r) => r.cores[p]!)])),
    cpuUsPerRequestByProcess: Object.fromEntries(processes.map((p) => [p, medianOf(runs, (r) => cpuPerRequestUs(r, p))])),
    runs: runs.map((r, i) => ({
      rps: r.rps,
      p50Ms: r.latency.p50 / 1000,
      p99Ms: r.latency.p99 / 1000,
      requests: r.requests,
      non3xx: r.non3xx,
      errors: r.errors,
      cores: r.cores,
      cpuUsPerRequest: own[i]!,
    })),
  }
}
export type ServerSummary = ReturnType<typeof summarise>

/** A redirector's requests/s over the ceiling's and over the floor's (medians of the same run). */
export function ratios(redirector: ServerSummary, bare: ServerSummary, floor: ServerSummary) {
  return { toBare: redirector.rps / bare.rps, toFloor: redirector.rps / floor.rps }
}

const n = (x: number) => Math.round(x).toLocaleString('en-US')
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`
const ratioList = (ratios: number[]) => ratios.map((x) => x.toFixed(3)).join(' ')

/**
 * A server's requests/s over the floor's, round by round: each pair ran seconds apart, so where the host's
 * speed changes during a run (a shared VM's fast and slow phases), these show how far the ratio of the
 * medians moves with it.
 */
export function roundRatios(server: ServerSummary, floor: ServerSummary): number[] {
  return server.runs.map((run, i) => run.rps / floor.runs[i]!.rps)
}

/**
 * The redirector on the routed links over the same redirector on the plain links: the ratio of the medians
 * (what the targets read), round by round, and what routing added to the serving thread's CPU per request.
 */
export function routedRatios(plain: ServerSummary, rules: ServerSummary, ab: ServerSummary) {
  const of = (routed: ServerSummary) => ({
    toPlain: routed.rps / plain.rps,
    byRound: roundRatios(routed, plain),
    servingCpuUsAdded: routed.servingThreadCpuUsPerRequest - plain.servingThreadCpuUsPerRequest,
  })
  return { rules: of(rules), ab: of(ab) }
}

/** Below this, the floor's slowest round over its fastest, the machine's speed changed during the run. */
export const UNSTEADY_FLOOR = 0.8

/** The floor's slowest and fastest round, and a warning when they differ by more than UNSTEADY_FLOOR allows. */
export function floorSteadiness(floor: ServerSummary): { slowest: number; fastest: number; warning: string | null } {
  const rates = floor.runs.map((run) => run.rps)
  const slowest = Math.min(...rates)
  const fastest = Math.max(...rates)
  const steady = fastest > 0 && slowest / fastest >= UNSTEADY_FLOOR
  return {
    slowest,
    fastest,
    warning: steady
      ? null
      : `the capture floor ran at ${n(slowest)}-${n(fastest)} req/s over the rounds (slowest / fastest ${(slowest / fastest).toFixed(2)}): ` +
        "this machine's speed changed during the run, so the ratios of the medians mix rounds of different speeds; read them with the per-round ratios, or run again",
  }
}

/**
 * --compare: this tree's redirector against the reference's. The relative difference of requests/s and of
 * CPU per request (positive: this tree is faster, resp. costs more) from the medians, and the median of
 * the per-round differences (each round's runs are minutes apart at most, so some of the machine's drift
 * cancels).
 */
export function comparison(revision: string, redirectRuns: Run[], referenceRuns: Run[]) {
  const cpu = (runs: Run[], process: string) => median(runs.map((r) => cpuPerRequestUs(r, process)))
  return {
    reference: revision,
    rps: medianOf(redirectRuns, (r) => r.rps) / medianOf(referenceRuns, (r) => r.rps) - 1,
    cpuPerRequest: cpu(redirectRuns, 'redirect') / cpu(referenceRuns, 'reference') - 1,
    pairedRps: median(redirectRuns.map((r, i) => r.rps / referenceRuns[i]!.rps - 1)),
    pairedCpuPerRequest: median(redirectRuns.map((r, i) => cpuPerRequestUs(r, 'redirect') / cpuPerRequestUs(referenceRuns[i]!, 'reference') - 1)),
    rounds: redirectRuns.length,
  }
}

/**
 * The table: one row per server (req/s, p50, p99, its CPU µs per request, the part of it its serving thread
 * used, and the range of the whole over the rounds).
 */
export function serverTable(servers: ServerSummary[]): string[] {
  const ms = (x: number) => x.toFixed(2).padStart(8)
  const us = (x: number) => x.toFixed(2).padStart(10)
  const header = `${''.padEnd(30)}${'req/s'.padStart(10)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'CPU µs/req'.padStart(12)}${'serving thread'.padStart(16)}  range`
  return [
    header,
    ...servers.map(
      (s) =>
        `${s.label.padEnd(30)}${n(s.rps).padStart(10)}${ms(s.p50Ms)}${ms(s.p99Ms)}${us(s.cpuUsPerRequest)}${(Number.isNaN(s.servingThreadCpuUsPerRequest) ? '' : s.servingThreadCpuUsPerRequest.toFixed(2)).padStart(16)}    ${s.cpuUsPerRequestRange.map((x) => x.toFixed(2)).join('–')}`,
    ),
  ]
}

/**
 * What else ran during each server's runs: cores busy and CPU µs per request of every other measured
 * process (the ClickHouse stand-in, the API, wrk), so what they took is visible apart from the server.
 */
export function othersLines(servers: ServerSummary[], serverProcesses: string[]): string[] {
  return servers.map((s) => {
    const others = Object.keys(s.cores)
      .filter((p) => !serverProcesses.includes(p) && !serverProcesses.some((server) => p === servingThread(server)) && (s.cores[p]! >= 0.01 || p === 'wrk'))
      .map((p) => `${p} ${s.cores[p]!.toFixed(2)} cores (${s.cpuUsPerRequestByProcess[p]!.toFixed(2)} µs/req)`)
    return `  during ${s.label} runs: ${others.join(', ') || 'nothing else measurable'}`
  })
}

export function routedLine(r: ReturnType<typeof routedRatios>): string {
  const one = (name: string, x: ReturnType<typeof routedRatios>['rules']) =>
    `${name} ${x.toPlain.toFixed(3)} (per round ${ratioList(x.byRound)}; serving thread ${x.servingCpuUsAdded >= 0 ? '+' : ''}${x.servingCpuUsAdded.toFixed(2)} µs/req)`
  return `routed links over the plain links: ${one('10 rules', r.rules)}, ${one('A/B', r.ab)}`
}

export function comparisonLine(c: ReturnType<typeof comparison>): string {
  return (
    `this tree vs ${c.reference}: req/s ${pct(c.rps)}, CPU per request ${pct(c.cpuPerRequest)} (medians); ` +
    `paired by round: req/s ${pct(c.pairedRps)}, CPU per request ${pct(c.pairedCpuPerRequest)} (median of ${c.rounds})`
  )
}

/** Variables as a shell would write them: `A=1 B=2`. */
export function envList(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ')
}

/** The printed summary: the servers, the ratios, the paced run, the other processes, clicks, targets. */
export function printSummary(s: {
  wrk: { threads: number; connections: number; duration: string; warmup: string; rounds: number; pinned: boolean }
  /** --server-env: what every server's environment added. */
  serverEnv?: Record<string, string>
  links: number
  servers: Record<string, ServerSummary>
  ratios: { redirector: { toBare: number; toFloor: number }; floorToBare: number; reference?: { toBare: number; toFloor: number }; embedded?: { toBare: number; toFloor: number } }
  /** Round by round over the floor (roundRatios), and the floor's own steadiness. */
  rounds: { redirector: number[]; reference?: number[]; embedded?: number[]; floor: ReturnType<typeof floorSteadiness> }
  /** The routed links over the plain ones (routedRatios). */
  routed?: ReturnType<typeof routedRatios>
  paced: { targetRps: number; rps: number; p50Ms: number; p99Ms: number; non3xx: number; cores: Record<string, number> }
  /** The capture floor paced to the same rate: the p99 this machine gives any server at that rate. */
  floorPaced: { rps: number; p50Ms: number; p99Ms: number; cores: Record<string, number> }
  clicks: Omit<Awaited<ReturnType<typeof checkClicks>>, 'health'>
  verdicts: Verdict[]
  compare?: ReturnType<typeof comparison>
}) {
  const c = s.clicks
  const r = s.ratios
  const servers = Object.values(s.servers)
  const cores = (m: Record<string, number>) =>
    Object.entries(m)
      .filter(([, v]) => v >= 0.01)
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
      .join(', ')
  console.log(
    [
      '',
      `redirect benchmark: wrk -t${s.wrk.threads} -c${s.wrk.connections} -d${s.wrk.duration}, ${s.links} links, median of ${s.wrk.rounds} alternating rounds after a ${s.wrk.warmup} warm-up run each` +
        (s.wrk.pinned ? ', servers pinned to CPU 1, wrk, the ClickHouse stand-in and the API to CPU 0' : ''),
      ...(s.serverEnv && Object.keys(s.serverEnv).length > 0 ? [`every server ran with ${envList(s.serverEnv)} (--server-env)`] : []),
      ...serverTable(servers),
      `ratios: redirector / bare ${r.redirector.toBare.toFixed(3)}, redirector / floor ${r.redirector.toFloor.toFixed(3)}, floor / bare ${r.floorToBare.toFixed(3)}` +
        (r.reference ? `; reference / bare ${r.reference.toBare.toFixed(3)}, reference / floor ${r.reference.toFloor.toFixed(3)}` : '') +
        (r.embedded ? `; embedded / floor ${r.embedded.toFloor.toFixed(3)}` : ''),
      `per round over the floor: redirector ${ratioList(s.rounds.redirector)}` +
        (s.rounds.reference ? `; reference ${ratioList(s.rounds.reference)}` : '') +
        (s.rounds.embedded ? `; embedded ${ratioList(s.rounds.embedded)}` : ''),
      ...(s.rounds.floor.warning ? [`  NOTE ${s.rounds.floor.warning}`] : []),
      ...(s.routed ? [routedLine(s.routed)] : []),
      `paced at ${n(s.paced.targetRps)}/s: ${n(s.paced.rps)} req/s, p50 ${s.paced.p50Ms.toFixed(2)} ms, p99 ${s.paced.p99Ms.toFixed(2)} ms, non-3xx ${s.paced.non3xx}; cores: ${cores(s.paced.cores)}`,
      `  capture floor paced to the same rate: ${n(s.floorPaced.rps)} req/s, p50 ${s.floorPaced.p50Ms.toFixed(2)} ms, p99 ${s.floorPaced.p99Ms.toFixed(2)} ms; cores: ${cores(s.floorPaced.cores)}`,
      "CPU of the other processes (medians over each server's runs):",
      ...othersLines(
        servers,
        Object.values(SERVERS).map((x) => x.process),
      ),
      `clicks recorded ${n(c.recorded)} of ${n(c.servedByRedirector)} redirects served${c.equalAfterMs === null ? ' (NOT equal within 5 s)' : ` (equal after ${n(c.equalAfterMs)} ms)`}`,
      `  clients saw ${n(c.seenByClients)} redirects (${n(c.warmUp)} warm-up + wrk 3xx); wrk had ${n(c.inFlightAtStop)} requests in flight when it stopped reading` +
        (c.servedConsistent ? '' : ' - INCONSISTENT: served is outside [seen, seen + in flight]'),
      ...(c.perServer
        ? c.perServer.map(
            (p) => `    ${p.name}: served ${n(p.served)}, its clients saw ${n(p.seenByClients)} (${n(p.warmUp)} warm-up), ${n(p.inFlightAtStop)} in flight${p.consistent ? '' : ' - INCONSISTENT'}`,
          )
        : []),
      ...(s.compare ? [comparisonLine(s.compare)] : []),
      'targets:',
      formatVerdicts(s.verdicts),
      '',
    ].join('\n'),
  )
}
