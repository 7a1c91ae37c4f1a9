// Where short links are served decides what short_url says.
import { describe, expect, test } from 'bun:test'
import { parseConfig } from './config'

describe('short_url of the one-process start', () => {
  test('with real engines configured, npm start still names PORT, where it serves the links', () => {
    const env = { DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', REDIS_URL: 'redis://127.0.0.1:6379', INTERNAL_SECRET: 'x'.repeat(32), IP_HASH_SECRET: 'y'.repeat(32), PORT: '4100' }
    expect(parseConfig(env, { singleProcess: true }).shortBaseUrl).toBe('http://localhost:4100')
    // The stand-alone API (its redirector is another process) keeps REDIRECT_PORT's default.
    expect(parseConfig(env).shortBaseUrl).toBe('http://localhost:3001')
  })
})

describe('CIMD_ALLOW_HTTP_LOOPBACK', () => {
  test('off by default and silent; true turns it on with one warning; anything else names the variable', () => {
    const warnings: string[] = []
    const warn = (line: string) => warnings.push(line)
    expect(parseConfig({}, { warn }).cimdAllowHttpLoopback).toBe(false)
    expect(parseConfig({ CIMD_ALLOW_HTTP_LOOPBACK: 'false' }, { warn }).cimdAllowHttpLoopback).toBe(false)
    expect(warnings).toEqual([])
    expect(parseConfig({ CIMD_ALLOW_HTTP_LOOPBACK: 'true' }, { warn }).cimdAllowHttpLoopback).toBe(true)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('for tests only')
    expect(() => parseConfig({ CIMD_ALLOW_HTTP_LOOPBACK: 'yes' })).toThrow(/CIMD_ALLOW_HTTP_LOOPBACK/)
  })
})

describe('operations settings', () => {
  test('HOST: 127.0.0.1 unless set; an address or a name', () => {
    expect(parseConfig({}).host).toBe('127.0.0.1')
    expect(parseConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0')
    expect(parseConfig({ HOST: '::' }).host).toBe('::')
    expect(() => parseConfig({ HOST: 'http://0.0.0.0' })).toThrow(/HOST/)
  })

  test('METRICS_TOKEN: off unless set, and then at least 32 characters', () => {
    expect(parseConfig({}).metricsToken).toBeUndefined()
    expect(() => parseConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be at least 32 characters/)
  })

  test('retention: for ever unless set; raw clicks at least the 30-day attribution window and a day', () => {
    expect(parseConfig({}).retention).toEqual({ clicks: 0, audit: 0 })
    expect(parseConfig({ CLICK_RETENTION_DAYS: '90', AUDIT_RETENTION_DAYS: '365' }).retention).toEqual({ clicks: 90, audit: 365 })
    expect(() => parseConfig({ CLICK_RETENTION_DAYS: '30' })).toThrow(/CLICK_RETENTION_DAYS must be 0 \(keep for ever\) or at least 31 days/)
    expect(() => parseConfig({ AUDIT_RETENTION_DAYS: '-1' })).toThrow(/AUDIT_RETENTION_DAYS/)
  })
})

describe('DATABASE_REPLICA_URL', () => {
  const engines = { DATABASE_URL: 'postgres://u@10.0.0.1:5432/db', INTERNAL_SECRET: 'x'.repeat(32), IP_HASH_SECRET: 'y'.repeat(32) }

  test('unset by default; a postgres URL beside DATABASE_URL', () => {
    expect(parseConfig(engines).databaseReplicaUrl).toBeUndefined()
    expect(parseConfig({ ...engines, DATABASE_REPLICA_URL: 'postgres://u@10.0.0.2:5432/db' }).databaseReplicaUrl).toBe('postgres://u@10.0.0.2:5432/db')
    expect(() => parseConfig({ ...engines, DATABASE_REPLICA_URL: 'redis://10.0.0.2:6379' })).toThrow(/DATABASE_REPLICA_URL must use postgres: or postgresql:/)
  })

  test('without DATABASE_URL it is refused, naming both: PGlite has no replica', () => {
    expect(() => parseConfig({ DATABASE_REPLICA_URL: 'postgres://u@10.0.0.2:5432/db' })).toThrow(/DATABASE_REPLICA_URL needs DATABASE_URL/)
  })
})

describe('DATABASE_PREPARED_STATEMENTS', () => {
  test('on unless set to false; anything but true or false is refused', () => {
    expect(parseConfig({}).databasePreparedStatements).toBe(true)
    expect(parseConfig({ DATABASE_PREPARED_STATEMENTS: 'false' }).databasePreparedStatements).toBe(false)
    expect(parseConfig({ DATABASE_PREPARED_STATEMENTS: 'true' }).databasePreparedStatements).toBe(true)
    expect(() => parseConfig({ DATABASE_PREPARED_STATEMENTS: 'off' })).toThrow(/DATABASE_PREPARED_STATEMENTS must be true or false/)
  })
})

describe('CLICKHOUSE_CLUSTER', () => {
  const server = { CLICKHOUSE_URL: 'http://default:pw@ch-1:8123', INTERNAL_SECRET: 'x'.repeat(32), IP_HASH_SECRET: 'y'.repeat(32) }

  test('unset: one server, as before; set: the cluster name beside CLICKHOUSE_URL', () => {
    expect(parseConfig(server).clickhouseCluster).toBeUndefined()
    expect(parseConfig({ ...server, CLICKHOUSE_CLUSTER: 'links_2x2' }).clickhouseCluster).toBe('links_2x2')
  })

  test('refused without CLICKHOUSE_URL (chDB is one process), and unless a plain identifier (it is written into DDL)', () => {
    expect(() => parseConfig({ CLICKHOUSE_CLUSTER: 'links' })).toThrow(/CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL/)
    for (const bad of ['links; DROP TABLE clicks_v1', "links'", '2links', 'my-cluster']) {
      expect(() => parseConfig({ ...server, CLICKHOUSE_CLUSTER: bad }), bad).toThrow(/CLICKHOUSE_CLUSTER must be a cluster name/)
    }
  })
})
