import { describe, expect, test } from 'bun:test'
import { singleFlight, singleFlightPer } from './single-flight'

/** A call whose result the test decides, counting how often it was started. */
function controlled<V>() {
  const starts: Array<{ resolve: (v: V) => void; reject: (e: unknown) => void }> = []
  const run = () => new Promise<V>((resolve, reject) => starts.push({ resolve, reject }))
  return { starts, run }
}

describe('singleFlight', () => {
  test('callers of one key while its call runs share that call and its result', async () => {
    const flight = singleFlight<number>()
    const { starts, run } = controlled<number>()
    const a = flight('k', run)
    const b = flight('k', run)
    expect(starts).toHaveLength(1)
    starts[0]!.resolve(7)
    expect(await Promise.all([a, b])).toEqual([7, 7])
  })

  test('different keys run apart', async () => {
    const flight = singleFlight<string>()
    const { starts, run } = controlled<string>()
    const a = flight('a', run)
    const b = flight('b', run)
    expect(starts).toHaveLength(2)
    starts[0]!.resolve('A')
    starts[1]!.resolve('B')
    expect([await a, await b]).toEqual(['A', 'B'])
  })

  test('a caller after the call settled starts a new one: no result is kept', async () => {
    const flight = singleFlight<number>()
    const { starts, run } = controlled<number>()
    const first = flight('k', run)
    starts[0]!.resolve(1)
    expect(await first).toBe(1)
    const second = flight('k', run)
    expect(starts).toHaveLength(2)
    starts[1]!.resolve(2)
    expect(await second).toBe(2)
  })

  test('a failure reaches every caller of that call and is not kept either', async () => {
    const flight = singleFlight<number>()
    const { starts, run } = controlled<number>()
    const a = flight('k', run)
    const b = flight('k', run)
    starts[0]!.reject(new Error('down'))
    await expect(a).rejects.toThrow('down')
    await expect(b).rejects.toThrow('down')
    const c = flight('k', run)
    expect(starts).toHaveLength(2)
    starts[1]!.resolve(3)
    expect(await c).toBe(3)
  })
})

describe('singleFlightPer', () => {
  test('the same key under two owners runs twice', async () => {
    const flight = singleFlightPer<string>()
    const { starts, run } = controlled<string>()
    const [one, two] = [{}, {}]
    const a = flight(one, 'k', run)
    const b = flight(two, 'k', run)
    const c = flight(one, 'k', run)
    expect(starts).toHaveLength(2)
    starts[0]!.resolve('first')
    starts[1]!.resolve('second')
    expect([await a, await b, await c]).toEqual(['first', 'second', 'first'])
  })
})
