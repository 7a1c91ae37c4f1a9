import { describe, expect, test } from 'bun:test'
import { clientAddress, entryFromRight, SOCKET_ADDRESS, type ClientIpRule, type Peer } from './client-ip'
import { parseConfig } from './config'

const peer = (address: string): Peer => ({ requestIP: () => ({ address }) })
const request = (headers: Record<string, string> = {}) => new Request('http://sho.rt/abcd', { headers })
const hops = (n: number): ClientIpRule => ({ from: 'forwarded-for', hops: n })

describe('entryFromRight', () => {
  test('counts from the right, trims, and refuses a list shorter than asked', () => {
    const list = ' 6.6.6.6 ,198.51.100.1, 10.0.0.1'
    expect(entryFromRight(list, 1)).toBe('10.0.0.1')
    expect(entryFromRight(list, 2)).toBe('198.51.100.1')
    expect(entryFromRight(list, 3)).toBe('6.6.6.6')
    expect(entryFromRight(list, 4)).toBe('')
    expect(entryFromRight('198.51.100.1', 1)).toBe('198.51.100.1')
    expect(entryFromRight(null, 1)).toBe('')
    for (const value of ['', ',', ', ,', ',a']) expect(entryFromRight(value, 2), value).toBe('')
    expect(entryFromRight('a,,b', 2)).toBe('')
  })
})

describe('clientAddress', () => {
  test('the socket address unless a rule says otherwise; headers are ignored then', () => {
    const spoofing = request({ 'x-forwarded-for': '6.6.6.6', 'x-real-ip': '6.6.6.6' })
    expect(clientAddress(SOCKET_ADDRESS, spoofing, peer('203.0.113.9'))).toBe('203.0.113.9')
    expect(clientAddress(SOCKET_ADDRESS, spoofing, undefined)).toBe('')
  })

  test('X-Forwarded-For behind N proxies: whatever a client puts on the left, the N-th entry from the right is its address', () => {
    for (const spoofed of ['', '6.6.6.6, ', '1.1.1.1, 2.2.2.2, 3.3.3.3, ', 'not-an-ip,']) {
      // One proxy appended the client's address; two proxies appended the client's and the first proxy's.
      expect(clientAddress(hops(1), request({ 'x-forwarded-for': `${spoofed}203.0.113.9` }), peer('10.0.0.1')), spoofed).toBe('203.0.113.9')
      expect(clientAddress(hops(2), request({ 'x-forwarded-for': `${spoofed}203.0.113.9, 10.0.0.5` }), peer('10.0.0.1')), spoofed).toBe('203.0.113.9')
    }
  })

  test('fewer entries than hops, an empty entry or no header: the socket address, never an entry a client may have written', () => {
    expect(clientAddress(hops(2), request({ 'x-forwarded-for': '6.6.6.6' }), peer('10.0.0.1'))).toBe('10.0.0.1')
    expect(clientAddress(hops(1), request({ 'x-forwarded-for': '6.6.6.6, ' }), peer('10.0.0.1'))).toBe('10.0.0.1')
    expect(clientAddress(hops(1), request(), peer('10.0.0.1'))).toBe('10.0.0.1')
  })

  test('a single trusted header is taken whole; a list in it yields its right-most entry', () => {
    const rule: ClientIpRule = { from: 'header', header: 'cf-connecting-ip' }
    expect(clientAddress(rule, request({ 'cf-connecting-ip': ' 2001:db8::1 ' }), peer('10.0.0.1'))).toBe('2001:db8::1')
    expect(clientAddress(rule, request({ 'cf-connecting-ip': '6.6.6.6, 203.0.113.9' }), peer('10.0.0.1'))).toBe('203.0.113.9')
    expect(clientAddress(rule, request({ 'x-forwarded-for': '6.6.6.6' }), peer('10.0.0.1'))).toBe('10.0.0.1')
  })

  test('an address longer than any IP is cut to 64 characters', () => {
    expect(clientAddress(hops(1), request({ 'x-forwarded-for': 'x'.repeat(500) }), undefined)).toHaveLength(64)
  })
})

describe('configuration of the client IP rule', () => {
  test('neither variable: the socket; TRUSTED_PROXY_HOPS=N; TRUSTED_IP_HEADER lower-cased', () => {
    expect(parseConfig({}).clientIp).toEqual({ from: 'socket' })
    expect(parseConfig({ TRUSTED_PROXY_HOPS: '0' }).clientIp).toEqual({ from: 'socket' })
    expect(parseConfig({ TRUSTED_PROXY_HOPS: '2' }).clientIp).toEqual({ from: 'forwarded-for', hops: 2 })
    expect(parseConfig({ TRUSTED_IP_HEADER: 'CF-Connecting-IP' }).clientIp).toEqual({ from: 'header', header: 'cf-connecting-ip' })
  })

  test('both set, or a bad value, stops the start with a message naming the variable', () => {
    expect(() => parseConfig({ TRUSTED_PROXY_HOPS: '1', TRUSTED_IP_HEADER: 'x-real-ip' })).toThrow(/TRUSTED_PROXY_HOPS and TRUSTED_IP_HEADER/)
    for (const value of ['-1', 'one', '1.5', '17']) expect(() => parseConfig({ TRUSTED_PROXY_HOPS: value }), value).toThrow(/TRUSTED_PROXY_HOPS/)
    for (const value of ['x real ip', 'x-ip:', 'ä']) expect(() => parseConfig({ TRUSTED_IP_HEADER: value }), value).toThrow(/TRUSTED_IP_HEADER/)
  })
})
