// The abuse settings as parseConfig reads them (core/config.ts): defaults, the forms each accepts, and a
// ConfigError naming the variable for anything else.
import { describe, expect, test } from 'bun:test'
import { ConfigError, parseConfig } from '../../../core/config'

describe('BLOCKLIST_* and ALLOWLIST_HOSTS', () => {
  test('unset: no lists, no allowlist, a refresh every hour, no loopback fetches', () => {
    expect(parseConfig({}).blocklists).toEqual({ files: [], urls: [], refreshMs: 3_600_000, allowHttpLoopback: false, allowlistHosts: [] })
  })

  test('comma-separated lists, spaces and empty items ignored', () => {
    const config = parseConfig({ BLOCKLIST_FILES: ' /etc/lists/a.txt, ,/etc/lists/b.csv ', BLOCKLIST_URLS: 'https://lists.example/a.txt,https://lists.example/b.csv?auth-key=k' })
    expect(config.blocklists.files).toEqual(['/etc/lists/a.txt', '/etc/lists/b.csv'])
    expect(config.blocklists.urls).toEqual(['https://lists.example/a.txt', 'https://lists.example/b.csv?auth-key=k'])
  })

  test('BLOCKLIST_REFRESH is a duration from 10s to 7d', () => {
    expect(parseConfig({ BLOCKLIST_REFRESH: '90s' }).blocklists.refreshMs).toBe(90_000)
    expect(parseConfig({ BLOCKLIST_REFRESH: '15M' }).blocklists.refreshMs).toBe(900_000)
    expect(parseConfig({ BLOCKLIST_REFRESH: '2h' }).blocklists.refreshMs).toBe(7_200_000)
    expect(parseConfig({ BLOCKLIST_REFRESH: '7d' }).blocklists.refreshMs).toBe(604_800_000)
    for (const value of ['5s', '8d', '1w', '1.5h', '3600']) {
      expect(() => parseConfig({ BLOCKLIST_REFRESH: value }), value).toThrow(/^configuration: BLOCKLIST_REFRESH must be/)
    }
  })

  test('a list URL must be https; a bad one is named without its query', () => {
    expect(() => parseConfig({ BLOCKLIST_URLS: 'http://lists.example/a.txt?auth-key=secret' })).toThrow('BLOCKLIST_URLS http://lists.example/a.txt must use https')
    expect(() => parseConfig({ BLOCKLIST_URLS: 'http://lists.example/a.txt?auth-key=secret' })).not.toThrow(/secret/)
    expect(() => parseConfig({ BLOCKLIST_URLS: 'ftp://lists.example/a.txt' })).toThrow(/BLOCKLIST_URLS .* must use https/)
    expect(() => parseConfig({ BLOCKLIST_URLS: 'not a url' })).toThrow(ConfigError)
  })

  test('BLOCKLIST_ALLOW_HTTP_LOOPBACK allows http list URLs with a warning; with NODE_ENV=production it is ignored, also with a warning', () => {
    const warnings: string[] = []
    const warn = (line: string) => warnings.push(line)
    const testing = parseConfig({ BLOCKLIST_ALLOW_HTTP_LOOPBACK: 'true', BLOCKLIST_URLS: 'http://127.0.0.1:8080/list' }, { warn })
    expect(testing.blocklists.allowHttpLoopback).toBe(true)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('for tests only')
    const production = parseConfig({ BLOCKLIST_ALLOW_HTTP_LOOPBACK: 'true', NODE_ENV: 'production' }, { warn })
    expect(production.blocklists.allowHttpLoopback).toBe(false)
    expect(warnings[1]).toContain('is ignored because NODE_ENV=production')
    expect(() => parseConfig({ BLOCKLIST_ALLOW_HTTP_LOOPBACK: 'true', NODE_ENV: 'production', BLOCKLIST_URLS: 'http://127.0.0.1:8080/list' }, { warn })).toThrow(/BLOCKLIST_URLS .* must use https/)
    expect(parseConfig({}, { warn }).blocklists.allowHttpLoopback).toBe(false)
    expect(warnings).toHaveLength(3)
  })

  test('ALLOWLIST_HOSTS: host names in any case, IDNs as punycode, a trailing dot dropped; anything else is refused', () => {
    expect(parseConfig({ ALLOWLIST_HOSTS: 'Good.Example., bücher.example,203.0.113.7' }).blocklists.allowlistHosts).toEqual(['good.example', 'xn--bcher-kva.example', '203.0.113.7'])
    for (const value of ['good.example/path', 'good.example:8080', 'user@good.example']) {
      expect(() => parseConfig({ ALLOWLIST_HOSTS: value }), value).toThrow(/^configuration: ALLOWLIST_HOSTS must be comma-separated host names/)
    }
  })
})

describe('ADMIN_EMAILS and REPORTS_TO_FLAG', () => {
  test("operators' addresses lower-cased; no operator unless set", () => {
    expect(parseConfig({}).adminEmails).toEqual([])
    expect(parseConfig({ ADMIN_EMAILS: 'Ops@Example.com, security@example.org' }).adminEmails).toEqual(['ops@example.com', 'security@example.org'])
    expect(() => parseConfig({ ADMIN_EMAILS: 'ops@example.com,not-an-address' })).toThrow('configuration: ADMIN_EMAILS must be comma-separated e-mail addresses, got "not-an-address"')
  })

  test('reports to flag a guest link: 3 unless set, at least 1', () => {
    expect(parseConfig({}).reportsToFlag).toBe(3)
    expect(parseConfig({ REPORTS_TO_FLAG: '5' }).reportsToFlag).toBe(5)
    expect(() => parseConfig({ REPORTS_TO_FLAG: '0' })).toThrow(/REPORTS_TO_FLAG must be at least 1/)
  })
})
