import { describe, expect, test } from 'bun:test'
import { ConfigError, parseConfig } from '../../../core/config'
import { outcomeOf } from './model'
import { auditPath } from './row'

describe('the audit model', () => {
  test('outcomeOf: ok 1xx-3xx, held a 202 with an approval, refused 401/403/429, error the rest', () => {
    const cases: Array<[number, string | null, string]> = [
      [200, null, 'ok'],
      [201, null, 'ok'],
      [204, null, 'ok'],
      [202, null, 'ok'],
      [202, 'apr_x', 'held'],
      [302, null, 'ok'],
      [401, null, 'refused'],
      [403, null, 'refused'],
      [429, null, 'refused'],
      [400, null, 'error'],
      [404, null, 'error'],
      [409, null, 'error'],
      [500, null, 'error'],
      [503, null, 'error'],
      [0, null, 'error'],
    ]
    expect(cases.map(([status, approval]) => outcomeOf(status, approval) as string)).toEqual(cases.map((c) => c[2]))
  })

  test('auditPath keeps the path only: never a query string or fragment', () => {
    expect(auditPath('/api/v1/links/a?access_token=at_x')).toBe('/api/v1/links/a')
    expect(auditPath('/mcp#at_x')).toBe('/mcp')
    expect(auditPath(`/${'p'.repeat(2000)}`).length).toBe(1024)
    expect(auditPath(undefined)).toBe('')
  })
})

describe('audit configuration', () => {
  test('defaults: a spool under DATA_DIR, 1,000 events or 1 s a batch, 256 MiB, no fsync', () => {
    expect(parseConfig({ DATA_DIR: '/var/lib/links' }).audit).toEqual({
      spoolDir: '/var/lib/links/audit-spool',
      batchSize: 1000,
      flushIntervalMs: 1000,
      maxSpoolBytes: 256 * 1024 * 1024,
      fsync: false,
    })
    const set = parseConfig({ AUDIT_SPOOL_DIR: '/spool', AUDIT_BATCH_SIZE: '50', AUDIT_FLUSH_MS: '200', AUDIT_SPOOL_MAX_BYTES: '2G', AUDIT_FSYNC: 'true' })
    expect(set.audit).toEqual({ spoolDir: '/spool', batchSize: 50, flushIntervalMs: 200, maxSpoolBytes: 2 * 1024 ** 3, fsync: true })
  })

  test('a bad value stops the start with a message naming the variable', () => {
    const bad: Array<[string, string]> = [
      ['AUDIT_BATCH_SIZE', '0'],
      ['AUDIT_FLUSH_MS', '5'],
      ['AUDIT_SPOOL_MAX_BYTES', '1K'],
      ['AUDIT_FSYNC', 'maybe'],
    ]
    for (const [name, value] of bad) {
      expect(() => parseConfig({ [name]: value })).toThrow(ConfigError)
      expect(() => parseConfig({ [name]: value })).toThrow(name)
    }
  })
})
