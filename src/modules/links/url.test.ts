import { describe, expect, test } from 'bun:test'
import { ApiError } from '../../plugins/errors'
import { MAX_URL_LENGTH, ownHosts, validateDestination } from './url'

const config = { shortDomain: 'sho.rt', shortBaseUrl: 'https://go.sho.rt' }

function codeOf(url: string): string {
  try {
    validateDestination(url, config)
    return 'OK'
  } catch (err) {
    return err instanceof ApiError ? err.code : `unexpected ${String(err)}`
  }
}

describe('validateDestination', () => {
  test('accepts http and https URLs and returns the normalised href', () => {
    expect(validateDestination('https://example.com', config)).toBe('https://example.com/')
    expect(validateDestination('  HTTP://Example.COM/a b?q=1#f  ', config)).toBe('http://example.com/a%20b?q=1#f')
    expect(validateDestination('https://bücher.de/', config)).toBe('https://xn--bcher-kva.de/')
    expect(validateDestination('https://example.com:8080/x', config)).toBe('https://example.com:8080/x')
  })

  test('refuses other schemes, missing hosts, control characters and overlong URLs', () => {
    for (const url of ['javascript:alert(1)', 'data:,x', 'file:///x', 'ftp://a.b', 'ws://a.b', 'https://', 'not a url', 'https://a.b/x\ty', 'https://a.b/x\ny']) {
      expect(codeOf(url), url).toBe('INVALID_URL')
    }
    expect(codeOf('https://example.com/' + 'a'.repeat(MAX_URL_LENGTH))).toBe('INVALID_URL')
    expect(codeOf('https://example.com/' + 'a'.repeat(MAX_URL_LENGTH - 30))).toBe('OK')
  })

  test('refuses its own short domain and the host of the short base URL, in any spelling', () => {
    for (const url of ['https://sho.rt/x', 'http://SHO.RT../x', 'https://sho.rt:1234', 'https://go.sho.rt/a', 'https://GO.sho.rt./a']) {
      expect(codeOf(url), url).toBe('URL_POINTS_TO_SHORT_DOMAIN')
    }
    expect(codeOf('https://notsho.rt/x')).toBe('OK')
    expect(codeOf('https://sho.rt.example.com/x')).toBe('OK')
  })

  test('ownHosts drops the port of the short domain', () => {
    expect(ownHosts({ shortDomain: 'localhost:3001', shortBaseUrl: 'http://localhost:3001' })).toEqual(new Set(['localhost']))
  })
})
