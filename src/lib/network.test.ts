import { describe, expect, test } from 'bun:test'
import { networkOf } from './network'

describe('networkOf', () => {
  test('IPv4: the /24, or the prefix asked for', () => {
    expect(networkOf('198.51.100.7')).toBe('198.51.100.0/24')
    expect(networkOf('198.51.100.250')).toBe('198.51.100.0/24')
    expect(networkOf('198.51.100.7', { v4: 16, v6: 56 })).toBe('198.51.0.0/16')
    expect(networkOf('198.51.100.7', { v4: 32, v6: 56 })).toBe('198.51.100.7/32')
    expect(networkOf('198.51.100.7', { v4: 20, v6: 56 })).toBe('198.51.96.0/20')
  })

  test('IPv6: the /56 in compressed form, brackets and zone dropped', () => {
    expect(networkOf('2001:db8:aa12:3400::1')).toBe('2001:db8:aa12:3400::/56')
    expect(networkOf('2001:db8:aa12:34ff:1:2:3:4')).toBe('2001:db8:aa12:3400::/56')
    expect(networkOf('[2001:DB8:AA12:3455::9]')).toBe('2001:db8:aa12:3400::/56')
    expect(networkOf('fe80::1%eth0', { v4: 24, v6: 64 })).toBe('fe80::/64')
    expect(networkOf('2001:db8:aa12:3400::1', { v4: 24, v6: 48 })).toBe('2001:db8:aa12::/48')
  })

  test('an IPv4-mapped IPv6 address is its IPv4 network', () => {
    expect(networkOf('::ffff:198.51.100.7')).toBe('198.51.100.0/24')
    expect(networkOf('::ffff:c633:6407')).toBe('198.51.100.0/24')
  })

  test('anything else is its own network', () => {
    expect(networkOf('unknown')).toBe('unknown')
    expect(networkOf('')).toBe('')
    expect(networkOf('test-1234')).toBe('test-1234')
  })
})
