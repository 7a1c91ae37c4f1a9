import { describe, expect, test } from 'bun:test'
import { ClickEncoder, CLICK_COLUMNS, type ClickEvent } from './clicks'
import { classifyUserAgent, referrerHost, utmSnapshot } from './enrich'
import { countryOfIp, ipv4Number, ipv6High, loadIpCountries, mappedIpv4Start } from './enrich-geo'

const UA = {
  chromeDesktop: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  iphoneSafari: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1',
  android: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  cubotPhone: 'Mozilla/5.0 (Linux; Android 9; CUBOT P30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  curl: 'curl/8.4.0',
}

describe('user agent enrichment', () => {
  test('typical browsers get device, browser and OS, and are not bots', () => {
    expect(classifyUserAgent(UA.chromeDesktop)).toEqual({ deviceType: 'desktop', browser: 'Chrome', os: 'Windows', isBot: false, botReason: '' })
    expect(classifyUserAgent(UA.iphoneSafari)).toEqual({ deviceType: 'mobile', browser: 'Mobile Safari', os: 'iOS', isBot: false, botReason: '' })
    expect(classifyUserAgent(UA.android)).toEqual({ deviceType: 'mobile', browser: 'Chrome', os: 'Android', isBot: false, botReason: '' })
    expect(classifyUserAgent(UA.ipad).deviceType).toBe('tablet')
    expect(classifyUserAgent(UA.cubotPhone).isBot).toBe(false)
  })

  test('crawlers, HTTP tools and an empty user agent are bots, with the reason kept', () => {
    expect(classifyUserAgent(UA.googlebot)).toMatchObject({ deviceType: 'bot', isBot: true, botReason: 'googlebot' })
    expect(classifyUserAgent(UA.curl)).toMatchObject({ deviceType: 'bot', isBot: true, botReason: 'curl' })
    expect(classifyUserAgent('')).toEqual({ deviceType: 'bot', browser: '', os: '', isBot: true, botReason: 'empty-user-agent' })
    expect(classifyUserAgent('facebookexternalhit/1.1')).toMatchObject({ isBot: true, botReason: 'facebookexternalhit' })
    expect(classifyUserAgent('python-requests/2.31.0')).toMatchObject({ isBot: true, botReason: 'python-requests' })
  })

  test('a browser on neither a phone, a tablet nor a desktop OS is "other"', () => {
    const console = 'Mozilla/5.0 (PlayStation; PlayStation 5/2.26) AppleWebKit/605.1.15 (KHTML, like Gecko)'
    expect(classifyUserAgent(console)).toMatchObject({ deviceType: 'other', isBot: false, os: 'PlayStation' })
  })

  test("a bare product token that is no browser counts as a bot (isbot's rule)", () => {
    expect(classifyUserAgent('SomeSmartFridge/1.0')).toMatchObject({ isBot: true, botReason: 'somesmartfridge' })
  })
})

describe('referrer host', () => {
  test('takes the lowercased host of http(s) referrers', () => {
    expect(referrerHost('https://News.Example.com/a/b?c=d#e')).toBe('news.example.com')
    expect(referrerHost('http://user:pw@example.org:8080/x')).toBe('example.org')
    expect(referrerHost('https://t.co')).toBe('t.co')
    expect(referrerHost('https://[2001:db8::1]:443/')).toBe('[2001:db8::1]')
    expect(referrerHost('android-app://com.google.android.gm/')).toBe('')
  })

  test('anything that is not an http(s) URL gives an empty host', () => {
    for (const bad of ['', 'not a url', 'https://', 'ftp://example.com/', 'javascript:alert(1)', 'https://exa mple.com/', 'https://a\tb/', '//example.com/']) {
      expect(referrerHost(bad), JSON.stringify(bad)).toBe('')
    }
  })
})

describe('UTM snapshot', () => {
  test('reads the utm_* parameters of the destination, decoded, ignoring the fragment', () => {
    expect(utmSnapshot('https://shop.example/p?utm_source=news%20letter&utm_medium=email&utm_campaign=spring&utm_term=shoes&utm_content=hero&x=1#utm_source=no')).toEqual({
      source: 'news letter',
      medium: 'email',
      campaign: 'spring',
      term: 'shoes',
      content: 'hero',
    })
    expect(utmSnapshot('https://shop.example/p?utm_source=x')).toEqual({ source: 'x', medium: '', campaign: '', term: '', content: '' })
  })

  test('a destination without UTM parameters gives empty values', () => {
    const empty = { source: '', medium: '', campaign: '', term: '', content: '' }
    expect(utmSnapshot('https://shop.example/p')).toEqual(empty)
    expect(utmSnapshot('https://shop.example/p#?utm_source=x')).toEqual(empty)
    expect(utmSnapshot('')).toEqual(empty)
  })
})

describe('country by IP', () => {
  test('parses addresses', () => {
    expect(ipv4Number('8.8.8.8')).toBe(0x08080808)
    expect(ipv4Number('255.255.255.255')).toBe(0xffffffff)
    for (const bad of ['256.1.1.1', '1.2.3', '1.2.3.4.5', 'a.b.c.d', '', '1..2.3']) expect(ipv4Number(bad), bad).toBe(-1)
    // The quad of an IPv4-mapped address, read in place.
    expect(ipv4Number('::ffff:8.8.8.8', 7)).toBe(0x08080808)
    for (const [text, start] of [
      ['::ffff:8.8.8.8', 7],
      ['::FFFF:8.8.8.8', 7],
      ['::fFfF:1.2.3.4', 7],
      ['::ffff:c633:6407', 7],
      ['::ffff:1.2.3', -1],
      [':ffff:8.8.8.8', -1],
      ['::fffe:8.8.8.8', -1],
      ['8.8.8.8', -1],
      ['', -1],
    ] as const) {
      expect(mappedIpv4Start(text), text).toBe(start)
    }
    expect(ipv6High('2001:4860:4860::8888')).toBe(0x2001486048600000n)
    expect(ipv6High('::1')).toBe(0n)
    expect(ipv6High('fe80::1%eth0')).toBe(0xfe80000000000000n)
    expect(ipv6High('1::2::3')).toBeNull()
    expect(ipv6High('zz::1')).toBeNull()
  })

  test('known addresses map to their registry country; private ones to none', async () => {
    const table = await loadIpCountries()
    expect(table.v4Start.length, 'IPv4 ranges loaded').toBeGreaterThan(100_000)
    expect(countryOfIp('8.8.8.8')).toBe('US') // Google, ARIN
    expect(countryOfIp('193.0.6.139')).toBe('NL') // RIPE NCC
    expect(countryOfIp('133.11.0.1')).toBe('JP') // University of Tokyo
    expect(countryOfIp('::ffff:8.8.8.8')).toBe('US')
    expect(countryOfIp('2001:4860:4860::8888')).toBe('US')
    for (const none of ['10.0.0.1', '127.0.0.1', '192.168.1.1', '172.16.5.4', '100.64.0.1', '::1', 'fd00::1', 'fe80::1', 'garbage', '']) expect(countryOfIp(none), none).toBe('')
  })
})

describe('click encoder', () => {
  const base: ClickEvent = {
    clickId: 'c1',
    linkId: 'link_1',
    domain: 'sho.rt',
    alias: 'abcd',
    at: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
    referrer: 'https://news.example/x',
    userAgent: UA.iphoneSafari,
    ip: '8.8.8.8',
    country: '',
    url: 'https://shop.example/?utm_source=nl&utm_campaign=a\tb',
  }

  test('writes every column in CLICK_COLUMNS order, the country from the IP when no header gave one', async () => {
    const encoder = new ClickEncoder('secret')
    await encoder.prepare()
    const fields = encoder.encode(base).slice(0, -1).split('\t')
    expect(fields).toHaveLength(CLICK_COLUMNS.length)
    const row = Object.fromEntries(CLICK_COLUMNS.map((c, i) => [c, fields[i]]))
    expect(row).toMatchObject({
      country: 'US',
      device_type: 'mobile',
      browser: 'Mobile Safari',
      os: 'iOS',
      is_bot: '0',
      bot_reason: '',
      referrer_host: 'news.example',
      utm_source: 'nl',
      utm_medium: '',
      utm_campaign: 'a\\tb',
      utm_term: '',
      utm_content: '',
    })
    expect(encoder.encode({ ...base, country: 'fr' }).split('\t')[8]).toBe('FR')
    expect(
      encoder
        .encode({ ...base, userAgent: UA.googlebot })
        .split('\t')
        .slice(9, 14),
    ).toEqual(['bot', '', '', '1', 'googlebot'])
  })

  test('without geo by IP the country is the header or nothing', async () => {
    const encoder = new ClickEncoder('secret', { geoByIp: false })
    await encoder.prepare()
    expect(encoder.encode(base).split('\t')[8]).toBe('')
  })
})
