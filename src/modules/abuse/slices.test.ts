// A resting driver waits at least as long as its slice ran before the next: a refresh while the process
// serves takes at most half of the serving thread. Only lower bounds: a loaded machine makes waits longer.
import { describe, expect, test } from 'bun:test'
import { Slices } from './slices'

/** Works until the slice is due, then pauses; how long the slice ran and how long the pause took. */
async function oneSlice(slices: Slices): Promise<{ ran: number; paused: number }> {
  const start = performance.now()
  while (!slices.due()) {}
  const ran = performance.now() - start
  const before = performance.now()
  await slices.pause()
  return { ran, paused: performance.now() - before }
}

describe('Slices', () => {
  test('resting: each pause lasts at least as long as the slice before it ran', async () => {
    const slices = new Slices(20, true)
    await slices.pause()
    for (let i = 0; i < 3; i++) {
      const { ran, paused } = await oneSlice(slices)
      // The slice ran its 20 ms (counted from the end of the last pause, a moment before `ran` starts).
      expect(ran).toBeGreaterThanOrEqual(19)
      expect(paused).toBeGreaterThanOrEqual(19)
    }
  })

  test('run() reaches the end in slices, resting or not', async () => {
    for (const rest of [false, true]) {
      const slices = new Slices(1, rest)
      const seen: number[] = []
      await slices.run(200_000, (from) => {
        let i = from
        for (; i < 200_000; i++) {
          seen.push(i)
          if (slices.due()) return i + 1
        }
        return i
      })
      expect(seen.length).toBe(200_000)
      expect(seen[seen.length - 1]).toBe(199_999)
    }
  })
})
