import { describe, expect, test } from 'bun:test'
import { freePort, portRange, TEST_PORT_RANGE } from './processes'

describe('freePort', () => {
  test('hands out ports of its range, below the kernel ephemeral ports, never the same one twice', async () => {
    const ports = [await freePort(), await freePort(), await freePort()]
    expect(new Set(ports).size).toBe(3)
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(TEST_PORT_RANGE.first)
      expect(port).toBeLessThanOrEqual(TEST_PORT_RANGE.last)
    }
    expect(TEST_PORT_RANGE.last).toBeLessThan(32_768)
  })

  test('passes over a port something listens on', async () => {
    const taken: ReturnType<typeof Bun.serve>[] = []
    try {
      // Hold the next ten ports of the turn: the one handed out is none of them.
      const start = await freePort()
      for (let port = start + 1; port <= Math.min(start + 10, TEST_PORT_RANGE.last); port++) taken.push(Bun.serve({ port, fetch: () => new Response() }))
      const next = await freePort()
      expect(taken.map((s) => s.port)).not.toContain(next)
      expect(() => Bun.serve({ port: next, fetch: () => new Response() }).stop(true)).not.toThrow()
    } finally {
      for (const server of taken) server.stop(true)
    }
  })

  test('TEST_PORTS: "first-last" of at least 100 ports above 1023; anything else is refused with the variable named', () => {
    expect(portRange(undefined)).toEqual({ first: 10_000, last: 22_767 })
    expect(portRange('16384-22767')).toEqual({ first: 16_384, last: 22_767 })
    for (const bad of ['16384', '80-2000', '20000-20010', '30000-70000', 'a-b']) expect(() => portRange(bad)).toThrow(/^TEST_PORTS must be/)
  })
})
