// The pure helpers of bench/blocklist-load.ts: the synthetic list's names and versions, the phase a
// request falls in, and the summary of a phase.
import { describe, expect, test } from 'bun:test'
import { listHost } from '../src/modules/abuse/normalize'
import { hostName, listBody, phaseOf, summarise, type Sample, type Window } from './blocklist-load'

describe('the synthetic list', () => {
  test('names are distinct, valid hosts, and generation 1 renames', () => {
    const names = Array.from({ length: 20_000 }, (_, i) => hostName(i))
    expect(new Set(names).size).toBe(names.length)
    for (const name of names.slice(0, 200)) expect(listHost(name), name).toBe(name)
    for (let i = 0; i < 200; i++) expect(hostName(i, 1), String(i)).not.toBe(hostName(i))
  })

  test('two versions differ in exactly the replaced names', () => {
    const [a, b] = [0, 1].map((g) =>
      new TextDecoder()
        .decode(listBody(1000, 100, g as 0 | 1))
        .trim()
        .split('\n')
        .slice(1),
    )
    const inA = new Set(a)
    const added = b!.filter((name) => !inA.has(name))
    expect(a!.length).toBe(1000)
    expect(added).toEqual(Array.from({ length: 10 }, (_, k) => hostName(k * 100, 1)))
  })
})

describe('phaseOf', () => {
  const windows: Window[] = [
    { from: 1000, to: 2000, phase: 'refresh' },
    { from: 2000, to: 5000, phase: 'takedown' },
  ]
  const at = (start: number, ms: number): Sample => ({ at: start, ms, status: 200 })

  test('a request that overlaps a refresh is in it, even when it overlaps the takedown too', () => {
    expect(phaseOf(at(900, 200), windows)).toBe('refresh')
    expect(phaseOf(at(1900, 300), windows)).toBe('refresh')
  })

  test('after the swap it is the takedown; outside both, quiet', () => {
    expect(phaseOf(at(2000, 10), windows)).toBe('takedown')
    expect(phaseOf(at(800, 200), windows)).toBe('quiet')
    expect(phaseOf(at(5000, 10), windows)).toBe('quiet')
  })
})

test('summarise: nearest-rank percentiles and answers by status and code', () => {
  const samples: Sample[] = Array.from({ length: 100 }, (_, i) => ({ at: 0, ms: i + 1, status: 200 }))
  samples.push({ at: 0, ms: 500, status: 500, error: 'INTERNAL_ERROR' })
  const summary = summarise(samples)
  expect(summary).toMatchObject({ requests: 101, p50Ms: 51, p99Ms: 100, maxMs: 500 })
  expect(summary.statuses).toEqual({ '200': 100, '500 INTERNAL_ERROR': 1 })
})
