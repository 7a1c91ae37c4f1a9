// The arithmetic of bench/webhooks.ts: nearest-rank percentiles, and the sustained-throughput verdict.
import { describe, expect, test } from 'bun:test'
import { percentile, summarize, sustained } from './webhooks'

describe('bench/webhooks.ts figures', () => {
  test('percentiles are nearest-rank over the sorted values', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i) // 100 … 1, unsorted
    expect(summarize(values)).toEqual({ n: 100, p50: 50, p99: 99, max: 100 })
    expect(summarize([7])).toEqual({ n: 1, p50: 7, p99: 7, max: 7 })
    expect(percentile([], 0.5)).toBeNaN()
  })

  test('10,000 events a minute sustained: enough delivered during the load, and the backlog drained in 10 s', () => {
    expect(sustained(20_400, 120_000, 500)).toEqual({ perMinute: 10_200, met: true })
    expect(sustained(19_000, 120_000, 500)).toEqual({ perMinute: 9_500, met: false })
    expect(sustained(20_400, 120_000, 12_000)).toEqual({ perMinute: 10_200, met: false })
  })
})
