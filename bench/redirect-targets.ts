// The redirect bench's targets (issue 22, "Done when"; the routed links' from the routing issue) and
// the one verdict over a run's measurements: a pure function, so what counts as met is tested apart from
// wrk and the servers.

export const REDIRECT_TARGETS = {
  /** Redirector requests/s over the capture floor's (bench/capture-floor.ts), medians of the same run. */
  floorRatio: 0.85,
  /** p99 of the run paced at half the redirector's own median rate. */
  pacedP99Ms: 3,
  /** Clicks recorded in ClickHouse equal redirects served, at most this long after the load stops. */
  clicksWithinMs: 2_000,
  /** The embedded default (one process, chDB inside) on a warm link: its requests/s over the floor's. */
  embeddedFloorRatio: 0.75,
  /** …and its p99 under full load. */
  embeddedP99Ms: 10,
  /** The redirector on links whose tenth rule is the first to match: its requests/s over the plain links'. */
  rulesRatio: 0.9,
  /** …on links with a running sticky A/B test of two variants. */
  abRatio: 0.9,
} as const

export interface RedirectMeasurements {
  redirectorRps: number
  floorRps: number
  pacedP99Ms: number
  /** ms after the load stopped when recorded = served; null: not equal within the polling window. */
  clicksEqualAfterMs: number | null
  /** Each redirector's own served count lies within what its clients saw and that plus in flight. */
  servedConsistent: boolean
  /** Responses that were not a 3xx, over every run of every server (a fast 404 is no redirect). */
  non3xx: number
  /** The embedded default's median requests/s and p99 at full load, when it was measured. */
  embedded?: { rps: number; p99Ms: number }
  /** The redirector's median requests/s on the routed links (bench/routed-links.ts), when measured. */
  routed?: { rulesRps: number; abRps: number }
}

export interface Verdict {
  target: string
  measured: string
  met: boolean
}

export function redirectVerdicts(m: RedirectMeasurements, targets = REDIRECT_TARGETS): Verdict[] {
  const ratio = m.floorRps > 0 ? m.redirectorRps / m.floorRps : 0
  const clicksMet = m.clicksEqualAfterMs !== null && m.clicksEqualAfterMs <= targets.clicksWithinMs && m.servedConsistent
  return [
    { target: `redirector / capture floor >= ${targets.floorRatio}`, measured: ratio.toFixed(3), met: ratio >= targets.floorRatio },
    { target: `p99 < ${targets.pacedP99Ms} ms at half the redirector's rate`, measured: `${m.pacedP99Ms.toFixed(2)} ms`, met: m.pacedP99Ms < targets.pacedP99Ms },
    {
      target: `clicks recorded = redirects served within ${targets.clicksWithinMs.toLocaleString('en-US')} ms`,
      measured: m.clicksEqualAfterMs === null ? 'not equal within the window' : `after ${m.clicksEqualAfterMs} ms${m.servedConsistent ? '' : ', served count inconsistent'}`,
      met: clicksMet,
    },
    { target: 'every response a redirect', measured: `${m.non3xx} non-3xx`, met: m.non3xx === 0 },
    ...(m.embedded ? embeddedVerdicts(m.embedded, m.floorRps, targets) : []),
    ...(m.routed ? routedVerdicts(m.routed, m.redirectorRps, targets) : []),
  ]
}

/** Each routed link against the plain links of the same run (ratio of the medians). */
function routedVerdicts(routed: { rulesRps: number; abRps: number }, plainRps: number, targets: typeof REDIRECT_TARGETS): Verdict[] {
  const of = (rps: number) => (plainRps > 0 ? rps / plainRps : 0)
  return [
    { target: `10-rule link / plain link >= ${targets.rulesRatio}`, measured: of(routed.rulesRps).toFixed(3), met: of(routed.rulesRps) >= targets.rulesRatio },
    { target: `A/B link / plain link >= ${targets.abRatio}`, measured: of(routed.abRps).toFixed(3), met: of(routed.abRps) >= targets.abRatio },
  ]
}

function embeddedVerdicts(embedded: { rps: number; p99Ms: number }, floorRps: number, targets: typeof REDIRECT_TARGETS): Verdict[] {
  const ratio = floorRps > 0 ? embedded.rps / floorRps : 0
  return [
    { target: `embedded default / capture floor >= ${targets.embeddedFloorRatio}`, measured: ratio.toFixed(3), met: ratio >= targets.embeddedFloorRatio },
    { target: `embedded default p99 < ${targets.embeddedP99Ms} ms under full load`, measured: `${embedded.p99Ms.toFixed(2)} ms`, met: embedded.p99Ms < targets.embeddedP99Ms },
  ]
}

export function formatVerdicts(verdicts: Verdict[]): string {
  return verdicts.map((v) => `  ${v.met ? 'met   ' : 'MISSED'}  ${v.target.padEnd(56)} ${v.measured}`).join('\n')
}
