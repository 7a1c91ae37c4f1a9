import { describe, expect, test } from 'bun:test'
import { stopOnSignal } from './shutdown'

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
    await Bun.sleep(1)
    expect(h.exits).toEqual([0])
    expect(h.lines).toEqual(['svc: SIGTERM, stopping'])
  })

  test('a drain that outlasts SHUTDOWN_TIMEOUT_MS ends in exit 1 at the bound, not later', async () => {
    const h = harness(() => new Promise<void>(() => {}), 50)
    const started = performance.now()
    h.send('SIGTERM')
    while (h.exits.length === 0 && performance.now() - started < 2_000) await Bun.sleep(5)
    expect(h.exits).toEqual([1])
    expect(performance.now() - started).toBeLessThan(1_000)
  })

  test('a drain that fails exits 1', async () => {
    const h = harness(() => Promise.reject(new Error('disk gone')), 5_000)
    h.send('SIGINT')
    await Bun.sleep(1)
    expect(h.exits).toEqual([1])
  })
})
