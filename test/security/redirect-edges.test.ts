// The redirector against hostile or unlucky requests: a link that points back at a host it serves
// ends after one hop with 508 and counts nothing; other methods are 405 with Allow; every HTML page
// carries a locked-down Content-Security-Policy, nosniff and a Referrer-Policy.
import { describe, expect, test } from 'bun:test'
import { MemoryKv } from '../../src/adapters/memory-kv'
import type { ClickEvent } from '../../core/clicks'
import { encodeCachedLink, linkCacheKey, type CachedLink } from '../../core/link-cache'
import { DomainSet } from '../../redirect/domains'
import { handleRedirect, type RedirectDeps } from '../../redirect/handler'
import { LinkResolver } from '../../redirect/resolver'

const SHORT = 'sho.rt'
const VERIFIED = 'go.example.com'

async function redirector() {
  const kv = new MemoryKv()
  const resolver = new LinkResolver(kv, async () => null, { l1TtlMs: 60_000, l1MaxEntries: 100, negativeTtlMs: 60_000 })
  await resolver.listen()
  const source = { subscribe: async () => async () => {} }
  const domains = new DomainSet(SHORT, async () => ({ hosts: [VERIFIED], rootUrls: new Map() }), source, { refreshMs: 60_000 })
  await domains.start()
  const clicks: ClickEvent[] = []
  const deps: RedirectDeps = { resolver, record: (click) => void clicks.push(click), shortDomain: SHORT, keyPrefix: linkCacheKey(SHORT, ''), domains }
  const put = (alias: string, url: string, extra: Partial<CachedLink> = {}) => kv.set(linkCacheKey(SHORT, alias), encodeCachedLink({ v: 1, id: `link_${crypto.randomUUID()}`, url, ...extra }), 60)
  const get = (path: string, init?: RequestInit) => Promise.resolve(handleRedirect(new Request(`https://${SHORT}${path}`, init), deps))
  return { clicks, put, get, close: () => domains.close() }
}

const SECURE_PAGE = {
  'content-security-policy': expect.stringContaining("default-src 'none'"),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
}

function headersOf(res: Response) {
  return Object.fromEntries(res.headers.entries())
}

describe('a loop that slipped past the API', () => {
  test.each([
    [`https://${SHORT}/other`, 'the default short domain'],
    [`http://${SHORT}/other?x=1`, 'the default short domain over http'],
    [`https://${VERIFIED}/promo`, 'a custom domain verified after the link was made'],
  ])('%s (%s): 508 after one hop, no click', async (url) => {
    const r = await redirector()
    await r.put('looper', url)
    const res = await r.get('/looper')
    expect(res.status).toBe(508)
    expect(res.headers.get('location')).toBeNull()
    expect(headersOf(res)).toMatchObject(SECURE_PAGE)
    expect(r.clicks).toEqual([])
    await r.close()
  })

  test('an ordinary destination still redirects and counts', async () => {
    const r = await redirector()
    await r.put('fine', 'https://example.com/x')
    const res = await r.get('/fine')
    expect([res.status, res.headers.get('location')]).toEqual([302, 'https://example.com/x'])
    expect(r.clicks.length).toBe(1)
    await r.close()
  })
})

describe('methods and pages', () => {
  test.each(['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND'])('%s is 405 with Allow: GET, HEAD', async (method) => {
    const r = await redirector()
    await r.put('m', 'https://example.com/x')
    const res = await r.get('/m', { method })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET, HEAD')
    expect(headersOf(res)).toMatchObject(SECURE_PAGE)
    await r.close()
  })

  test('404, 410 and the password form carry the same locked-down headers', async () => {
    const r = await redirector()
    await r.put('gone', 'https://example.com/x', { exp: Date.now() - 1000 })
    await r.put('locked', 'https://example.com/x', { pw: 1 })
    for (const [path, status] of [
      ['/nothing-here', 404],
      ['/gone', 410],
      ['/locked', 200],
    ] as const) {
      const res = await r.get(path)
      expect(res.status, path).toBe(status)
      expect(res.headers.get('content-type'), path).toStartWith('text/html')
      expect(headersOf(res), path).toMatchObject(SECURE_PAGE)
    }
    await r.close()
  })
})
