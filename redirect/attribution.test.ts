// Pro attribution on the redirect (docs/statistics.md#attribution-mu_click-and-mu_sig): mu_click and mu_sig appended to the destination, the same
// click id recorded for the click, nothing added for other links or for HEAD.
import { describe, expect, test } from 'bun:test'
import { MemoryKv } from '../src/adapters/memory-kv'
import { parseClickId, verifyClickSignature, type ClickSigningKey } from '../core/click-id'
import type { ClickEvent } from '../core/clicks'
import { encodeCachedLink, linkCacheKey, type CachedLink } from '../core/link-cache'
import { handleRedirect, withAttribution, type RedirectDeps } from './handler'
import { LinkResolver } from './resolver'

const domain = 'sho.rt'
const keys: ClickSigningKey[] = [{ kid: 'k1', secret: 'attribution-test-secret-0123456789abcdef' }]
const NOW = Date.UTC(2026, 10, 21, 12, 0, 0, 0)

function link(overrides: Partial<CachedLink> = {}): CachedLink {
  const id = `link_${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64url')}`
  return { v: 1, id, url: 'https://x.com/p?a=1#frag', ...overrides }
}

async function setup(extra: Partial<RedirectDeps> = {}) {
  const kv = new MemoryKv()
  const resolver = new LinkResolver(kv, async () => null, { l1TtlMs: 60_000, l1MaxEntries: 100, negativeTtlMs: 60_000 })
  await resolver.listen()
  const clicks: ClickEvent[] = []
  const deps: RedirectDeps = { resolver, record: (click) => void clicks.push(click), shortDomain: domain, keyPrefix: linkCacheKey(domain, ''), clickKeys: keys, now: () => NOW, ...extra }
  const put = (alias: string, value: CachedLink) => kv.set(linkCacheKey(domain, alias), encodeCachedLink(value), 60)
  const get = async (path: string, init?: RequestInit) => {
    const response = await handleRedirect(new Request(`http://${domain}${path}`, init), deps)
    return { response, location: response.headers.get('location') ?? '' }
  }
  return { clicks, put, get }
}

/** mu_click and mu_sig of a Location, read the way a landing page would. */
function params(location: string) {
  const query = new URL(location).searchParams
  return { click: query.get('mu_click'), sig: query.get('mu_sig'), all: query }
}

describe('Pro attribution on redirect', () => {
  test('a Pro link gets mu_click and mu_sig; query and fragment stay intact', async () => {
    const { put, get } = await setup()
    const target = link({ pro: 1 })
    await put('pro1', target)
    const { response, location } = await get('/pro1')
    expect(response.status).toBe(302)
    expect(response.headers.get('cache-control')).toBe('private, max-age=0')
    expect(location, location).toMatch(/^https:\/\/x\.com\/p\?a=1&mu_click=[A-Za-z0-9_-]{44}&mu_sig=k1\.[A-Za-z0-9_-]{43}#frag$/)
    const { click, sig, all } = params(location)
    expect(all.get('a')).toBe('1')
    expect(new URL(location).hash).toBe('#frag')
    expect(verifyClickSignature(click, sig, keys), location).toBe(true)
    expect(parseClickId(click)).toEqual({ linkId: target.id, atMs: NOW })
  })

  test('the recorded click id is the mu_click of the redirect', async () => {
    const { clicks, put, get } = await setup()
    const target = link({ pro: 1 })
    await put('pro2', target)
    const first = params((await get('/pro2')).location)
    const second = params((await get('/pro2')).location)
    expect(clicks.map((c) => c.clickId)).toEqual([first.click!, second.click!])
    expect(first.click).not.toBe(second.click)
    expect(clicks[0]).toMatchObject({ linkId: target.id, at: NOW, alias: 'pro2' })
  })

  test('a non-Pro link redirects to its destination unchanged, with the cheap click id', async () => {
    const { clicks, put, get } = await setup()
    const target = link()
    await put('free', target)
    const { location } = await get('/free')
    expect(location).toBe(target.url)
    expect(clicks).toHaveLength(1)
    expect(parseClickId(clicks[0]!.clickId)).toBeNull()
  })

  test('HEAD on a Pro link records nothing and so mints no click id', async () => {
    const { clicks, put, get } = await setup()
    const target = link({ pro: 1 })
    await put('prohead', target)
    const { response, location } = await get('/prohead', { method: 'HEAD' })
    expect(response.status).toBe(302)
    expect(location).toBe(target.url)
    expect(clicks).toHaveLength(0)
  })

  test('without signing keys a Pro link still redirects, without parameters', async () => {
    const { clicks, put, get } = await setup({ clickKeys: undefined })
    const target = link({ pro: 1 })
    await put('nokeys', target)
    expect((await get('/nokeys')).location).toBe(target.url)
    expect(clicks).toHaveLength(1)
  })

  test('a password-protected Pro link, once unlocked, redirects with attribution and records that click id', async () => {
    const target = link({ pro: 1, pw: 1 })
    const { clicks, put, get } = await setup({ unlock: async () => ({ kind: 'ok', link: target }) })
    await put('propw', target)
    const { response, location } = await get('/propw', { method: 'POST', body: 'password=right', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(response.status, location).toBe(302)
    const { click, sig } = params(location)
    expect(verifyClickSignature(click, sig, keys), location).toBe(true)
    expect(clicks.map((c) => c.clickId)).toEqual([click!])
  })

  test('the signature of one redirect does not verify the click id of another', async () => {
    const { put, get } = await setup()
    await put('pro3', link({ pro: 1 }))
    await put('pro4', link({ pro: 1 }))
    const a = params((await get('/pro3')).location)
    const b = params((await get('/pro4')).location)
    expect(verifyClickSignature(a.click, b.sig, keys)).toBe(false)
    expect(verifyClickSignature(b.click, a.sig, keys)).toBe(false)
  })
})

describe('withAttribution', () => {
  const id = 'C'.repeat(44)
  const sig = `k1.${'S'.repeat(43)}`
  const tail = `mu_click=${id}&mu_sig=${sig}`

  test('appends after the query and before the fragment, leaving both byte for byte', () => {
    const cases: Array<[string, string]> = [
      ['https://x.com/p?a=1#frag', `https://x.com/p?a=1&${tail}#frag`],
      ['https://x.com/p', `https://x.com/p?${tail}`],
      ['https://x.com/', `https://x.com/?${tail}`],
      ['https://x.com/p#frag?not=query', `https://x.com/p?${tail}#frag?not=query`],
      ['https://x.com/p?', `https://x.com/p?${tail}`],
      ['https://x.com/p?q=a%20b+c&e=&f&utm_source=news#', `https://x.com/p?q=a%20b+c&e=&f&utm_source=news&${tail}#`],
      ['http://x.com:8080/p?x=%E2%9C%93&y=1#a#b', `http://x.com:8080/p?x=%E2%9C%93&y=1&${tail}#a#b`],
    ]
    for (const [url, expected] of cases) expect(withAttribution(url, id, sig), url).toBe(expected)
  })

  test('mu_click and mu_sig already in the destination are replaced, look-alikes kept', () => {
    expect(withAttribution('https://x.com/p?mu_click=old&a=1&mu_sig=old&mu_clicks=2&mu_sig', id, sig)).toBe(`https://x.com/p?a=1&mu_clicks=2&${tail}`)
  })
})
