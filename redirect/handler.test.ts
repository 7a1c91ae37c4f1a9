import { describe, expect, test } from 'bun:test'
import { MemoryKv } from '../src/adapters/memory-kv'
import type { ClickEvent } from '../core/clicks'
import type { Peer } from '../core/client-ip'
import { encodeCachedLink, INVALIDATION_CHANNEL, linkCacheKey, type CachedLink } from '../core/link-cache'
import { handleRedirect, parseAlias, type RedirectDeps } from './handler'
import { LinkResolver } from './resolver'
import type { Resolve } from './internal-api'

const domain = 'sho.rt'
const options = { l1TtlMs: 60_000, l1MaxEntries: 100, negativeTtlMs: 60_000 }

function link(overrides: Partial<CachedLink> = {}): CachedLink {
  return { v: 1, id: `link_${crypto.randomUUID()}`, url: 'https://example.com/landing?a=1#top', ...overrides }
}

/** The socket address every request of these tests comes from: a proxy's, when a test puts one in front. */
const PEER: Peer = { requestIP: () => ({ address: '10.0.0.2' }) }

async function setup(resolve: Resolve = async () => null, extra: Partial<RedirectDeps> = {}) {
  const kv = new MemoryKv()
  const resolver = new LinkResolver(kv, resolve, options)
  await resolver.listen()
  const clicks: ClickEvent[] = []
  const deps: RedirectDeps = { resolver, record: (click) => void clicks.push(click), shortDomain: domain, keyPrefix: linkCacheKey(domain, ''), countryHeader: 'cf-ipcountry', ...extra }
  const put = (alias: string, value: CachedLink) => kv.set(linkCacheKey(domain, alias), encodeCachedLink(value), 60)
  const get = (path: string, init?: RequestInit) => handleRedirect(new Request(`http://${domain}${path}`, init), deps, PEER)
  return { kv, resolver, clicks, put, get }
}

describe('parseAlias', () => {
  test('takes the first path segment when it is a valid alias', () => {
    expect(parseAlias('http://sho.rt/abc_D-9')).toBe('abc_D-9')
    expect(parseAlias('http://sho.rt/abcd?utm=1')).toBe('abcd')
    expect(parseAlias('https://sho.rt:8443/abcd#x')).toBe('abcd')
  })
  test('refuses what cannot be an alias', () => {
    for (const url of ['http://sho.rt/', 'http://sho.rt/a/b', 'http://sho.rt/%2e%2e', 'http://sho.rt/ab cd', `http://sho.rt/${'a'.repeat(65)}`]) {
      expect(parseAlias(url)).toBeNull()
    }
  })
})

describe('redirect handler', () => {
  test('GET redirects with 302, the private cache header and one recorded click', async () => {
    const { clicks, put, get } = await setup()
    const target = link()
    await put('abcd', target)
    const response = await get('/abcd', { headers: { referer: 'https://news.example/', 'user-agent': 'UA/1', 'cf-ipcountry': 'FR' } })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(target.url)
    expect(response.headers.get('cache-control')).toBe('private, max-age=0')
    expect(clicks).toHaveLength(1)
    expect(clicks[0]).toMatchObject({ linkId: target.id, alias: 'abcd', domain, referrer: 'https://news.example/', userAgent: 'UA/1', country: 'FR' })
  })

  test('the 302 is released only once the recorder says the click is written', async () => {
    const { resolver, put } = await setup()
    await put('wait', link())
    let written = () => {}
    let recording!: () => void
    const recorded = new Promise<void>((resolve) => (recording = resolve))
    const record = (_: ClickEvent, response: Response) => (recording(), new Promise<Response>((resolve) => (written = () => resolve(response))))
    const deps: RedirectDeps = { resolver, record, shortDomain: domain, keyPrefix: linkCacheKey(domain, '') }
    let answered = false
    const response = Promise.resolve(handleRedirect(new Request(`http://${domain}/wait`), deps)).then((r) => ((answered = true), r))
    // The click went to the recorder; a turn of the event loop later every promise the handler could
    // have settled without the recorder has settled.
    await recorded
    await Bun.sleep(0)
    expect(answered, 'the 302 left before the recorder said the click is written').toBe(false)
    written()
    expect((await response).status).toBe(302)
  })

  test('HEAD redirects without counting a click', async () => {
    const { clicks, put, get } = await setup()
    await put('head', link())
    const response = await get('/head', { method: 'HEAD' })
    expect(response.status).toBe(302)
    expect(clicks).toHaveLength(0)
  })

  test('unknown alias is a 404 HTML page, expired a 410, not yet active a 404; none counted', async () => {
    const { clicks, put, get } = await setup()
    await put('gone', link({ exp: Date.now() - 1000 }))
    await put('soon', link({ act: Date.now() + 60_000 }))
    const unknown = await get('/nope')
    expect(unknown.status).toBe(404)
    expect(unknown.headers.get('content-type')).toContain('text/html')
    expect((await get('/gone')).status).toBe(410)
    expect((await get('/soon')).status).toBe(404)
    expect(clicks).toHaveLength(0)
  })

  test('a password-protected link shows its form (200, not framable) and is never redirected without its password', async () => {
    const { clicks, put, get } = await setup()
    await put('secret', link({ pw: 1 }))
    const response = await get('/secret')
    expect(response.status).toBe(200)
    expect(response.headers.get('location')).toBeNull()
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(response.headers.get('x-frame-options')).toBe('DENY')
    const html = await response.text()
    expect(html).toContain('<form method="post">')
    expect(html).toContain('name="password" type="password"')
    expect((await get('/secret', { method: 'HEAD' })).status).toBe(200)
    expect(clicks).toHaveLength(0)
  })

  test('other methods get 405 with Allow; POST too, unless the link is password protected', async () => {
    const { get, put, clicks } = await setup()
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const response = await get('/abcd', { method, body: 'x' })
      expect(response.status, method).toBe(405)
      expect(response.headers.get('allow')).toBe('GET, HEAD')
    }
    await put('open', link())
    const post = await get('/open', { method: 'POST', body: 'password=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(post.status).toBe(405)
    expect(post.headers.get('location')).toBeNull()
    expect((await get('/nope-unknown', { method: 'POST', body: 'x' })).status).toBe(404)
    expect(clicks).toHaveLength(0)
  })

  test('a cache miss asks the API once for concurrent requests, then serves from L1', async () => {
    const target = link()
    let calls = 0
    const { get, resolver } = await setup(async () => {
      calls++
      await Bun.sleep(20)
      return target
    })
    const responses = await Promise.all(Array.from({ length: 20 }, () => get('/miss')))
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(302))
    expect(calls).toBe(1)
    await get('/miss')
    expect(calls).toBe(1)
    expect(resolver.counters.l1Hits).toBeGreaterThan(0)
  })

  test('"not found" is remembered briefly instead of asking the API per request', async () => {
    let calls = 0
    const { get } = await setup(async () => {
      calls++
      return null
    })
    for (let i = 0; i < 5; i++) expect((await get('/ghost')).status).toBe(404)
    expect(calls).toBe(1)
  })

  test('when neither the cache nor the API can answer, the page is 503 with Retry-After, not 500', async () => {
    const { get } = await setup(async () => {
      throw new Error('API down')
    })
    const response = await get('/abcd')
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('5')
  })

  test('the click carries the client address by the configured rule; spoofed left-most X-Forwarded-For entries change nothing', async () => {
    const spoofed = ['6.6.6.6, 203.0.113.9', '1.1.1.1, 2.2.2.2, 203.0.113.9', ' 203.0.113.9']
    const behindProxy = await setup(undefined, { clientIp: { from: 'forwarded-for', hops: 1 } })
    await behindProxy.put('ip', link())
    for (const xff of spoofed) await behindProxy.get('/ip', { headers: { 'x-forwarded-for': xff } })
    expect(behindProxy.clicks.map((c) => c.ip)).toEqual(spoofed.map(() => '203.0.113.9'))
    // No rule: the socket address, whatever the headers say.
    const direct = await setup()
    await direct.put('ip', link())
    await direct.get('/ip', { headers: { 'x-forwarded-for': '6.6.6.6' } })
    expect(direct.clicks[0]!.ip).toBe('10.0.0.2')
    // A single trusted header: taken whole, or its right-most entry.
    const cdn = await setup(undefined, { clientIp: { from: 'header', header: 'cf-connecting-ip' } })
    await cdn.put('ip', link())
    await cdn.get('/ip', { headers: { 'cf-connecting-ip': '6.6.6.6,203.0.113.9', 'x-forwarded-for': '7.7.7.7' } })
    expect(cdn.clicks[0]!.ip).toBe('203.0.113.9')
  })

  test('an invalidation drops the L1 entry so the next request sees the new destination', async () => {
    const { kv, put, get } = await setup()
    await put('moved', link({ url: 'https://old.example/' }))
    expect((await get('/moved')).headers.get('location')).toBe('https://old.example/')
    await put('moved', link({ url: 'https://new.example/' }))
    expect((await get('/moved')).headers.get('location')).toBe('https://old.example/') // L1 still holds it
    await kv.publish(INVALIDATION_CHANNEL, linkCacheKey(domain, 'moved'))
    await Bun.sleep(0)
    expect((await get('/moved')).headers.get('location')).toBe('https://new.example/')
  })
})
