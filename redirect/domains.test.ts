import { describe, expect, test } from 'bun:test'
import { MemoryKv } from '../src/adapters/memory-kv'
import type { ClickEvent } from '../core/clicks'
import { DOMAIN_CHANNEL, encodeCachedLink, linkCacheKey, type CachedLink } from '../core/link-cache'
import { CustomDomain, DEFAULT_DOMAIN, DomainSet, hostOf } from './domains'
import { handleRedirect, type RedirectDeps } from './handler'
import { parseDomainList, type DomainList, type LoadDomains } from './internal-api'
import { LinkResolver } from './resolver'
import type { LinkSource } from './source'
import { until } from '../test/support/wait'

const SHORT = 'sho.rt'

/** What the API's /internal/domains gives: the verified hosts, and root URLs for some. */
const list = (hosts: string[], rootUrls: Record<string, string> = {}): DomainList => ({ hosts, rootUrls: new Map(Object.entries(rootUrls)) })

describe('onDefaultDomain and hostOf', () => {
  test('onDefaultDomain matches the configured short domain exactly, over http or https', () => {
    const set = new DomainSet('sho.rt', async () => list([]), fakeSource().source, { refreshMs: 60_000 })
    expect(set.onDefaultDomain('http://sho.rt/abcd')).toBe(true)
    expect(set.onDefaultDomain('https://sho.rt/abcd?x=1')).toBe(true)
    const withPort = new DomainSet('127.0.0.1:3001', async () => list([]), fakeSource().source, { refreshMs: 60_000 })
    expect(withPort.onDefaultDomain('http://127.0.0.1:3001/abcd')).toBe(true)
    for (const url of ['http://sho.rt.evil.com/abcd', 'http://sho.rt:8080/abcd', 'http://xsho.rt/abcd', 'http://evil.com/sho.rt/abcd', '/abcd']) {
      expect(set.onDefaultDomain(url), url).toBe(false)
    }
  })

  test('hostOf drops the port and a trailing dot; keeps IPv6 literals whole', () => {
    expect(hostOf('http://go.example.com/x')).toBe('go.example.com')
    expect(hostOf('http://go.example.com.:8080/x')).toBe('go.example.com')
    expect(hostOf('http://[::1]:3000/x')).toBe('[::1]')
    expect(hostOf('http://go.example.com')).toBe('go.example.com')
    expect(hostOf('/x')).toBe('')
  })
})

/** A change source that records subscriptions and can fire messages and resets by hand. */
function fakeSource() {
  const listeners: { onMessage: (m: string) => void; onReset?: () => void; channel: string }[] = []
  const source: Pick<LinkSource, 'subscribe'> = {
    async subscribe(channel, onMessage, onReset) {
      listeners.push({ channel, onMessage, onReset })
      return async () => {}
    },
  }
  return {
    source,
    listeners,
    message: (host: string) => {
      for (const l of listeners) if (l.channel === DOMAIN_CHANNEL) l.onMessage(host)
    },
    reset: () => {
      for (const l of listeners) l.onReset?.()
    },
  }
}

describe('DomainSet', () => {
  test('tells the default domain under any name, verified custom domains and unknown hosts apart', async () => {
    const { source, listeners } = fakeSource()
    const set = new DomainSet('sho.rt:8080', async () => list(['go.example.com']), source, { refreshMs: 60_000 })
    expect(set.match('http://go.example.com/x'), 'before the first load: cannot tell').toBeUndefined()
    await set.start()
    expect(listeners.map((l) => l.channel)).toEqual([DOMAIN_CHANNEL])
    for (const url of ['http://sho.rt/x', 'http://sho.rt:9999/x', 'http://127.0.0.1:8080/x', 'http://localhost:8080/x', 'http://[::1]/x']) {
      expect(set.match(url), url).toBe(DEFAULT_DOMAIN)
    }
    const custom = set.match('http://go.example.com:8080/x')
    expect(custom).toBeInstanceOf(CustomDomain)
    expect((custom as CustomDomain).keyPrefix).toBe(linkCacheKey('go.example.com', ''))
    expect(set.match('http://go.example.com./x')).toBe(custom)
    expect(set.match('http://evil.example.com/x')).toBeNull()
    expect(set.match('http://www.sho.rt/x')).toBeNull()
    await set.close()
  })

  test('a change message or a reset reloads the set; a change during a load causes one more load', async () => {
    const { source, message, reset } = fakeSource()
    let hosts = ['a.example.com']
    let loads = 0
    let gate: Promise<void> = Promise.resolve()
    const load: LoadDomains = async () => {
      loads++
      const snapshot = [...hosts]
      await gate
      return list(snapshot)
    }
    const set = new DomainSet(SHORT, load, source, { refreshMs: 60_000 })
    await set.start()
    expect(loads).toBe(1)
    hosts = ['a.example.com', 'b.example.com']
    message('b.example.com')
    await until(() => set.match('http://b.example.com/x') !== null, 'b.example.com added')
    expect(loads).toBe(2)

    // A load in flight read the old list; the change announced meanwhile must not be lost.
    let open!: () => void
    gate = new Promise((resolve) => (open = resolve))
    hosts = ['a.example.com']
    reset()
    hosts = []
    message('a.example.com')
    message('a.example.com')
    open()
    gate = Promise.resolve()
    await until(() => set.match('http://a.example.com/x') === null, 'a.example.com removed')
    expect(loads).toBe(4) // the one in flight, then exactly one more for both messages
    expect(set.counters).toMatchObject({ changes: 3, loads: 4, size: 0 })
    await set.close()
  })

  test('a failed load keeps the last good set and is retried; the outage is logged once', async () => {
    const { source, message } = fakeSource()
    let fail = false
    let loads = 0
    const log: string[] = []
    const set = new DomainSet(
      SHORT,
      async () => {
        loads++
        if (fail) throw new Error('API down')
        return list(['a.example.com'])
      },
      source,
      { refreshMs: 60_000, retryMs: 10, log: (line) => log.push(line) },
    )
    await set.start()
    fail = true
    message('x')
    await until(
      () => loads >= 4,
      () => `4 loads, ${loads} so far`,
    )
    expect(set.match('http://a.example.com/x')).toBeInstanceOf(CustomDomain)
    expect(log.filter((l) => l.includes('could not be loaded'))).toHaveLength(1)
    fail = false
    await until(
      () => log.some((l) => l.includes('loaded again')),
      () => `'loaded again' logged: ${log.join(' | ')}`,
    )
    expect(set.counters.loadErrors).toBeGreaterThanOrEqual(3)
    await set.close()
  })

  test('parseDomainList refuses anything but a list of names and a map of web URLs', () => {
    // Without root_urls (an API of the previous version during a rolling deploy): every root neutral.
    expect(parseDomainList('{"domains":["a.example.com"]}')).toEqual(list(['a.example.com']))
    expect(parseDomainList('{"domains":["a.example.com"],"root_urls":{"a.example.com":"https://example.com/"}}')).toEqual(list(['a.example.com'], { 'a.example.com': 'https://example.com/' }))
    for (const text of ['{}', '{"domains":[1]}', 'null', '[]', '{"domains":[],"root_urls":[]}', '{"domains":[],"root_urls":{"a":1}}', '{"domains":[],"root_urls":{"a":"javascript:alert(1)"}}']) {
      expect(() => parseDomainList(text), text).toThrow()
    }
    expect(() => parseDomainList('<html>')).toThrow()
  })
})

describe('the redirect handler with custom domains', () => {
  function link(url: string): CachedLink {
    return { v: 1, id: `link_${crypto.randomUUID()}`, url }
  }

  async function setup(loadDomains: LoadDomains = async () => list(['go.example.com'])) {
    const kv = new MemoryKv()
    let resolves = 0
    const resolver = new LinkResolver(
      kv,
      async () => {
        resolves++
        return null
      },
      { l1TtlMs: 60_000, l1MaxEntries: 100, negativeTtlMs: 60_000 },
    )
    const domains = new DomainSet(SHORT, loadDomains, kv, { refreshMs: 60_000, retryMs: 60_000 })
    await domains.start()
    const clicks: ClickEvent[] = []
    const deps: RedirectDeps = {
      resolver,
      record: (click) => void clicks.push(click),
      shortDomain: SHORT,
      keyPrefix: linkCacheKey(SHORT, ''),
      health: () => new Response('ok'),
      domains,
      rootRedirectUrl: 'https://api.sho.rt/app',
    }
    const put = (host: string, alias: string, value: CachedLink) => kv.set(linkCacheKey(host, alias), encodeCachedLink(value), 60)
    const get = (url: string) => handleRedirect(new Request(url), deps)
    return { kv, clicks, put, get, domains, resolves: () => resolves }
  }

  test('a verified custom domain serves its own links (1-character aliases too) and records its name on the click', async () => {
    const { clicks, put, get } = await setup()
    await put('go.example.com', 'x', link('https://example.com/custom'))
    await put(SHORT, 'x', link('https://example.com/default'))
    const custom = await get('http://go.example.com/x')
    expect(custom.status).toBe(302)
    expect(custom.headers.get('location')).toBe('https://example.com/custom')
    expect(clicks.at(-1)).toMatchObject({ domain: 'go.example.com', alias: 'x' })
    const onDefault = await get('http://sho.rt/x')
    expect(onDefault.headers.get('location')).toBe('https://example.com/default')
    expect(clicks.at(-1)).toMatchObject({ domain: SHORT, alias: 'x' })
    // Another name of the default domain is the default domain.
    expect((await get('http://127.0.0.1:3001/x')).headers.get('location')).toBe('https://example.com/default')
  })

  test('an unknown host is a 404 without asking the cache or the API', async () => {
    const { get, resolves, clicks } = await setup()
    for (let i = 0; i < 50; i++) {
      const response = await get(`http://random-${i}.example.net/abcd`)
      expect(response.status).toBe(404)
    }
    expect(resolves()).toBe(0)
    expect(clicks).toHaveLength(0)
  })

  test('"health" is an alias like any other on a custom domain; the default domain keeps its health answer', async () => {
    const { put, get } = await setup()
    await put('go.example.com', 'health', link('https://example.com/health-page'))
    expect((await get('http://go.example.com/health')).headers.get('location')).toBe('https://example.com/health-page')
    expect(await (await get('http://sho.rt/health')).text()).toBe('ok')
  })

  test('before the set has ever loaded, other hosts get 503 (cannot tell), the default domain is unaffected', async () => {
    const { put, get } = await setup(async () => {
      throw new Error('API down')
    })
    await put(SHORT, 'abcd', link('https://example.com/default'))
    expect((await get('http://go.example.com/abcd')).status).toBe(503)
    expect((await get('http://sho.rt/abcd')).status).toBe(302)
  })

  test('a domain removed by the API stops resolving once the change is announced', async () => {
    let hosts = ['go.example.com']
    const { kv, put, get } = await setup(async () => list(hosts))
    await put('go.example.com', 'gone', link('https://example.com/gone'))
    expect((await get('http://go.example.com/gone')).status).toBe(302)
    hosts = []
    await kv.publish(DOMAIN_CHANNEL, 'go.example.com')
    await until(async () => (await get('http://go.example.com/gone')).status === 404, 'the removed domain answering 404')
  })

  test('the root: the default domain (any of its names) leads to the dashboard, a custom domain to a neutral page, an unknown host 404', async () => {
    const { get, clicks } = await setup()
    for (const url of ['http://sho.rt/', 'http://sho.rt/?utm_source=x', 'http://127.0.0.1:3001/']) {
      const response = await get(url)
      expect(response.status, url).toBe(302)
      expect(response.headers.get('location'), url).toBe('https://api.sho.rt/app')
    }
    const custom = await get('http://go.example.com/')
    expect(custom.status).toBe(200)
    expect(await custom.text()).toContain('serves short links')
    expect(custom.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect((await get('http://random.example.net/')).status).toBe(404)
    expect(clicks).toHaveLength(0)
  })

  test("a custom domain's root leads where its owner set it, and changes once the API announces it", async () => {
    let roots: Record<string, string> = { 'go.example.com': 'https://example.com/home' }
    const { kv, get, clicks } = await setup(async () => list(['go.example.com', 'plain.example.com'], roots))
    const set = await get('http://go.example.com/?ref=x')
    expect(set.status).toBe(302)
    expect(set.headers.get('location')).toBe('https://example.com/home')
    expect((await get('http://plain.example.com/')).status, 'a domain without one keeps the neutral page').toBe(200)
    roots = {}
    await kv.publish(DOMAIN_CHANNEL, 'go.example.com')
    await until(async () => (await get('http://go.example.com/')).status === 200, 'the cleared root showing the neutral page')
    expect(clicks, 'a root is no click').toHaveLength(0)
  })
})
