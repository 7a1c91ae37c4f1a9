// The redirect bench's per-round figures: each round's ratio pairs runs made seconds apart, and a run whose
// floor changed speed between rounds says so instead of printing medians as if the machine had been steady.
import { describe, expect, test } from 'bun:test'
import { floorSteadiness, roundRatios, summarise, UNSTEADY_FLOOR, type Run, type Server } from './redirect-report'

const server: Server = { label: 'test server', process: 'test' }

/** A wrk run at `rps` for 5 s, the server's process using `cpu` seconds of CPU. */
function run(rps: number, cpu = 1): Run {
  const requests = rps * 5
  return {
    rps, requests, non3xx: 0, errors: {}, durationUs: 5_000_000, cpuSeconds: 0.5,
    latency: { p50: 1000, p99: 4000 }, cores: { test: 0.95 }, cpuUsed: { test: cpu },
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
