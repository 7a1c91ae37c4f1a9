import { describe, expect, test } from 'bun:test'
import { ApiError } from '../../plugins/errors'
import { testConfig } from '../../../test/support/api'
import { assertNotOwnHost, parseHostname } from './hostname'

function refusal(run: () => unknown): string {
  try {
    return `accepted ${String(run())}`
  } catch (error) {
    return error instanceof ApiError ? error.code : `unexpected ${String(error)}`
  }
}

describe('parseHostname', () => {
  test('lower-cases, drops the trailing dot and converts international names to punycode', () => {
    expect(parseHostname('Links.Example.COM')).toBe('links.example.com')
    expect(parseHostname(' go.example.com. ')).toBe('go.example.com')
    expect(parseHostname('Bücher.example')).toBe('xn--bcher-kva.example')
    expect(parseHostname('xn--bcher-kva.example')).toBe('xn--bcher-kva.example')
    expect(parseHostname('a-b.c-d.co.uk')).toBe('a-b.c-d.co.uk')
    expect(parseHostname(`${'a'.repeat(63)}.example.com`)).toBe(`${'a'.repeat(63)}.example.com`)
  })

  test('refuses what is not a public host name with INVALID_DOMAIN', () => {
    const bad = [
      '',
      '   ',
      'https://links.example.com',
      'links.example.com:8080',
      'links.example.com/path',
      'user@links.example.com',
      'localhost',
      'com',
      '127.0.0.1',
      '0x7f.1',
      '1.2.3.4',
      '[::1]',
      '::1',
      'under_score.example.com',
      '-lead.example.com',
      'trail-.example.com',
      'a..b.example.com',
      `${'a'.repeat(64)}.example.com`,
      `${'a.'.repeat(127)}com`,
      'example.123',
      'printer.local',
      'app.localhost',
      'svc.internal',
      'x.onion',
      'tab\t.example.com',
      'per%41cent.example.com',
      'a b.example.com',
    ]
    for (const input of bad)
      expect(
        refusal(() => parseHostname(input)),
        JSON.stringify(input),
      ).toBe('INVALID_DOMAIN')
  })
})

describe('assertNotOwnHost', () => {
  const config = testConfig() // SHORT_DOMAIN sho.rt, PUBLIC_API_URL https://api.sho.rt
  test('the short domain, its subdomains and the API host are DOMAIN_RESERVED; others pass', () => {
    for (const host of ['sho.rt', 'www.sho.rt', 'api.sho.rt', 'deep.api.sho.rt']) {
      expect(
        refusal(() => assertNotOwnHost(host, config)),
        host,
      ).toBe('DOMAIN_RESERVED')
    }
    for (const host of ['notsho.rt', 'sho.rt.example.com', 'links.example.com']) {
      expect(
        refusal(() => assertNotOwnHost(host, config)),
        host,
      ).toBe('accepted undefined')
    }
  })
})
