import { describe, expect, test } from 'bun:test'
import { RESERVED_ALIASES } from '../../../core/link-cache'
import { GENERATED_ALIAS_LENGTH, generateAlias, isReservedAlias } from './alias'

describe('generateAlias', () => {
  test('7 characters of [A-Za-z0-9]', () => {
    for (let i = 0; i < 1000; i++) expect(generateAlias()).toMatch(/^[A-Za-z0-9]{7}$/)
    expect(GENERATED_ALIAS_LENGTH).toBe(7)
  })

  test('every character about equally likely (no modulo bias)', () => {
    const counts = new Map<string, number>()
    const samples = 20_000
    for (let i = 0; i < samples; i++) for (const c of generateAlias()) counts.set(c, (counts.get(c) ?? 0) + 1)
    expect(counts.size).toBe(62)
    const expected = (samples * 7) / 62
    // With modulo bias the first 8 characters would be ~3% more frequent; ±10% is far outside noise (~1.1% sd).
    for (const [c, n] of counts) expect(Math.abs(n - expected) / expected, `${c}: ${n} vs ${expected}`).toBeLessThan(0.1)
  })

  test('no two of 10,000 collide', () => {
    const seen = new Set<string>()
    for (let i = 0; i < 10_000; i++) seen.add(generateAlias())
    expect(seen.size).toBe(10_000)
  })
})

describe('isReservedAlias', () => {
  test('reserved words in any case; ordinary aliases not', () => {
    for (const word of RESERVED_ALIASES) expect(isReservedAlias(word)).toBe(true)
    expect(isReservedAlias('Swagger')).toBe(true)
    expect(isReservedAlias('aZ3kP9q')).toBe(false)
  })
})
