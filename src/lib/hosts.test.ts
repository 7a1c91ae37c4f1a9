// Every spelling of "this machine" a destination can use, as the URL parser hands it over.
import { describe, expect, test } from 'bun:test'
import { hostKind, isThisMachine, type HostKind } from './hosts'

const hostOf = (url: string) => new URL(url).hostname

describe('hostKind', () => {
  test.each<[string, HostKind]>([
    ['http://127.0.0.1/x', 'loopback'],
    ['http://127.1/x', 'loopback'],
    ['http://2130706433/x', 'loopback'],
    ['http://0x7f000001/x', 'loopback'],
    ['http://0177.0.0.1/x', 'loopback'],
    ['http://127.255.255.254/x', 'loopback'],
    ['http://[::1]/x', 'loopback'],
    ['http://[0:0:0:0:0:0:0:1]/x', 'loopback'],
    ['http://[::ffff:127.0.0.1]/x', 'loopback'],
    ['http://[::ffff:7f00:1]/x', 'loopback'],
    ['http://localhost/x', 'loopback'],
    ['http://LOCALHOST./x', 'loopback'],
    ['http://api.localhost/x', 'loopback'],
    ['http://0.0.0.0/x', 'unspecified'],
    ['http://0/x', 'unspecified'],
    ['http://[::]/x', 'unspecified'],
    ['http://[::ffff:0.0.0.0]/x', 'unspecified'],
    ['http://169.254.169.254/x', 'link-local'],
    ['http://[fe80::1]/x', 'link-local'],
    ['http://[::ffff:169.254.1.1]/x', 'link-local'],
    ['http://10.1.2.3/x', 'private'],
    ['http://192.168.0.1/x', 'private'],
    ['http://[fd00::1]/x', 'private'],
    ['http://8.8.8.8/x', 'public'],
    ['http://[2001:4860:4860::8888]/x', 'public'],
    ['http://[::ffff:8.8.8.8]/x', 'public'],
    ['https://example.com/x', 'name'],
    // RFC 6890's other special-purpose IPv4 ranges: nothing public answers there.
    ['http://192.0.0.8/x', 'private'],
    ['http://192.0.2.1/x', 'private'],
    ['http://192.88.99.1/x', 'private'],
    ['http://198.18.0.1/x', 'private'],
    ['http://198.19.255.1/x', 'private'],
    ['http://198.51.100.7/x', 'private'],
    ['http://203.0.113.9/x', 'private'],
    ['http://255.255.255.255/x', 'private'],
    ['http://192.0.1.1/x', 'public'],
    ['http://198.20.0.1/x', 'public'],
    ['http://203.0.114.1/x', 'public'],
    // IPv6 that carries an IPv4 address through a translator or relay: public only when that address is.
    ['http://[::ffff:0:127.0.0.1]/x', 'private'],
    ['http://[::ffff:0:8.8.8.8]/x', 'public'],
    ['http://[64:ff9b::10.0.0.1]/x', 'private'],
    ['http://[64:ff9b::7f00:1]/x', 'private'],
    ['http://[64:ff9b::8.8.8.8]/x', 'public'],
    ['http://[2002:a00:1::1]/x', 'private'],
    ['http://[2002:808:808::1]/x', 'public'],
    // Outside global unicast (2000::/3), and its special-purpose blocks.
    ['http://[64:ff9b:1::1]/x', 'private'],
    ['http://[100::1]/x', 'private'],
    ['http://[fec0::1]/x', 'private'],
    ['http://[4000::1]/x', 'private'],
    ['http://[2001::1]/x', 'private'],
    ['http://[2001:2::1]/x', 'private'],
    ['http://[2001:db8::1]/x', 'private'],
    ['http://[3fff::1]/x', 'private'],
    ['http://[2001:200::1]/x', 'public'],
    ['http://[2a00:1450::1]/x', 'public'],
    ['http://[3ffe::1]/x', 'public'],
  ])('%s is %s', (url, kind) => {
    expect(hostKind(hostOf(url))).toBe(kind)
  })

  test('plain addresses as a resolver returns them, dotted IPv4-mapped included', () => {
    expect(hostKind('::ffff:127.0.0.1')).toBe('loopback')
    expect(hostKind('2600:2:3:4:5:6:7.8.9.10')).toBe('public')
    expect(hostKind('1:2:3:4:5:6:7.8.9.10')).toBe('private') // 1::/16 is not global unicast
    expect(hostKind('fe80::1%eth0')).toBe('link-local')
    expect(hostKind('not:an:address::x')).toBe('private')
  })

  test('isThisMachine: loopback, unspecified and link-local only', () => {
    expect(['http://127.1', 'http://[::]', 'http://169.254.0.1', 'http://localhost'].every((u) => isThisMachine(hostOf(u)))).toBe(true)
    expect(['http://10.0.0.1', 'https://example.com', 'http://8.8.8.8'].some((u) => isThisMachine(hostOf(u)))).toBe(false)
  })
})
