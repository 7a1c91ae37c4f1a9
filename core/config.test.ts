// The configuration: where short links are served decides what short_url says; each setting's rules;
// and the schema as the one way the environment is read.
import { describe, expect, test } from 'bun:test'
import { parseConfig } from './config'
import { ENV_SCHEMA } from './config-schema'

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

describe('WEBHOOK_LEASE_SECONDS', () => {
  test('a minute unless set; below 15 s (an attempt may take 10) or above an hour is refused naming it', () => {
    expect(parseConfig({}).webhooks.leaseSeconds).toBe(60)
    expect(parseConfig({ WEBHOOK_LEASE_SECONDS: '15' }).webhooks.leaseSeconds).toBe(15)
    expect(() => parseConfig({ WEBHOOK_LEASE_SECONDS: '14' })).toThrow(/WEBHOOK_LEASE_SECONDS/)
    expect(() => parseConfig({ WEBHOOK_LEASE_SECONDS: '3601' })).toThrow(/WEBHOOK_LEASE_SECONDS/)
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

describe('one schema', () => {
  test('parseConfig reads the environment through the schema only: every variable it asks for is declared there', () => {
    const asked = new Set<string>()
    const env = new Proxy({} as Record<string, string | undefined>, {
      get: (_, name) => {
        asked.add(String(name))
        return undefined
      },
    })
    parseConfig(env)
    expect(
      [...asked].filter((name) => !(name in ENV_SCHEMA.properties)),
      [...asked].join(' '),
    ).toEqual([])
    expect(asked.size, [...asked].join(' ')).toBe(Object.keys(ENV_SCHEMA.properties).length)
  })

  test('a blank variable is unset; a secret is taken exactly as given, spaces included', () => {
    const config = parseConfig({ PORT: ' ', DATA_DIR: '', METRICS_TOKEN: ` ${'m'.repeat(32)} ` })
    expect([config.port, config.dataDir, config.metricsToken]).toEqual([3000, './data', ` ${'m'.repeat(32)} `])
  })

  test("a default object is the parse's own: changing one Config leaves the next parse alone", () => {
    parseConfig({}).conversionsPerClick.signup = 99
    expect(parseConfig({}).conversionsPerClick).toEqual({ signup: 1, lead: 1, '*': 100 })
  })

  test('bounds come from the schema: a port above 65535 is refused naming the variable and the bound', () => {
    expect(() => parseConfig({ PORT: '65536' })).toThrow('configuration: PORT must be at most 65535, got 65536')
    expect(() => parseConfig({ REDIRECT_PORT: '0' })).toThrow('configuration: REDIRECT_PORT must be at least 1, got 0')
  })

  test('a set variable is checked even when the feature it belongs to is off', () => {
    expect(() => parseConfig({ STRIPE_PRICE_MONTHLY: 'monthly' })).toThrow('configuration: STRIPE_PRICE_MONTHLY must be a Stripe price id, price_…, got "monthly"')
    expect(() => parseConfig({ GITHUB_TOKEN_URL: 'ftp://x' })).toThrow('configuration: GITHUB_TOKEN_URL must use https: or http:, got ftp:')
  })

  test('TRUSTED_PROXY_HOPS=0 beside TRUSTED_IP_HEADER is still both set', () => {
    expect(() => parseConfig({ TRUSTED_PROXY_HOPS: '0', TRUSTED_IP_HEADER: 'x-real-ip' })).toThrow(/TRUSTED_PROXY_HOPS and TRUSTED_IP_HEADER are both set/)
  })

  test("an error names the variable and never shows a secret's value", () => {
    const secret = 'hunter2-0123456789'
    const cases: Record<string, string>[] = [
      { METRICS_TOKEN: secret },
      { INTERNAL_SECRET: secret },
      { CLICK_SIGNING_KEYS: `k1:${secret}` },
      { STRIPE_SECRET_KEY: `sk_test_${secret}!` },
      { STRIPE_SECRET_KEY: 'sk_test_abc', STRIPE_PRICE_MONTHLY: 'price_m', STRIPE_PRICE_YEARLY: 'price_y', STRIPE_WEBHOOK_SECRET: `whsec_${secret}!` },
      { DATABASE_URL: `mysql://u:${secret}@db/x` },
      { REDIS_URL: `redis://:${secret}@a:1,b:2` },
      { SMTP_URL: `http://u:${secret}@mail` },
    ]
    for (const env of cases) {
      const [name] = Object.keys(env).slice(-1)
      let message = ''
      try {
        parseConfig(env)
      } catch (error) {
        message = (error as Error).message
      }
      expect(message, JSON.stringify(env)).toStartWith(`configuration: ${name} `)
      expect(message, JSON.stringify(env)).not.toContain('hunter2')
    }
  })
})

describe('LOG_LEVEL', () => {
  test('info unless set; any case; anything else is refused naming the levels', () => {
    expect(parseConfig({}).logLevel).toBe('info')
    expect(parseConfig({ LOG_LEVEL: 'DEBUG' }).logLevel).toBe('debug')
    expect(() => parseConfig({ LOG_LEVEL: 'verbose' })).toThrow('configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"')
  })
})

describe('whole numbers', () => {
  test('past 2^53 a number is refused even where the setting names no maximum; a tighter maximum is said first', () => {
    expect(() => parseConfig({ CLICK_BATCH_SIZE: '99999999999999999999' })).toThrow('configuration: CLICK_BATCH_SIZE must be at most 9007199254740991, got 99999999999999999999')
    expect(() => parseConfig({ CLICK_SPOOL_MAX_BYTES: '9999999999999G' })).toThrow('configuration: CLICK_SPOOL_MAX_BYTES must be at most 9007199254740991 bytes, got 9999999999999G')
    expect(() => parseConfig({ TAGS_PER_ACCOUNT: '99999999999999999999' })).toThrow('configuration: TAGS_PER_ACCOUNT must be at most 1000000000, got 99999999999999999999')
  })
})
