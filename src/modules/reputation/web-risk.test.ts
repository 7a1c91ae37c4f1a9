// The Web Risk lookup against a uris.search stand-in on loopback: `{}` is safe, a threat named is
// unsafe, and no readable answer (an error, a timeout, not JSON, a refused key) is unknown.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Verdict } from './check'
import { startWebRiskStandIn, type WebRiskStandIn } from '../../../test/support/reputation-stand-ins'
import { webRiskCheck } from './web-risk'

let webRisk: WebRiskStandIn

const fresh = (path = 'page') => `https://site-${crypto.randomUUID().slice(0, 8)}.example/${path}`

const check = (destination: string, options: { key?: string; timeoutMs?: number; allowHttpLoopback?: boolean } = {}): Promise<Verdict> =>
  webRiskCheck({ url: webRisk.url, key: options.key ?? webRisk.key, allowHttpLoopback: options.allowHttpLoopback ?? true, timeoutMs: options.timeoutMs }).check(destination)

beforeAll(() => {
  webRisk = startWebRiskStandIn()
})

afterAll(async () => {
  await webRisk.stop()
})

describe('answers', () => {
  test('a URI on no list is safe; the call is uris.search: the URI as given, MALWARE and SOCIAL_ENGINEERING, the key', async () => {
    const destination = `${fresh('a path')}?next=https%3A%2F%2Fx.example%2F&b=1#frag`
    expect(await check(destination)).toEqual({ verdict: 'safe' })
    expect(webRisk.lookups.filter((lookup) => lookup.uri === destination)).toEqual([{ uri: destination, threatTypes: ['MALWARE', 'SOCIAL_ENGINEERING'], key: webRisk.key }])
  })

  test('a URI on a list is unsafe, the reason naming its threat types', async () => {
    const phishing = fresh('login')
    webRisk.list(phishing, ['SOCIAL_ENGINEERING'])
    expect(await check(phishing)).toEqual({ verdict: 'unsafe', reason: 'Web Risk lists it as SOCIAL_ENGINEERING' })
    const both = fresh('setup.exe')
    webRisk.list(both, ['MALWARE', 'SOCIAL_ENGINEERING'])
    expect(await check(both)).toEqual({ verdict: 'unsafe', reason: 'Web Risk lists it as MALWARE, SOCIAL_ENGINEERING' })
  })

  test('a URI listed only under a type not asked about is safe', async () => {
    const unwanted = fresh('toolbar')
    webRisk.list(unwanted, ['UNWANTED_SOFTWARE'])
    expect(await check(unwanted)).toEqual({ verdict: 'safe' })
  })
})

describe('failures are unknown, never unsafe', () => {
  test('an HTTP 500, an answer that is not JSON, a refused key (400): even for a listed URI', async () => {
    const listed = fresh('listed')
    webRisk.list(listed, ['MALWARE'])
    expect(await check(listed, { key: 'not-the-key' })).toEqual({ verdict: 'unknown', reason: 'WEB_RISK_URL answered HTTP 400' })
    webRisk.fail(listed, 'http500')
    expect(await check(listed)).toEqual({ verdict: 'unknown', reason: 'WEB_RISK_URL answered HTTP 500' })
    webRisk.fail(listed, 'garbage')
    expect(await check(listed)).toEqual({ verdict: 'unknown', reason: 'WEB_RISK_URL answered something other than JSON' })
    webRisk.fail(listed, null)
    expect(await check(listed), 'the same URI once the service answers').toEqual({ verdict: 'unsafe', reason: 'Web Risk lists it as MALWARE' })
  })

  test('no answer within the budget', async () => {
    const slow = fresh('slow')
    webRisk.list(slow, ['MALWARE'])
    webRisk.fail(slow, 'hang')
    expect(await check(slow, { timeoutMs: 200 })).toEqual({ verdict: 'unknown', reason: 'WEB_RISK_URL did not answer within 0.2 s' })
  })

  test('no reason carries the key', async () => {
    const listed = fresh('keyed')
    webRisk.fail(listed, 'http500')
    const verdict = await check(listed)
    expect(verdict.verdict).toBe('unknown')
    expect(JSON.stringify(verdict)).not.toContain(webRisk.key)
  })

  test('without REPUTATION_ALLOW_HTTP_LOOPBACK a service on loopback over http is never called', async () => {
    const destination = fresh('guarded')
    expect(await check(destination, { allowHttpLoopback: false })).toEqual({ verdict: 'unknown', reason: 'WEB_RISK_URL http is not used; use https' })
    expect(webRisk.lookups.some((lookup) => lookup.uri === destination)).toBe(false)
    await check(destination)
    expect(
      webRisk.lookups.some((lookup) => lookup.uri === destination),
      'with the setting the same lookup arrives',
    ).toBe(true)
  })
})
