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
  ])('%s is %s', (url, kind) => {
    expect(hostKind(hostOf(url))).toBe(kind)
  })

  test('plain addresses as a resolver returns them, dotted IPv4-mapped included', () => {
    expect(hostKind('::ffff:127.0.0.1')).toBe('loopback')
    expect(hostKind('1:2:3:4:5:6:7.8.9.10')).toBe('public')
    expect(hostKind('fe80::1%eth0')).toBe('link-local')
    expect(hostKind('not:an:address::x')).toBe('private')
  })

  test('isThisMachine: loopback, unspecified and link-local only', () => {
    expect(['http://127.1', 'http://[::]', 'http://169.254.0.1', 'http://localhost'].every((u) => isThisMachine(hostOf(u)))).toBe(true)
    expect(['http://10.0.0.1', 'https://example.com', 'http://8.8.8.8'].some((u) => isThisMachine(hostOf(u)))).toBe(false)
  })
})
