// A routed link at the redirector: the destination each visitor gets, the route each click records,
// HEAD routed without a click, attribution on the routed destination, a password link routed after
// the unlock, and a destination that loops back stopped there.
import { describe, expect, test } from 'bun:test'
import { MemoryKv } from '../src/adapters/memory-kv'
import type { ClickEvent } from '../core/clicks'
import type { Peer } from '../core/client-ip'
import { cachedLinkFor, decodeCachedLink, encodeCachedLink, linkCacheKey, type CachedLink } from '../core/link-cache'
import { bucketSeed } from '../core/routing'
import { DomainSet } from './domains'
import { handleRedirect, type RedirectDeps } from './handler'
import { LinkResolver } from './resolver'

const domain = 'sho.rt'
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'
const DESKTOP = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'

function routed(overrides: Partial<CachedLink> = {}): CachedLink {
  return {
    v: 2,
    id: `link_${crypto.randomUUID()}`,
    url: 'https://example.com/home',
    r: {
      rules: [
        { id: 'ios', url: 'https://apps.example/ios', device: ['ios'] },
        { id: 'de', url: 'https://example.com/de', country: ['DE'] },
        { id: 'promo', url: 'https://example.com/promo', query: [['ref', 'mail']] },
      ],
      ab: {
        sticky: true,
        variants: [
          { id: 'a', url: 'https://example.com/a', weight: 50 },
          { id: 'b', url: 'https://example.com/b', weight: 50 },
        ],
      },
    },
    ...overrides,
  }
}

async function setup(extra: Partial<RedirectDeps> = {}) {
  const kv = new MemoryKv()
  const resolver = new LinkResolver(kv, async () => null, { l1TtlMs: 60_000, l1MaxEntries: 100, negativeTtlMs: 60_000 })
  await resolver.listen()
  const clicks: ClickEvent[] = []
  const deps: RedirectDeps = {
    resolver,
    record: (click) => void clicks.push(click),
    shortDomain: domain,
    keyPrefix: linkCacheKey(domain, ''),
    countryHeader: 'cf-ipcountry',
    clientIp: { from: 'header', header: 'x-test-ip' },
    routingSeed: bucketSeed('test'),
    ...extra,
  }
  const put = (alias: string, value: CachedLink) => kv.set(linkCacheKey(domain, alias), encodeCachedLink(value), 60)
  const peer: Peer = { requestIP: () => ({ address: '10.0.0.2' }) }
  const visit = async (path: string, headers: Record<string, string> = {}, init: RequestInit = {}) => {
    const response = await handleRedirect(new Request(`http://${domain}${path}`, { ...init, headers: { 'x-test-ip': '198.51.100.1', ...headers } }), deps, peer)
    return { status: response.status, location: response.headers.get('location') }
  }
  return { clicks, put, visit, resolver }
}

describe('a routed link at the redirector', () => {
  test('each rule in order, then the A/B test; each click records its route', async () => {
    const { clicks, put, visit } = await setup()
    await put('r', routed())
    expect(await visit('/r', { 'user-agent': IPHONE, 'cf-ipcountry': 'DE' })).toEqual({ status: 302, location: 'https://apps.example/ios' })
    expect(await visit('/r', { 'user-agent': DESKTOP, 'cf-ipcountry': 'DE' })).toEqual({ status: 302, location: 'https://example.com/de' })
    expect(await visit('/r?ref=mail', { 'user-agent': DESKTOP })).toEqual({ status: 302, location: 'https://example.com/promo' })
    const split = await visit('/r', { 'user-agent': DESKTOP })
    expect(['https://example.com/a', 'https://example.com/b']).toContain(split.location!)
    expect(clicks.map((c) => c.route)).toEqual(['rule:ios', 'rule:de', 'rule:promo', split.location!.endsWith('/a') ? 'ab:a' : 'ab:b'])
    expect(clicks.map((c) => c.url)).toEqual(['https://apps.example/ios', 'https://example.com/de', 'https://example.com/promo', split.location!])
  })

  test('a sticky visitor keeps its variant; two visitors together see both', async () => {
    const { put, visit } = await setup()
    await put(
      'ab',
      routed({
        r: {
          ab: {
            sticky: true,
            variants: [
              { id: 'a', url: 'https://example.com/a', weight: 50 },
              { id: 'b', url: 'https://example.com/b', weight: 50 },
            ],
          },
        },
      }),
    )
    const seen = new Set<string>()
    for (let i = 0; i < 40; i++) {
      const headers = { 'user-agent': DESKTOP, 'x-test-ip': `203.0.113.${i}` }
      const first = await visit('/ab', headers)
      expect(await visit('/ab', headers), `visitor ${i}`).toEqual(first)
      seen.add(first.location!)
    }
    expect([...seen].sort()).toEqual(['https://example.com/a', 'https://example.com/b'])
  })

  test("no rule matches and no test: the link's URL, recorded as the default route", async () => {
    const { clicks, put, visit } = await setup()
    await put('rules', routed({ r: { rules: [{ id: 'ios', url: 'https://apps.example/ios', device: ['ios'] }] } }))
    expect(await visit('/rules', { 'user-agent': DESKTOP })).toEqual({ status: 302, location: 'https://example.com/home' })
    expect(clicks[0]!.route).toBeUndefined()
  })

  test("every click has one shape: its route is undefined where the link's own URL was served", async () => {
    const { clicks, put, visit } = await setup()
    await put('plain', { v: 1, id: 'link_plain', url: 'https://example.com/plain' })
    await put('r', routed())
    await visit('/plain')
    await visit('/r', { 'user-agent': IPHONE })
    expect(clicks.map((c) => c.route)).toEqual([undefined, 'rule:ios'])
    expect(Object.keys(clicks[0]!), JSON.stringify(clicks)).toEqual(Object.keys(clicks[1]!))
  })

  test('the routing compiled with a record stays out of its encoding, and a changed link is routed anew', async () => {
    const { put, visit, resolver } = await setup()
    const link = routed()
    await put('c', link)
    expect(await visit('/c', { 'user-agent': IPHONE })).toEqual({ status: 302, location: 'https://apps.example/ios' })
    const key = linkCacheKey(domain, 'c')
    const held = resolver.peek(key, Date.now(), domain, 'c')!
    expect(Object.keys(held)).toEqual(Object.keys(link))
    expect(encodeCachedLink(held)).toBe(encodeCachedLink(link))
    await put('c', routed({ id: link.id, r: { rules: [{ id: 'ios', url: 'https://apps.example/ios-2', device: ['ios'] }] } }))
    resolver.invalidate(key)
    expect(await visit('/c', { 'user-agent': IPHONE })).toEqual({ status: 302, location: 'https://apps.example/ios-2' })
  })

  test('HEAD is routed without a click', async () => {
    const { clicks, put, visit } = await setup()
    await put('head', routed())
    expect(await visit('/head', { 'user-agent': IPHONE }, { method: 'HEAD' })).toEqual({ status: 302, location: 'https://apps.example/ios' })
    expect(clicks).toEqual([])
  })

  test('Pro: the attribution parameters go on the routed destination', async () => {
    const { clicks, put, visit } = await setup({ clickKeys: [{ kid: 'k1', secret: 'x'.repeat(32) }] })
    await put('pro', routed({ pro: 1, id: 'link_AAAAAAAAAAAAAAAAAAAAAA' }))
    const answer = await visit('/pro', { 'user-agent': IPHONE })
    expect(answer.location, JSON.stringify(answer)).toStartWith('https://apps.example/ios?mu_click=')
    expect(answer.location).toContain('&mu_sig=')
    expect(clicks[0]!.route).toBe('rule:ios')
  })

  test('a routed destination that leads back here is stopped (508), uncounted', async () => {
    const { clicks, put, visit } = await setup()
    await put('loop', routed({ r: { rules: [{ id: 'x', url: `https://${domain}/loop`, device: ['ios'] }] } }))
    expect((await visit('/loop', { 'user-agent': IPHONE })).status).toBe(508)
    expect(clicks).toEqual([])
  })

  test('a routed destination on a domain verified after the link was made: 302 before, 508 once the set has it, rule and variant alike', async () => {
    let hosts: string[] = []
    const domains = new DomainSet(domain, async () => ({ hosts, rootUrls: new Map() }), { subscribe: async () => async () => {} }, { refreshMs: 60_000 })
    await domains.start()
    const { clicks, put, visit } = await setup({ domains })
    await put(
      'later',
      routed({ r: { rules: [{ id: 'ios', url: 'https://go.example.com/app', device: ['ios'] }], ab: { sticky: true, variants: [{ id: 'a', url: 'https://go.example.com/a', weight: 100 }] } } }),
    )
    expect(await visit('/later', { 'user-agent': IPHONE })).toEqual({ status: 302, location: 'https://go.example.com/app' })
    expect(await visit('/later', { 'user-agent': DESKTOP })).toEqual({ status: 302, location: 'https://go.example.com/a' })
    hosts = ['go.example.com']
    await domains.refresh()
    expect((await visit('/later', { 'user-agent': IPHONE })).status).toBe(508)
    expect((await visit('/later', { 'user-agent': DESKTOP })).status).toBe(508)
    expect(clicks.map((c) => c.route)).toEqual(['rule:ios', 'ab:a'])
    // Unverified again: the same record redirects again.
    hosts = []
    await domains.refresh()
    expect((await visit('/later', { 'user-agent': IPHONE })).status).toBe(302)
    await domains.close()
  })

  test('a password link is routed after the unlock', async () => {
    const link = routed({ pw: 1 })
    const { pw: _pw, ...open } = link
    const { clicks, put, visit } = await setup({ unlock: async () => ({ kind: 'ok', link: open }) })
    await put('pw', link)
    expect((await visit('/pw', { 'user-agent': IPHONE })).status).toBe(200)
    const unlocked = await visit('/pw', { 'user-agent': IPHONE, 'content-type': 'application/x-www-form-urlencoded' }, { method: 'POST', body: 'password=right' })
    expect(unlocked).toEqual({ status: 302, location: 'https://apps.example/ios' })
    expect(clicks.map((c) => c.route)).toEqual(['rule:ios'])
  })
})

describe('the cached record across versions', () => {
  test('version 1 has no routing, version 2 no state even if present; versions 1 to 3 decode, 4 does not', () => {
    expect(decodeCachedLink(JSON.stringify({ v: 1, id: 'link_x', url: 'https://e.example/', r: { rules: [] } }))?.r).toBeUndefined()
    expect(decodeCachedLink(JSON.stringify({ v: 2, id: 'link_x', url: 'https://e.example/', r: { rules: [] } }))?.r).toEqual({ rules: [] })
    expect(decodeCachedLink(JSON.stringify({ v: 2, id: 'link_x', url: 'https://e.example/', st: 'disabled' }))?.st).toBeUndefined()
    expect(decodeCachedLink(JSON.stringify({ v: 3, id: 'link_x', url: 'https://e.example/', st: 'disabled' }))?.st).toBe('disabled')
    expect(decodeCachedLink(JSON.stringify({ v: 4, id: 'link_x', url: 'https://e.example/' }))).toBeNull()
  })

  test('a reader of an older version gets a routed link without its routing and a link taken down as none', () => {
    const routed: CachedLink = { v: 2, id: 'link_x', url: 'https://e.example/', r: { rules: [] } }
    expect(cachedLinkFor(routed, 1)).toEqual({ v: 1, id: 'link_x', url: 'https://e.example/' })
    expect(cachedLinkFor(routed, 2)).toBe(routed)
    const flagged: CachedLink = { v: 3, id: 'link_x', url: 'https://e.example/', r: { rules: [] }, st: 'flagged' }
    expect(cachedLinkFor(flagged, 1)).toBeNull()
    expect(cachedLinkFor(flagged, 2)).toBeNull()
    expect(cachedLinkFor(flagged, 3)).toBe(flagged)
  })
})
