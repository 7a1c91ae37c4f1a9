// Matching reads one spelling of a destination: each respelling a writer could use to get around a list
// must come out as the listed one.
import { describe, expect, test } from 'bun:test'
import { canonicalHost, decodeUnreserved, hasUserInfo, listHost, matchKey } from './normalize'

const keyOf = (url: string) => matchKey(new URL(url))

describe('hasUserInfo', () => {
  test('a user, or a user and password, before the host is user-info', () => {
    expect(hasUserInfo('https://paypal.com@evil.example/')).toBe(true)
    expect(hasUserInfo('https://a:b@x.example/')).toBe(true)
    expect(hasUserInfo(new URL('https://:secret@x.example/'))).toBe(true)
  })

  test('an @ in the path or query, or no @ at all, is not; nor is a text that is no URL', () => {
    expect(hasUserInfo('https://x.example/@someone?by=a@b')).toBe(false)
    expect(hasUserInfo('https://x.example/')).toBe(false)
    expect(hasUserInfo('not a url @ all')).toBe(false)
  })
})

describe('matchKey: the host', () => {
  test('upper case and a trailing dot read as the plain name', () => {
    expect(keyOf('https://EVIL.example./x').host).toBe('evil.example')
    expect(keyOf('https://Evil.Example../x').host).toBe('evil.example')
  })

  test('an IDN reads as its punycode, the same as the xn-- form', () => {
    expect(keyOf('https://bücher.example/').host).toBe('xn--bcher-kva.example')
    expect(keyOf('https://XN--BCHER-KVA.example/').host).toBe('xn--bcher-kva.example')
  })

  test('a percent-encoded host reads decoded', () => {
    expect(keyOf('https://%65vil.example/').host).toBe('evil.example')
  })

  test('numeric IPv4 spellings read as the dotted address', () => {
    for (const url of ['http://0x7f000001/', 'http://2130706433/', 'http://0177.0.0.1/', 'http://127.1/', 'http://0x7f.0.0.1/']) {
      expect(keyOf(url).host, url).toBe('127.0.0.1')
    }
  })

  test('an IPv4-mapped IPv6 address reads as its IPv4 address; other IPv6 stays bracketed and compressed', () => {
    expect(keyOf('http://[::ffff:203.0.113.7]/').host).toBe('203.0.113.7')
    expect(keyOf('http://[2001:DB8:0:0::7]/').host).toBe('[2001:db8::7]')
  })
})

describe('matchKey: the path', () => {
  test('dot segments are removed, in their plain and percent-encoded forms', () => {
    expect(keyOf('https://x.example/a/../b').path).toBe('/b')
    expect(keyOf('https://x.example/a/./b/%2e%2E/c').path).toBe('/a/c')
  })

  test('escaped unreserved characters are decoded in the path and query, other escapes keep an upper-case hex', () => {
    expect(keyOf('https://x.example/%65vil/%7Euser?q=%41%2f').path).toBe('/evil/~user?q=A%2F')
  })

  test('the fragment, scheme and port are not part of it', () => {
    expect(keyOf('http://x.example:8080/a?b#frag')).toEqual({ host: 'x.example', path: '/a?b' })
  })
})

describe('matchKey reads the href as the getters would', () => {
  test('user-info, ports, IPv6 literals, queries and fragments', () => {
    const urls = [
      'https://evil.example/',
      'http://evil.example:8080/a/b?c=d#e',
      'https://u:p%40ss@evil.example:444/x',
      'https://paypal.com@evil.example/login',
      'http://[2001:db8::1]:8080/p?q',
      'http://user@[2001:db8::1]/',
      'https://[::ffff:203.0.113.7]/',
      'https://bücher.example/%7Ea?b#c?d',
      'https://x.example/a?',
      'https://x.example?q=1',
      'https://x.example#frag',
      'http://0x7f000001:80/',
      'https://EVIL.example./%2e%2E/a',
      'ftp://files.example/pub/',
    ]
    for (const text of urls) {
      const url = new URL(text)
      const fromGetters = { host: canonicalHost(url.hostname), path: decodeUnreserved(url.pathname + url.search) }
      expect(matchKey(url), text).toEqual(fromGetters)
    }
  })
})

describe('decodeUnreserved', () => {
  test('an escape cut off at the end or with a non-hex digit stays as it is', () => {
    expect(decodeUnreserved('/a%6')).toBe('/a%6')
    expect(decodeUnreserved('/a%zz%61')).toBe('/a%zza')
  })
})

describe('listHost', () => {
  test('names, IDNs, and IPv4 and IPv6 addresses in any spelling come out as matchKey spells them', () => {
    expect(listHost('EVIL.Example.')).toBe('evil.example')
    expect(listHost('bücher.example')).toBe('xn--bcher-kva.example')
    expect(listHost('0x7f000001')).toBe('127.0.0.1')
    expect(listHost('2001:DB8::7')).toBe('[2001:db8::7]')
    expect(listHost('[::ffff:203.0.113.7]')).toBe('203.0.113.7')
    expect(listHost('under_score.example')).toBe('under_score.example')
  })

  test('a name whose last label is a number goes through the URL parser (it is an IPv4 address)', () => {
    expect(listHost('10.1')).toBe('10.0.0.1')
    expect(listHost('host.0x10')).toBeNull()
  })

  test('anything more than a host is not one', () => {
    for (const text of ['', '.', 'evil.example/x', 'evil.example:8080', 'user@evil.example', 'a b.example', 'evil.example?x']) {
      expect(listHost(text), JSON.stringify(text)).toBeNull()
    }
  })
})
