// The filtering resolver's check against a DoH stand-in on loopback (RFC 8484 wire format), with the
// system resolver faked: a block (0.0.0.0, ::, NXDOMAIN) of a name that resolves publicly is unsafe; a
// block of a name nobody resolves is not; no answer is unknown, never unsafe.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Verdict } from './check'
import { safeDnsCheck } from './safe-dns'
import type { Resolve } from './service-fetch'
import { startDohStandIn, type DohStandIn } from '../../../test/support/reputation-stand-ins'

let doh: DohStandIn
/** What the system resolver answers: addresses, or (absent) ENOTFOUND, or a failure of the resolver itself. */
const publicDns = new Map<string, string[] | 'servfail'>()

const systemResolve: Resolve = async (name) => {
  const known = publicDns.get(name)
  if (known === 'servfail') throw Object.assign(new Error(`queryA ESERVFAIL ${name}`), { code: 'ESERVFAIL' })
  if (!known) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' })
  return known
}

/** A name no other test uses. */
const fresh = (label: string) => `${label}-${crypto.randomUUID().slice(0, 8)}.example`

const check = (destination: string, options: { timeoutMs?: number; allowHttpLoopback?: boolean } = {}): Promise<Verdict> =>
  safeDnsCheck({ url: doh.url, allowHttpLoopback: options.allowHttpLoopback ?? true, resolve: systemResolve, timeoutMs: options.timeoutMs }).check(destination)

beforeAll(() => {
  doh = startDohStandIn()
})

afterAll(async () => {
  await doh.stop()
})

describe('answers', () => {
  test('a name the filter resolves to its real address is safe; the question is an RFC 8484 GET for its A records', async () => {
    const name = fresh('good')
    doh.set(name, { a: ['93.184.215.14'] })
    publicDns.set(name, ['93.184.215.14'])
    expect(await check(`https://${name}/page?q=1`)).toEqual({ verdict: 'safe' })
    expect(doh.questions.filter((q) => q.name === name)).toEqual([{ name, type: 'A', accept: 'application/dns-message' }])
  })

  test('0.0.0.0 for a name that resolves publicly is unsafe, the reason naming the answer and the host', async () => {
    const name = fresh('blocked')
    doh.set(name, { a: ['0.0.0.0'] })
    publicDns.set(name, ['93.184.215.14'])
    const verdict = await check(`https://${name}/login`)
    expect(verdict).toEqual({ verdict: 'unsafe', reason: `the filtering resolver answers 0.0.0.0 for ${name}, which resolves publicly` })
  })

  test(':: for a name with no A records (asked for AAAA next) that resolves publicly is unsafe', async () => {
    const name = fresh('v6only')
    doh.set(name, { aaaa: ['::'] })
    publicDns.set(name, ['2001:db8::10'])
    const verdict = await check(`https://${name}/`)
    expect(verdict).toEqual({ verdict: 'unsafe', reason: `the filtering resolver answers :: for ${name}, which resolves publicly` })
    expect(doh.questions.filter((q) => q.name === name).map((q) => q.type)).toEqual(['A', 'AAAA'])
  })

  test('NXDOMAIN for a name that resolves publicly is unsafe', async () => {
    const name = fresh('phish')
    publicDns.set(name, ['93.184.215.14'])
    expect(await check(`http://${name}/`)).toEqual({ verdict: 'unsafe', reason: `the filtering resolver answers NXDOMAIN for ${name}, which resolves publicly` })
  })

  test('a block of a name nobody resolves, or that points at 0.0.0.0 for everyone, is safe', async () => {
    const gone = fresh('gone')
    expect(await check(`https://${gone}/`)).toEqual({ verdict: 'safe' })
    const sinkholed = fresh('sinkholed')
    doh.set(sinkholed, { a: ['0.0.0.0'] })
    publicDns.set(sinkholed, ['0.0.0.0'])
    expect(await check(`https://${sinkholed}/`)).toEqual({ verdict: 'safe' })
  })

  test('IP-literal hosts are not asked about', async () => {
    const before = doh.questions.length
    for (const destination of ['http://203.0.113.9/x', 'https://[2001:db8::1]/', 'http://0x7f000001/']) expect(await check(destination), destination).toEqual({ verdict: 'safe' })
    // The marker that the resolver is reachable at all: a name asked after them is seen.
    const name = fresh('after-literals')
    await check(`https://${name}/`)
    expect(doh.questions.slice(before).map((q) => q.name)).toEqual([name])
  })
})

describe('failures are unknown, never unsafe', () => {
  test('an HTTP 500, a body that is not a DNS message, SERVFAIL', async () => {
    for (const failure of ['http500', 'garbage'] as const) {
      const name = fresh(failure)
      publicDns.set(name, ['93.184.215.14'])
      doh.fail(name, failure)
      const verdict = await check(`https://${name}/`)
      expect(verdict.verdict, `${failure}: ${JSON.stringify(verdict)}`).toBe('unknown')
    }
    const name = fresh('servfail')
    doh.set(name, 'servfail')
    publicDns.set(name, ['93.184.215.14'])
    expect(await check(`https://${name}/`)).toEqual({ verdict: 'unknown', reason: 'SAFE_DNS_URL answered response code 2' })
  })

  test('no answer within the budget', async () => {
    const name = fresh('hang')
    publicDns.set(name, ['93.184.215.14'])
    doh.fail(name, 'hang')
    expect(await check(`https://${name}/`, { timeoutMs: 200 })).toEqual({ verdict: 'unknown', reason: 'SAFE_DNS_URL did not answer within 0.2 s' })
  })

  test('a block the system resolver cannot confirm (it fails, rather than finding no such name)', async () => {
    const name = fresh('unconfirmed')
    doh.set(name, { a: ['0.0.0.0'] })
    publicDns.set(name, 'servfail')
    expect(await check(`https://${name}/`)).toEqual({ verdict: 'unknown', reason: 'the system resolver did not answer' })
  })

  test('without REPUTATION_ALLOW_HTTP_LOOPBACK a resolver on loopback over http is never asked', async () => {
    const name = fresh('guarded')
    publicDns.set(name, ['93.184.215.14'])
    expect(await check(`https://${name}/`, { allowHttpLoopback: false })).toEqual({ verdict: 'unknown', reason: 'SAFE_DNS_URL http is not used; use https' })
    expect(doh.questions.some((q) => q.name === name)).toBe(false)
    // The same name with the setting reaches it: the refusal above was the guard's.
    await check(`https://${name}/`)
    expect(doh.questions.some((q) => q.name === name)).toBe(true)
  })
})
