import { describe, expect, test } from 'bun:test'
import { ConfigError, parseConfig } from './config'
import { parseRedisUrl, passwordsIn, redactedRedisUrl, RedisUrlError } from './redis-url'

describe('REDIS_URL', () => {
  test('one server: handed to ioredis as written', () => {
    expect(parseRedisUrl('redis://:pw@cache.internal:6380/2')).toEqual({ kind: 'server', url: 'redis://:pw@cache.internal:6380/2' })
    expect(parseRedisUrl('rediss://cache.internal')).toEqual({ kind: 'server', url: 'rediss://cache.internal' })
  })

  test('a cluster: every seed node, credentials and TLS; no database but 0', () => {
    expect(parseRedisUrl('rediss+cluster://app:s%40cret@10.0.0.1:7000,10.0.0.2,[::1]:7002')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 6379 },
        { host: '::1', port: 7002 },
      ],
      credentials: { username: 'app', password: 's@cret' },
      tls: true,
    })
    expect(parseRedisUrl('redis+cluster://a:1/').kind).toBe('cluster')
    expect(() => parseRedisUrl('redis+cluster://a:1/3')).toThrow(/database 0 only/)
    expect(() => parseRedisUrl('redis+cluster://a:1?x=1')).toThrow(RedisUrlError)
  })

  test("Sentinel: the sentinels (26379 by default), the primary's name, its database, and the sentinels' own password", () => {
    expect(parseRedisUrl('redis+sentinel://:pw@s1,s2:26380/mymaster/3?sentinel_password=spw')).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26380 },
      ],
      primary: 'mymaster',
      db: 3,
      credentials: { password: 'pw' },
      sentinelCredentials: { username: undefined, password: 'spw' },
      tls: false,
    })
    expect(() => parseRedisUrl('redis+sentinel://s1:26379')).toThrow(/name the primary/)
    expect(() => parseRedisUrl('redis+sentinel://s1/m/x')).toThrow(/primary\/db/)
    expect(() => parseRedisUrl('redis+sentinel://s1/m?password=x')).toThrow(/unknown query parameter "password"/)
  })

  test('what cannot be used says why, without repeating the URL (it may hold a password)', () => {
    for (const bad of ['redis://a:1,b:2', 'http://a:1', 'redis+cluster://', 'redis+cluster://a:99999', 'redis+cluster://a:1,,b', 'redis://a b']) {
      let error: unknown
      try {
        parseRedisUrl(bad)
      } catch (e) {
        error = e
      }
      expect(error, bad).toBeInstanceOf(RedisUrlError)
    }
    expect(() => parseRedisUrl('redis://:hunter2@a:1,b:2')).toThrow(/redis\+cluster:\/\//)
    expect(() => parseRedisUrl('redis+cluster://:hunter2@a:x')).not.toThrow(/hunter2/)
  })

  test('config refuses a bad REDIS_URL at start with a ConfigError, and takes a cluster or Sentinel URL', () => {
    const base = { INTERNAL_SECRET: 'x'.repeat(32), IP_HASH_SECRET: 'y'.repeat(32) }
    expect(() => parseConfig({ ...base, REDIS_URL: 'redis://a:1,b:2' })).toThrow(ConfigError)
    expect(parseConfig({ ...base, REDIS_URL: 'redis+cluster://a:1,b:2' }).redisUrl).toBe('redis+cluster://a:1,b:2')
    expect(parseConfig({ ...base, REDIS_URL: 'redis+sentinel://s1/m' }).redisUrl).toBe('redis+sentinel://s1/m')
  })

  test('redaction keeps the user and the hosts, drops passwords and the query', () => {
    expect(redactedRedisUrl('redis+cluster://app:pw@a:1,b:2/')).toBe('redis+cluster://app@a:1,b:2')
    expect(redactedRedisUrl('redis+sentinel://:pw@s1,s2/m?sentinel_password=spw')).toBe('redis+sentinel://s1,s2/m')
    expect(passwordsIn('redis+sentinel://u:p%40w@s1/m?sentinel_password=spw')).toEqual(['p%40w', 'p@w', 'spw'])
    expect(passwordsIn('redis+cluster://a:1,b:2')).toEqual([])
  })
})
