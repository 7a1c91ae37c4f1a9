// The redirect bench's per-round figures: each round's ratio pairs runs made seconds apart, and a run whose
// floor changed speed between rounds says so instead of printing medians as if the machine had been steady;
// the routed links are read against the plain links of the same run.
import { describe, expect, test } from 'bun:test'
import { floorSteadiness, roundRatios, routedLine, routedRatios, servingThread, summarise, UNSTEADY_FLOOR, type Run, type Server } from './redirect-report'

const server: Server = { label: 'test server', process: 'test' }

/** A wrk run at `rps` for 5 s, the server's process using `cpu` seconds of CPU. */
function run(rps: number, cpu = 1): Run {
  const requests = rps * 5
  return {
    rps,
    requests,
    non3xx: 0,
    errors: {},
    durationUs: 5_000_000,
    cpuSeconds: 0.5,
    latency: { p50: 1000, p99: 4000 },
    cores: { test: 0.95 },
    cpuUsed: { test: cpu },
  } as unknown as Run
}

describe('roundRatios', () => {
  test('pairs each round with the floor of the same round, not the medians', () => {
    const floor = summarise([run(27_000), run(55_000), run(57_000)], server)
    const redirector = summarise([run(29_000), run(45_000), run(45_600)], server)
    const ratios = roundRatios(redirector, floor)
    expect(ratios.map((x) => Number(x.toFixed(3)))).toEqual([1.074, 0.818, 0.8])
    // The ratio of the medians (45,000 / 55,000) is none of the rounds' own.
    expect(redirector.rps / floor.rps).toBeCloseTo(0.818, 3)
  })
})

describe('floorSteadiness', () => {
  test('a floor within its bound over the rounds gives no warning', () => {
    const steady = floorSteadiness(summarise([run(50_000), run(46_000), run(48_000)], server))
    expect(steady).toEqual({ slowest: 46_000, fastest: 50_000, warning: null })
  })

  test('a floor that halved between rounds is reported with its range', () => {
    const unsteady = floorSteadiness(summarise([run(27_671), run(55_423), run(56_834)], server))
    expect(unsteady.slowest).toBe(27_671)
    expect(unsteady.fastest).toBe(56_834)
    expect(unsteady.warning).toStartWith('the capture floor ran at 27,671-56,834 req/s over the rounds (slowest / fastest 0.49)')
  })

  test('the bound itself is steady, just below it is not', () => {
    expect(floorSteadiness(summarise([run(80_000), run(100_000)], server)).warning).toBeNull()
    expect(UNSTEADY_FLOOR).toBe(0.8)
    expect(floorSteadiness(summarise([run(79_990), run(100_000)], server)).warning).not.toBeNull()
  })
})

describe('routedRatios', () => {
  const redirect: Server = { label: 'redirector', process: 'redirect' }
  /** A redirector run at `rps` whose serving thread used `servingUs` µs a request. */
  const redirectorRun = (rps: number, servingUs: number): Run => {
    const requests = rps * 5
    return {
      rps,
      requests,
      non3xx: 0,
      errors: {},
      durationUs: 5_000_000,
      cpuSeconds: 0.5,
      latency: { p50: 1000, p99: 4000 },
      cores: { redirect: 1, [servingThread('redirect')]: 0.9 },
      cpuUsed: { redirect: (requests * servingUs * 1.2) / 1e6, [servingThread('redirect')]: (requests * servingUs) / 1e6 },
    } as unknown as Run
  }

  test('the routed links over the plain links of the same run: medians, each round, serving-thread CPU added', () => {
    const plain = summarise([redirectorRun(40_000, 20), redirectorRun(50_000, 20), redirectorRun(44_000, 20)], redirect)
    const rules = summarise([redirectorRun(38_000, 22), redirectorRun(45_000, 22), redirectorRun(41_800, 22)], redirect)
    const ab = summarise([redirectorRun(36_000, 21), redirectorRun(50_000, 21), redirectorRun(44_000, 21)], redirect)
    const r = routedRatios(plain, rules, ab)
    // 41,800 / 44,000 and 44,000 / 44,000: the ratio of the medians, what the targets read.
    expect(r.rules.toPlain).toBeCloseTo(0.95, 6)
    expect(r.ab.toPlain).toBeCloseTo(1, 6)
    expect(r.rules.byRound.map((x) => Number(x.toFixed(3)))).toEqual([0.95, 0.9, 0.95])
    expect(r.ab.byRound.map((x) => Number(x.toFixed(3)))).toEqual([0.9, 1, 1])
    expect(r.rules.servingCpuUsAdded).toBeCloseTo(2, 6)
    expect(r.ab.servingCpuUsAdded).toBeCloseTo(1, 6)
    expect(routedLine(r)).toBe(
      'routed links over the plain links: 10 rules 0.950 (per round 0.950 0.900 0.950; serving thread +2.00 µs/req), ' + 'A/B 1.000 (per round 0.900 1.000 1.000; serving thread +1.00 µs/req)',
    )
  })
})
