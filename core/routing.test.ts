// The routing matcher on its own: devices from real User-Agents, Accept-Language with q-values, CIDR
// blocks of both families, query values with percent-encoding, time windows, the rule order and the
// A/B split.
import { describe, expect, test } from 'bun:test'
import { acceptedLanguages, bucketSeed, compileRouting, devicesOf, parseCidr, pickRoute, visitorBucket, type CachedRouting, type Device, type VisitorFacts } from './routing'

/** Real User-Agent strings and the devices each must be (platform and kind). */
const USER_AGENTS: [string, Device[]][] = [
  // iPhones and iPads (iOS 12 to 18, Safari, Chrome, Firefox, in-app browsers)
  ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1', ['ios', 'mobile']],
  ['Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1', ['ios', 'mobile']],
  ['Mozilla/5.0 (iPhone; CPU iPhone OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/120.0 Mobile/15E148 Safari/605.1.15', ['ios', 'mobile']],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 326.0.3.30.91 (iPhone14,5; iOS 17_4; en_US; en; scale=3.00; 1170x2532; 590160221)',
    ['ios', 'mobile'],
  ],
  ['Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1', ['ios', 'mobile']],
  ['Mozilla/5.0 (iPad; CPU OS 12_5_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.1.2 Mobile/15E148 Safari/604.1', ['ios', 'mobile']],
  ['Mozilla/5.0 (iPod touch; CPU iPhone OS 12_5_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.1.2 Mobile/15E148 Safari/604.1', ['ios', 'mobile']],
  // Android phones and tablets
  ['Mozilla/5.0 (Linux; Android 14; Pixel 8 Pro) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Mobile Safari/537.36', ['android', 'mobile']],
  ['Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/23.0 Chrome/115.0.0.0 Mobile Safari/537.36', ['android', 'mobile']],
  ['Mozilla/5.0 (Android 14; Mobile; rv:132.0) Gecko/132.0 Firefox/132.0', ['android', 'mobile']],
  ['Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36', ['android', 'mobile']],
  ['Mozilla/5.0 (Linux; Android 12; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.230 Safari/537.36', ['android', 'mobile']],
  ['Mozilla/5.0 (Linux; Android 9; KFTRWI) AppleWebKit/537.36 (KHTML, like Gecko) Silk/118.3.6 like Chrome/118.0.5993.159 Safari/537.36', ['android', 'mobile']],
  [
    'Mozilla/5.0 (Linux; Android 11; Redmi Note 8 Pro Build/RP1A.200720.011; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/119.0.6045.163 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/441.0.0.33.113;]',
    ['android', 'mobile'],
  ],
  ['Opera/9.80 (Android; Opera Mini/36.2.2254/119.132; U; id) Presto/2.12.423 Version/12.16', ['android', 'mobile']],
  // Other phones
  ['Mozilla/5.0 (Windows Phone 10.0; Android 6.0.1; Microsoft; Lumia 950) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/52.0.2743.116 Mobile Safari/537.36 Edge/15.15063', ['android', 'mobile']],
  ['Mozilla/5.0 (compatible; MSIE 10.0; Windows Phone 8.0; Trident/6.0; IEMobile/10.0; ARM; Touch; NOKIA; Lumia 920)', ['mobile']],
  ['Mozilla/5.0 (BB10; Touch) AppleWebKit/537.10+ (KHTML, like Gecko) Version/10.0.9.2372 Mobile Safari/537.10+', ['mobile']],
  // Windows desktops
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', ['windows', 'desktop']],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0', ['windows', 'desktop']],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0', ['windows', 'desktop']],
  ['Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; rv:11.0) like Gecko', ['windows', 'desktop']],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OPR/114.0.0.0', ['windows', 'desktop']],
  // Macs (an iPad in desktop mode sends this too: it is a Mac to the server)
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15', ['macos', 'desktop']],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', ['macos', 'desktop']],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14.7; rv:133.0) Gecko/20100101 Firefox/133.0', ['macos', 'desktop']],
  // Linux desktops
  ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', ['linux', 'desktop']],
  ['Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', ['linux', 'desktop']],
  ['Mozilla/5.0 (X11; Fedora; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', ['linux', 'desktop']],
  ['Mozilla/5.0 (X11; FreeBSD amd64; rv:128.0) Gecko/20100101 Firefox/128.0', ['linux', 'desktop']],
  // ChromeOS
  ['Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', ['chromeos', 'desktop']],
  ['Mozilla/5.0 (X11; CrOS aarch64 15183.69.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', ['chromeos', 'desktop']],
  // Bots and tools: no platform, so no device rule matches them (a bot posing as a phone is that phone)
  ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', []],
  ['Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', []],
  ['facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)', []],
  ['curl/8.5.0', []],
  ['', []],
  [
    'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    ['android', 'mobile'],
  ],
]

function visitor(facts: Partial<Record<keyof VisitorFacts, string>>): VisitorFacts & { asked: string[] } {
  const asked: string[] = []
  const fact = (name: keyof VisitorFacts) => () => {
    asked.push(name)
    return facts[name] ?? ''
  }
  return { asked, userAgent: fact('userAgent'), country: fact('country'), acceptLanguage: fact('acceptLanguage'), query: fact('query'), ip: fact('ip') }
}

const NOW = Date.parse('2026-11-28T12:00:00Z')
const noBucket = () => {
  throw new Error('bucket asked without a sticky A/B test')
}

function pick(routing: CachedRouting, facts: Partial<Record<keyof VisitorFacts, string>>, now = NOW) {
  return pickRoute(compileRouting(routing), visitor(facts), now, noBucket)?.route ?? 'default'
}

describe('devices from the User-Agent', () => {
  test(`${USER_AGENTS.length} real User-Agents: phones, tablets, desktops, ChromeOS, bots`, () => {
    expect(USER_AGENTS.length).toBeGreaterThanOrEqual(30)
    for (const [userAgent, expected] of USER_AGENTS) expect([...devicesOf(userAgent)].sort(), userAgent).toEqual([...expected].sort())
  })

  test('a device rule matches any of its values', () => {
    const routing: CachedRouting = { rules: [{ id: 'apps', url: 'https://apps.example/', device: ['ios', 'android'] }] }
    expect(pick(routing, { userAgent: USER_AGENTS[0]![0] })).toBe('rule:apps')
    expect(pick(routing, { userAgent: USER_AGENTS[7]![0] })).toBe('rule:apps')
    expect(pick(routing, { userAgent: USER_AGENTS[18]![0] })).toBe('default')
  })
})

describe('Accept-Language', () => {
  test('tags with q above zero, lower-cased; q=0 and * name nothing', () => {
    expect(acceptedLanguages('en-US,en;q=0.9,fr;q=0.8,de;q=0,*;q=0.1').map((l) => l.tag)).toEqual(['en-us', 'en', 'fr'])
    expect(acceptedLanguages('')).toEqual([])
    expect(acceptedLanguages('pt-BR ; q = 0.5').map((l) => l.tag)).toEqual(['pt-br'])
    expect(acceptedLanguages('es;q=0.000, it;q=abc').map((l) => l.tag)).toEqual([])
  })

  test('"en" matches any en-*; "pt-BR" matches pt-BR only, case-insensitively', () => {
    const routing: CachedRouting = {
      rules: [
        { id: 'en', url: 'https://en.example/', language: ['en'] },
        { id: 'br', url: 'https://br.example/', language: ['pt-br'] },
      ],
    }
    expect(pick(routing, { acceptLanguage: 'en-GB' })).toBe('rule:en')
    expect(pick(routing, { acceptLanguage: 'fr-FR,EN;q=0.5' })).toBe('rule:en')
    expect(pick(routing, { acceptLanguage: 'PT-br' })).toBe('rule:br')
    expect(pick(routing, { acceptLanguage: 'pt-PT,pt;q=0.9' })).toBe('default')
    expect(pick(routing, { acceptLanguage: 'en;q=0' })).toBe('default')
    expect(pick(routing, { acceptLanguage: '*' })).toBe('default')
    expect(pick(routing, { acceptLanguage: 'english' })).toBe('default')
  })
})

describe('IP blocks', () => {
  const routing: CachedRouting = {
    rules: [{ id: 'office', url: 'https://office.example/', ip: ['203.0.113.0/24', '2001:db8:aa00::/40', '198.51.100.7', '::ffff:192.0.2.0/120'] }],
  }

  test('IPv4 and IPv6 blocks, a bare address, an IPv4-mapped client address and block', () => {
    for (const ip of ['203.0.113.1', '203.0.113.255', '2001:db8:aa12::1', '[2001:db8:aaff:ffff::9]', '198.51.100.7', '::ffff:203.0.113.9', '192.0.2.77', '::ffff:c000:0201']) {
      expect(pick(routing, { ip }), ip).toBe('rule:office')
    }
    for (const ip of ['203.0.114.1', '2001:db8:ab00::1', '198.51.100.8', '::ffff:203.0.114.9', '2001:db9::1', '', 'unknown', '192.0.3.1']) {
      expect(pick(routing, { ip }), ip).toBe('default')
    }
  })

  test('blocks parse strictly', () => {
    expect(parseCidr('10.0.0.0/8')).toEqual({ v4: true, words: [0x0a000000], bits: 8 })
    expect(parseCidr('::/0')?.bits).toBe(0)
    for (const bad of ['10.0.0.0/33', '10.0.0/8', '::1/129', '10.0.0.0/-1', '10.0.0.0/', 'example.com', '1.2.3.4/8x']) expect(parseCidr(bad), bad).toBeNull()
  })

  test('/0 holds every address of its family only', () => {
    const all: CachedRouting = { rules: [{ id: 'v4', url: 'https://a.example/', ip: ['0.0.0.0/0'] }] }
    expect(pick(all, { ip: '8.8.8.8' })).toBe('rule:v4')
    expect(pick(all, { ip: '2001:db8::1' })).toBe('default')
  })
})

describe('query parameters', () => {
  const routing: CachedRouting = {
    rules: [
      { id: 'promo', url: 'https://promo.example/', query: [['utm source', 'ü café']] },
      { id: 'ref', url: 'https://ref.example/', query: [['ref', null]] },
    ],
  }

  test('names and values compared after percent-decoding (and + as a space)', () => {
    expect(pick(routing, { query: 'utm%20source=%C3%BC%20caf%C3%A9' })).toBe('rule:promo')
    expect(pick(routing, { query: 'utm+source=%C3%BC+caf%C3%A9' })).toBe('rule:promo')
    expect(pick(routing, { query: 'x=1&utm%20source=other&utm%20source=%C3%BC%20caf%C3%A9' })).toBe('rule:promo')
    expect(pick(routing, { query: 'utm%20source=%C3%BC' })).toBe('default')
  })

  test('null: present with any value, even empty', () => {
    expect(pick(routing, { query: 'ref' })).toBe('rule:ref')
    expect(pick(routing, { query: 'ref=' })).toBe('rule:ref')
    expect(pick(routing, { query: 'reference=1' })).toBe('default')
  })

  test('a value full of pattern characters is compared as text', () => {
    const literal: CachedRouting = { rules: [{ id: 'l', url: 'https://l.example/', query: [['q', '.*(a+)+$']] }] }
    expect(pick(literal, { query: 'q=.*(a%2B)%2B%24' })).toBe('rule:l')
    expect(pick(literal, { query: 'q=aaaa' })).toBe('default')
  })
})

describe('time windows, countries, order', () => {
  test('after is inclusive, before exclusive', () => {
    const launch = Date.parse('2026-12-01T00:00:00Z')
    const end = Date.parse('2026-12-02T00:00:00Z')
    const routing: CachedRouting = { rules: [{ id: 'day', url: 'https://day.example/', after: launch, before: end }] }
    expect(pick(routing, {}, launch - 1)).toBe('default')
    expect(pick(routing, {}, launch)).toBe('rule:day')
    expect(pick(routing, {}, end - 1)).toBe('rule:day')
    expect(pick(routing, {}, end)).toBe('default')
  })

  test('country codes compared upper-case', () => {
    const routing: CachedRouting = { rules: [{ id: 'de', url: 'https://de.example/', country: ['DE', 'AT'] }] }
    expect(pick(routing, { country: 'at' })).toBe('rule:de')
    expect(pick(routing, { country: 'CH' })).toBe('default')
    expect(pick(routing, { country: '' })).toBe('default')
  })

  test('all conditions of a rule must match; the first matching rule wins', () => {
    const routing: CachedRouting = {
      rules: [
        { id: 'ios-de', url: 'https://1.example/', device: ['ios'], country: ['DE'] },
        { id: 'ios', url: 'https://2.example/', device: ['ios'] },
        { id: 'de', url: 'https://3.example/', country: ['DE'] },
      ],
    }
    const iphone = USER_AGENTS[0]![0]
    expect(pick(routing, { userAgent: iphone, country: 'DE' })).toBe('rule:ios-de')
    expect(pick(routing, { userAgent: iphone, country: 'FR' })).toBe('rule:ios')
    expect(pick(routing, { userAgent: USER_AGENTS[18]![0], country: 'DE' })).toBe('rule:de')
  })

  test('an empty list: no device, country, language or IP holds it; an empty query list holds for every request', () => {
    const iphone = USER_AGENTS[0]![0]
    expect(pick({ rules: [{ id: 'd', url: 'https://d.example/', device: [] }] }, { userAgent: iphone })).toBe('default')
    expect(pick({ rules: [{ id: 'c', url: 'https://c.example/', country: [] }] }, { country: 'DE' })).toBe('default')
    expect(pick({ rules: [{ id: 'l', url: 'https://l.example/', language: [] }] }, { acceptLanguage: 'en' })).toBe('default')
    expect(pick({ rules: [{ id: 'i', url: 'https://i.example/', ip: [] }] }, { ip: '203.0.113.1' })).toBe('default')
    expect(pick({ rules: [{ id: 'i', url: 'https://i.example/', ip: ['not a block'] }] }, { ip: '203.0.113.1' })).toBe('default')
    expect(pick({ rules: [{ id: 'q', url: 'https://q.example/', query: [] }] }, {})).toBe('rule:q')
    expect(pick({ rules: [{ id: 'q', url: 'https://q.example/', query: [] }] }, { query: 'a=1' })).toBe('rule:q')
  })

  test('each fact is asked once however many rules ask for it', () => {
    const rules: CachedRouting = {
      rules: [
        { id: 'ios', url: 'https://1.example/', device: ['ios'] },
        { id: 'de', url: 'https://2.example/', country: ['DE'] },
        { id: 'fr', url: 'https://3.example/', language: ['fr'] },
        { id: 'ref', url: 'https://4.example/', query: [['ref', null]] },
        { id: 'lan', url: 'https://5.example/', ip: ['10.0.0.0/8'] },
        { id: 'android', url: 'https://6.example/', device: ['android'] },
        { id: 'at', url: 'https://7.example/', country: ['AT'] },
        { id: 'es', url: 'https://8.example/', language: ['es'] },
        { id: 'src', url: 'https://9.example/', query: [['src', null]] },
        { id: 'office', url: 'https://10.example/', ip: ['203.0.113.0/24'] },
      ],
    }
    const facts = visitor({ userAgent: 'curl/8.5.0', country: 'US', acceptLanguage: 'en', query: 'x=1', ip: '203.0.113.7' })
    expect(pickRoute(compileRouting(rules), facts, NOW, noBucket)?.route).toBe('rule:office')
    expect(facts.asked).toEqual(['userAgent', 'country', 'acceptLanguage', 'query', 'ip'])
  })

  test('a fact no rule asks for is never worked out', () => {
    const facts = visitor({ userAgent: USER_AGENTS[0]![0], country: 'DE' })
    pickRoute(compileRouting({ rules: [{ id: 'ios', url: 'https://i.example/', device: ['ios'] }] }), facts, NOW, noBucket)
    expect(facts.asked).toEqual(['userAgent'])
    const none = visitor({})
    expect(pickRoute(compileRouting({}), none, NOW, noBucket)).toBeNull()
    expect(none.asked).toEqual([])
  })
})

describe('A/B split', () => {
  const ab = (sticky: boolean): CachedRouting => ({
    ab: {
      sticky,
      variants: [
        { id: 'a', url: 'https://a.example/', weight: 20 },
        { id: 'b', url: 'https://b.example/', weight: 30 },
        { id: 'c', url: 'https://c.example/', weight: 50 },
      ],
    },
  })

  test('1,000 distinct visitors split within 5 points of the weights; each keeps its variant', () => {
    const seed = bucketSeed('a secret')
    const compiled = compileRouting(ab(true))
    const counts: Record<string, number> = {}
    for (let i = 0; i < 1000; i++) {
      const ip = `198.51.${i >> 8}.${i & 255}`
      const userAgent = USER_AGENTS[i % USER_AGENTS.length]![0]
      const first = pickRoute(compiled, visitor({ ip, userAgent }), NOW, () => visitorBucket(seed, ip, userAgent))!.route
      const again = pickRoute(compiled, visitor({ ip, userAgent }), NOW, () => visitorBucket(seed, ip, userAgent))!.route
      expect(again, `${ip} ${userAgent}`).toBe(first)
      counts[first] = (counts[first] ?? 0) + 1
    }
    expect(Math.abs((counts['ab:a'] ?? 0) / 10 - 20), JSON.stringify(counts)).toBeLessThanOrEqual(5)
    expect(Math.abs((counts['ab:b'] ?? 0) / 10 - 30), JSON.stringify(counts)).toBeLessThanOrEqual(5)
    expect(Math.abs((counts['ab:c'] ?? 0) / 10 - 50), JSON.stringify(counts)).toBeLessThanOrEqual(5)
  })

  test('not sticky: a weighted random pick, the bucket never asked', () => {
    const compiled = compileRouting(ab(false))
    const counts: Record<string, number> = {}
    for (let i = 0; i < 2000; i++) {
      const route = pickRoute(compiled, visitor({}), NOW, noBucket)!.route
      counts[route] = (counts[route] ?? 0) + 1
    }
    expect(Math.abs((counts['ab:c'] ?? 0) / 20 - 50), JSON.stringify(counts)).toBeLessThanOrEqual(5)
  })

  test('a visitor keeps the place every release has given it: sticky variants survive an upgrade', () => {
    const seed = bucketSeed('a secret')
    expect(seed).toBe(12109479648146132749n)
    expect(visitorBucket(seed, '198.51.100.1', '')).toBe(53.58)
    expect(visitorBucket(seed, '203.0.113.9', 'Mozilla/5.0 (iPhone)')).toBe(88.23)
    expect(visitorBucket(seed, '2001:db8::1', 'curl/8.5.0')).toBe(98.28)
    expect(visitorBucket(seed, '::ffff:127.0.0.1', '')).toBe(88.27)
    expect(visitorBucket(0n, '127.0.0.1', '')).toBe(36.05)
  })

  test('another secret places visitors elsewhere; the place is in [0, 100)', () => {
    const one = bucketSeed('one')
    const two = bucketSeed('two')
    let moved = 0
    for (let i = 0; i < 100; i++) {
      const a = visitorBucket(one, `10.0.0.${i}`, 'ua')
      expect(a).toBeGreaterThanOrEqual(0)
      expect(a).toBeLessThan(100)
      if (a !== visitorBucket(two, `10.0.0.${i}`, 'ua')) moved++
    }
    expect(moved).toBeGreaterThan(90)
  })

  test('a rule that matches goes before the test', () => {
    const routing: CachedRouting = { ...ab(true), rules: [{ id: 'de', url: 'https://de.example/', country: ['DE'] }] }
    expect(pickRoute(compileRouting(routing), visitor({ country: 'DE' }), NOW, noBucket)?.route).toBe('rule:de')
  })
})
