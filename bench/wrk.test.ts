// The runner's wrk plumbing: the generated Lua runs in the real wrk and reports what the runner parses.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startBaseline } from './baseline'
import { durationMs, parseWrkResult, runWrk, writeWrkScript } from './wrk'

const dir = mkdtempSync(join(tmpdir(), 'wrk-test-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('durationMs', () => {
  test('reads the forms wrk and k6 take', () => {
    expect(durationMs('10s')).toBe(10_000)
    expect(durationMs('500ms')).toBe(500)
    expect(durationMs('2m')).toBe(120_000)
    expect(durationMs('3')).toBe(3_000)
    expect(() => durationMs('ten')).toThrow('not a duration')
  })
})

describe('parseWrkResult', () => {
  const line = (counted: boolean) =>
    JSON.stringify({
      requests: 1000,
      sent: 1064,
      duration_us: 2_000_000,
      counted,
      redirects: counted ? 990 : 0,
      others: counted ? 10 : 0,
      errors: { connect: 0, read: 0, write: 0, status: 7, timeout: 0 },
      latency: { p50: 400, p90: 800, p99: 2000, p999: 4000, max: 9000, mean: 450.5 },
    })

  test('without status counting, non-3xx are the 4xx/5xx wrk saw', () => {
    const r = parseWrkResult(line(false))
    expect(r.rps).toBe(500)
    expect(r.non3xx).toBe(7)
    expect(r.redirects).toBe(993)
  })

  test('with status counting, the Lua counts are exact', () => {
    const r = parseWrkResult(line(true))
    expect(r.non3xx).toBe(10)
    expect(r.redirects).toBe(990)
  })
})

// Needs the wrk binary (Debian package `wrk`), which only the benchmark needs: .ci/run does not install
// it, so on a fresh CI machine this half is skipped; where wrk exists it runs.
describe.skipIf(!Bun.which('wrk'))('generated script against the baseline', () => {
  const server = startBaseline()
  afterAll(() => server.stop(true))
  const url = `http://127.0.0.1:${server.port}`
  const aliases = ['aaaa1111', 'bbbb2222', 'cccc3333']

  test('as fast as possible: every response a redirect, latency reported in microseconds', async () => {
    const script = writeWrkScript(join(dir, 'fast.lua'), { aliases })
    const r = await runWrk({ url, script, duration: '1s', connections: 4, threads: 1, logFile: join(dir, 'wrk.log'), label: 'fast' })
    expect(r.requests, JSON.stringify(r)).toBeGreaterThan(100)
    expect(r.redirects).toBe(r.requests)
    expect(r.sent).toBeGreaterThanOrEqual(r.requests)
    expect(r.latency.p50).toBeGreaterThan(0)
    expect(r.latency.p99).toBeGreaterThanOrEqual(r.latency.p50)
  })

  test('paced with counted statuses: about connections / delay requests a second', async () => {
    const script = writeWrkScript(join(dir, 'paced.lua'), { aliases, delayMs: 20, countStatuses: true })
    const r = await runWrk({ url, script, duration: '1s', connections: 2, threads: 1, logFile: join(dir, 'wrk.log'), label: 'paced' })
    // 2 connections pausing 20 ms on average: about 100 a second (the pauses are random, so a second
    // may hold a few more), where the same server unpaced answers thousands. The bounds say "paced, and
    // still running" with room for a loaded machine, not a timing.
    expect(r.rps, JSON.stringify(r)).toBeGreaterThan(10)
    expect(r.rps, JSON.stringify(r)).toBeLessThan(300)
    expect(r.non3xx).toBe(0)
    expect(r.redirects).toBe(r.requests)
  })
})
