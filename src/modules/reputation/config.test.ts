// SAFE_DNS_URL, WEB_RISK_*, REPUTATION_ALLOW_HTTP_LOOPBACK as core/config.ts reads them: off unless
// configured, https unless the test setting allows http on loopback, and that setting ignored (with a
// warning) under NODE_ENV=production.
import { describe, expect, test } from 'bun:test'
import { ConfigError, parseConfig } from '../../../core/config'
import { DOCUMENT_ENV } from '../../../scripts/generate-client'

function parse(env: Record<string, string>) {
  const warnings: string[] = []
  const config = parseConfig({ ...DOCUMENT_ENV, ...env }, { warn: (line) => warnings.push(line) })
  return { reputation: config.reputation, warnings }
}

const refusal = (env: Record<string, string>) => {
  try {
    parse(env)
  } catch (error) {
    return error instanceof ConfigError ? error.message : `not a ConfigError: ${error}`
  }
  return 'accepted'
}

describe('reputation settings', () => {
  test('unset: no check and no warning', () => {
    expect(parse({})).toEqual({ reputation: { safeDnsUrl: undefined, webRisk: undefined, allowHttpLoopback: false }, warnings: [] })
  })

  test('the Web Risk key turns the lookup on, at WEB_RISK_URL or Google', () => {
    expect(parse({ WEB_RISK_KEY: 'k1' }).reputation.webRisk).toEqual({ url: 'https://webrisk.googleapis.com/v1/uris:search', key: 'k1' })
    expect(parse({ WEB_RISK_KEY: 'k1', WEB_RISK_URL: 'https://risk.example/v1/uris:search' }).reputation.webRisk).toEqual({ url: 'https://risk.example/v1/uris:search', key: 'k1' })
  })

  test('http is refused without REPUTATION_ALLOW_HTTP_LOOPBACK, naming the variable and not the query', () => {
    expect(refusal({ SAFE_DNS_URL: 'http://127.0.0.1:5353/dns-query' })).toBe(
      'configuration: SAFE_DNS_URL http://127.0.0.1:5353/dns-query must use https (http only on loopback with REPUTATION_ALLOW_HTTP_LOOPBACK=true, for tests)',
    )
    const message = refusal({ WEB_RISK_URL: 'http://risk.example/search?key=secret-in-query', WEB_RISK_KEY: 'k' })
    expect(message).toStartWith('configuration: WEB_RISK_URL http://risk.example/search must use https')
    expect(message).not.toContain('secret-in-query')
    expect(refusal({ SAFE_DNS_URL: 'ftp://resolver.example/' })).toBe('configuration: SAFE_DNS_URL must use https: or http:, got ftp:')
  })

  test('with REPUTATION_ALLOW_HTTP_LOOPBACK http is accepted, with a warning; under NODE_ENV=production the setting is ignored', () => {
    const allowed = parse({ SAFE_DNS_URL: 'http://127.0.0.1:5353/dns-query', REPUTATION_ALLOW_HTTP_LOOPBACK: 'true' })
    expect(allowed.reputation).toEqual({ safeDnsUrl: 'http://127.0.0.1:5353/dns-query', webRisk: undefined, allowHttpLoopback: true })
    expect(allowed.warnings).toEqual([expect.stringContaining('REPUTATION_ALLOW_HTTP_LOOPBACK=true is for tests only')])
    const production = parse({ REPUTATION_ALLOW_HTTP_LOOPBACK: 'true', NODE_ENV: 'production' })
    expect(production.reputation.allowHttpLoopback).toBe(false)
    expect(production.warnings).toEqual([expect.stringContaining('REPUTATION_ALLOW_HTTP_LOOPBACK=true is ignored because NODE_ENV=production')])
    expect(refusal({ SAFE_DNS_URL: 'http://127.0.0.1:5353/dns-query', REPUTATION_ALLOW_HTTP_LOOPBACK: 'true', NODE_ENV: 'production' })).toStartWith('configuration: SAFE_DNS_URL')
  })
})
