// The redirect bench's verdicts: each target met exactly at its bound and missed just past it, so a run
// that misses one exits non-zero (bench/run.ts).
import { describe, expect, test } from 'bun:test'
import { formatVerdicts, REDIRECT_TARGETS, redirectVerdicts, type RedirectMeasurements } from './redirect-targets'

const passing: RedirectMeasurements = {
  redirectorRps: 90_000,
  floorRps: 100_000,
  pacedP99Ms: 2.5,
  clicksEqualAfterMs: 400,
  servedConsistent: true,
  non3xx: 0,
}
const missed = (m: Partial<RedirectMeasurements>) =>
  redirectVerdicts({ ...passing, ...m })
    .filter((v) => !v.met)
    .map((v) => v.target)

describe('redirectVerdicts', () => {
  test('a run within every target misses none', () => {
    const verdicts = redirectVerdicts(passing)
    expect(
      verdicts.every((v) => v.met),
      JSON.stringify(verdicts),
    ).toBe(true)
    expect(verdicts).toHaveLength(4)
  })

  test('the ratio is against the capture floor: 0.85 of it is met, below is missed', () => {
    expect(missed({ redirectorRps: 85_000 })).toEqual([])
    expect(missed({ redirectorRps: 84_999 })).toEqual([`redirector / capture floor >= ${REDIRECT_TARGETS.floorRatio}`])
    // A floor that served nothing cannot make the redirector pass.
    expect(missed({ floorRps: 0 })).toHaveLength(1)
  })

  test('p99 at half rate must stay below 3 ms', () => {
    expect(missed({ pacedP99Ms: 2.99 })).toEqual([])
    expect(missed({ pacedP99Ms: 3 })).toEqual(["p99 < 3 ms at half the redirector's rate"])
  })

  test('clicks: equal within 2 s, and the served count consistent with what clients saw', () => {
    const clicks = 'clicks recorded = redirects served within 2,000 ms'
    expect(missed({ clicksEqualAfterMs: 2_000 })).toEqual([])
    expect(missed({ clicksEqualAfterMs: 2_001 })).toEqual([clicks])
    expect(missed({ clicksEqualAfterMs: null })).toEqual([clicks])
    expect(missed({ servedConsistent: false })).toEqual([clicks])
  })

  test('the embedded default, when measured: 0.75 of the floor and p99 under 10 ms at full load', () => {
    const embedded = (e: { rps: number; p99Ms: number }) => missed({ embedded: e })
    expect(redirectVerdicts({ ...passing, embedded: { rps: 75_000, p99Ms: 9.99 } })).toHaveLength(6)
    expect(embedded({ rps: 75_000, p99Ms: 9.99 })).toEqual([])
    expect(embedded({ rps: 74_999, p99Ms: 5 })).toEqual([`embedded default / capture floor >= ${REDIRECT_TARGETS.embeddedFloorRatio}`])
    expect(embedded({ rps: 90_000, p99Ms: 10 })).toEqual([`embedded default p99 < ${REDIRECT_TARGETS.embeddedP99Ms} ms under full load`])
  })

  test("the routed links, when measured: each at least 0.9 of the plain links' rate in the same run", () => {
    const rules = `10-rule link / plain link >= ${REDIRECT_TARGETS.rulesRatio}`
    const ab = `A/B link / plain link >= ${REDIRECT_TARGETS.abRatio}`
    const routed = (r: { rulesRps: number; abRps: number }) => missed({ routed: r })
    // Against the redirector's plain rate (90,000 here), not the floor's.
    expect(redirectVerdicts({ ...passing, routed: { rulesRps: 81_000, abRps: 81_000 } })).toHaveLength(6)
    expect(routed({ rulesRps: 81_000, abRps: 90_000 })).toEqual([])
    expect(routed({ rulesRps: 80_999, abRps: 90_000 })).toEqual([rules])
    expect(routed({ rulesRps: 90_000, abRps: 80_999 })).toEqual([ab])
    expect(routed({ rulesRps: 0, abRps: 0 })).toEqual([rules, ab])
    // Plain links that served nothing cannot make the routed ones pass.
    expect(missed({ redirectorRps: 0, routed: { rulesRps: 81_000, abRps: 81_000 } })).toContain(rules)
    const text = formatVerdicts(redirectVerdicts({ ...passing, routed: { rulesRps: 85_500, abRps: 72_000 } }))
    expect(text).toMatch(/met\s+10-rule link \/ plain link >= 0\.9\s+0\.950/)
    expect(text).toMatch(/MISSED\s+A\/B link \/ plain link >= 0\.9\s+0\.800/)
  })

  test('a non-redirect response anywhere is a miss', () => {
    expect(missed({ non3xx: 1 })).toEqual(['every response a redirect'])
  })

  test('the printed lines say met or MISSED with the measured value', () => {
    const text = formatVerdicts(redirectVerdicts({ ...passing, pacedP99Ms: 4.2 }))
    expect(text).toContain('MISSED')
    expect(text).toContain('4.20 ms')
    expect(text.split('\n').filter((l) => l.trimStart().startsWith('met'))).toHaveLength(3)
  })
})
