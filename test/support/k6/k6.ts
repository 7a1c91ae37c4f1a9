// The stand-in of `k6` (check, fail, group, sleep) and of `k6/metrics` for the stand-in runs.
import { initOnly, state } from './state'

type Checks<T> = Record<string, ((value: T) => unknown) | boolean>

/** Tallies every named check; a check function that throws fails the iteration, as in k6. */
export function check<T>(value: T, checks: Checks<T>, _tags?: Record<string, string>): boolean {
  let all = true
  for (const [name, test] of Object.entries(checks)) {
    const passed = Boolean(typeof test === 'function' ? test(value) : test)
    const tally = state.checks.get(name) ?? { name, passes: 0, fails: 0 }
    if (passed) tally.passes += 1
    else tally.fails += 1
    state.checks.set(name, tally)
    all &&= passed
  }
  return all
}

export function fail(message = ''): never {
  throw new Error(`fail: ${message}`)
}

export function group<R>(_name: string, body: () => R): R {
  return body()
}

/** Sleeps for real, at most a second: a stand-in run proves requests, not pacing. */
export function sleep(seconds: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.min(seconds, 1) * 1000)
}

export function randomSeed(_seed: number): void {}

const METRIC_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/

function metric(type: 'counter' | 'gauge' | 'rate' | 'trend') {
  return class {
    readonly name: string
    constructor(name: string, _isTime?: boolean) {
      initOnly(`new ${type} metric`)
      if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name "${name}"`)
      if (state.metrics.has(name)) throw new Error(`metric "${name}" declared twice`)
      state.metrics.set(name, { type, samples: [] })
      this.name = name
    }
    add(value: number | boolean, _tags?: Record<string, string>): void {
      if (state.phase === 'init') throw new Error(`${this.name}.add() in the init context: k6 records samples in iterations only`)
      state.metrics.get(this.name)!.samples.push(Number(value))
    }
  }
}

export const Counter = metric('counter')
export const Gauge = metric('gauge')
export const Rate = metric('rate')
export const Trend = metric('trend')
