import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTxtResolver, DnsLookupError } from './resolver'
import { startTestDnsServer, type TestDnsServer } from '../../test/support/dns'
import { within } from '../../test/support/wait'

let dns: TestDnsServer

beforeAll(async () => {
  dns = await startTestDnsServer()
})

afterAll(async () => {
  await dns.close()
})

async function failure(promise: Promise<unknown>): Promise<DnsLookupError> {
  try {
    await promise
  } catch (error) {
    if (error instanceof DnsLookupError) return error
    throw error
  }
  throw new Error('expected a DnsLookupError')
}

describe('createTxtResolver against a real DNS server on loopback', () => {
  test('returns every TXT record; names are case-insensitive', async () => {
    const resolver = createTxtResolver({ dnsServers: [dns.server], dnsTimeoutMs: 2000 })
    dns.setTxt('_linkservice.one.example.com', [['v=first'], ['link-service-verification=abc']])
    const records = await resolver.resolveTxt('_linkservice.ONE.example.com')
    expect(records.sort()).toEqual(['link-service-verification=abc', 'v=first'])
    expect(dns.questions).toContain('_linkservice.one.example.com')
  })

  test('a record of several strings: joined (Node), or one record per string (Bun 1.4.5 c-ares binding)', async () => {
    const resolver = createTxtResolver({ dnsServers: [dns.server], dnsTimeoutMs: 2000 })
    dns.setTxt('_linkservice.split.example.com', [['part-one;', 'part-two']])
    const records = await resolver.resolveTxt('_linkservice.split.example.com')
    // Verification values are far below 255 bytes, so they always travel as one string.
    expect([['part-one;part-two'], ['part-one;', 'part-two']]).toContainEqual(records)
  })

  test('a name without records is an empty answer, not an error', async () => {
    const resolver = createTxtResolver({ dnsServers: [dns.server], dnsTimeoutMs: 2000 })
    expect(await resolver.resolveTxt('_linkservice.nothing.example.com')).toEqual([])
  })

  test("SERVFAIL is the domain's failure; silence and an unreachable server are ours, within the budget", async () => {
    const resolver = createTxtResolver({ dnsServers: [dns.server], dnsTimeoutMs: 300 })
    dns.fail('_linkservice.broken.example.com', 'servfail')
    const servfail = await failure(resolver.resolveTxt('_linkservice.broken.example.com'))
    expect(servfail).toMatchObject({ code: 'ESERVFAIL', domainSide: true })

    dns.fail('_linkservice.slow.example.com', 'silent')
    // Without the 0.3 s budget c-ares would retry for tens of seconds, far past within()'s deadline.
    const silent = await failure(within(resolver.resolveTxt('_linkservice.slow.example.com'), 'a lookup at a silent server'))
    expect(silent).toMatchObject({ code: 'ETIMEOUT', domainSide: false })

    // Nothing listens on port 9 (discard) of loopback: UDP queries go unanswered or are refused.
    const nowhere = createTxtResolver({ dnsServers: ['127.0.0.1:9'], dnsTimeoutMs: 300 })
    const unreachable = await failure(nowhere.resolveTxt('_linkservice.any.example.com'))
    expect(unreachable.domainSide).toBe(false)
  })
})
