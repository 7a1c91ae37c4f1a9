import { describe, expect, test } from 'bun:test'
import { ApiError } from '../../plugins/errors'
import { MAX_URL_LENGTH } from './model'
import { ownHosts, validateDestination } from './url'

const config = { shortDomain: 'sho.rt', shortBaseUrl: 'https://go.sho.rt', publicApiUrl: 'https://api.sho.rt' }

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
    expect(codeOf(`https://example.com/${'a'.repeat(MAX_URL_LENGTH)}`)).toBe('INVALID_URL')
    expect(codeOf(`https://example.com/${'a'.repeat(MAX_URL_LENGTH - 30)}`)).toBe('OK')
  })

  test('refuses a user name or password before the host, in any spelling', () => {
    for (const url of ['https://paypal.com@evil.example/', 'https://a:b@x.example/', 'https://:pw@x.example/', 'http://user%40mail@x.example/', 'HTTPS://PayPal.com@Evil.Example/login']) {
      expect(codeOf(url), url).toBe('INVALID_URL')
    }
    // An @ in the path or the query is no user-info.
    expect(codeOf('https://example.com/@team')).toBe('OK')
    expect(codeOf('https://example.com/?to=a@b.example')).toBe('OK')
  })

  test('refuses its own short domain and the host of the short base URL, in any spelling', () => {
    for (const url of ['https://sho.rt/x', 'http://SHO.RT../x', 'https://sho.rt:1234', 'https://go.sho.rt/a', 'https://GO.sho.rt./a']) {
      expect(codeOf(url), url).toBe('DESTINATION_LOOPS')
    }
    expect(codeOf('https://notsho.rt/x')).toBe('OK')
    expect(codeOf('https://sho.rt.example.com/x')).toBe('OK')
  })

  test('ownHosts drops the port of the short domain and holds the API host', () => {
    expect(ownHosts({ shortDomain: 'localhost:3001', shortBaseUrl: 'http://localhost:3001', publicApiUrl: 'http://localhost:3000' })).toEqual(new Set(['localhost']))
    expect(ownHosts(config)).toEqual(new Set(['sho.rt', 'go.sho.rt', 'api.sho.rt']))
  })

  test.each([
    'http://127.0.0.1:3000/x',
    'http://[::1]:3000/x',
    'http://0.0.0.0/x',
    'http://127.1/x',
    'http://2130706433/x',
    'http://0x7f000001/x',
    'http://[::ffff:127.0.0.1]/x',
    'http://169.254.169.254/latest',
    'http://localhost:3001/x',
    'https://api.sho.rt/api/v1/links',
    'https://go.sho.rt/abc',
    'http://SHO.RT./x',
  ])('refuses %s: it leads back to this service (DESTINATION_LOOPS)', (url) => {
    expect(codeOf(url)).toBe('DESTINATION_LOOPS')
  })
})
