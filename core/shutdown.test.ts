import { describe, expect, test } from 'bun:test'
import { stopOnSignal } from './shutdown'
import { until } from '../test/support/wait'

/** stopOnSignal with the signals and the exit in the test's hands. */
function harness(stop: () => Promise<void>, timeoutMs: number) {
  const listeners = new Map<string, (signal: NodeJS.Signals) => void>()
  const exits: number[] = []
  const lines: string[] = []
  let stops = 0
  stopOnSignal(
    'svc',
    () => {
      stops++
      return stop()
    },
    { timeoutMs, log: (line) => lines.push(line), exit: (code) => void exits.push(code), on: (signal, listener) => void listeners.set(signal, listener) },
  )
  return { send: (signal: NodeJS.Signals) => listeners.get(signal)!(signal), exits, lines, stops: () => stops }
}

describe('stopping on a signal', () => {
  test('SIGTERM drains, then exits 0; a second signal while draining starts nothing more', async () => {
    let finish = () => {}
    const h = harness(() => new Promise<void>((resolve) => (finish = resolve)), 5_000)
    h.send('SIGTERM')
    h.send('SIGINT')
    expect(h.stops()).toBe(1)
    expect(h.exits).toEqual([])
    finish()
    await until(() => h.exits.length > 0, 'an exit after the drain')
    expect(h.exits).toEqual([0])
    expect(h.lines).toEqual(['svc: SIGTERM, stopping'])
  })

  test('a drain that outlasts SHUTDOWN_TIMEOUT_MS ends in exit 1 at the bound, before the drain ends', async () => {
    // The drain ends 40 times later than the bound. Timers fire in the order they are due, so however
    // late a loaded machine runs them, the exit at the bound comes first; waiting for the drain would
    // exit 0 instead.
    let drained = false
    const h = harness(() => new Promise<void>((resolve) => setTimeout(() => ((drained = true), resolve()), 2_000)), 50)
    h.send('SIGTERM')
    await until(() => h.exits.length > 0, 'an exit')
    expect({ exits: h.exits, drained }).toEqual({ exits: [1], drained: false })
  })

  test('a drain that fails exits 1', async () => {
    const h = harness(() => Promise.reject(new Error('disk gone')), 5_000)
    h.send('SIGINT')
    await until(() => h.exits.length > 0, 'an exit after the failed drain')
    expect(h.exits).toEqual([1])
  })
})
