// A link taken down at the redirector: disabled answers 410 with no Location and no click; flagged shows
// its destination and a Continue link, and only that signed link redirects and counts; `/{alias}+` shows
// the link without following it and files the visitor's report.
import { describe, expect, test } from 'bun:test'
import { MemoryKv } from '../src/adapters/memory-kv'
import type { ClickEvent } from '../core/clicks'
import type { Peer } from '../core/client-ip'
import { encodeCachedLink, linkCacheKey, type CachedLink } from '../core/link-cache'
import { continueKey, continueToken, CONTINUE_TTL_MS } from './continue-token'
import { handleRedirect, type RedirectDeps } from './handler'
import type { ReportInput, ReportResult } from './internal-api'
import type { InspectView } from './pages'
import { LinkResolver } from './resolver'

const domain = 'sho.rt'
const KEY = continueKey('x'.repeat(32))
const NOW = Date.parse('2026-11-28T12:00:00Z')

function link(overrides: Partial<CachedLink> = {}): CachedLink {
  return { v: 3, id: `link_${crypto.randomUUID()}`, url: 'https://xn--bcher-kva.example/login?a=1', ...overrides }
}

async function setup(extra: Partial<RedirectDeps> = {}) {
  const kv = new MemoryKv()
  const resolver = new LinkResolver(kv, async () => null, { l1TtlMs: 60_000, l1MaxEntries: 100, negativeTtlMs: 60_000 })
  await resolver.listen()
  const clicks: ClickEvent[] = []
  const reports: ReportInput[] = []
  const deps: RedirectDeps = {
    resolver,
    record: (click) => void clicks.push(click),
    shortDomain: domain,
    keyPrefix: linkCacheKey(domain, ''),
    continueKey: KEY,
    now: () => NOW,
    clientIp: { from: 'header', header: 'x-test-ip' },
    ...extra,
  }
  const put = (alias: string, value: CachedLink) => kv.set(linkCacheKey(domain, alias), encodeCachedLink(value), 60)
  const peer: Peer = { requestIP: () => ({ address: '10.0.0.2' }) }
  const visit = async (path: string, init: RequestInit = {}) => {
    const response = await handleRedirect(new Request(`http://${domain}${path}`, { ...init, headers: { 'x-test-ip': '198.51.100.7', ...(init.headers as Record<string, string>) } }), deps, peer)
    return { status: response.status, location: response.headers.get('location'), text: await response.text() }
  }
  return { clicks, reports, put, visit, deps }
}

describe('a disabled link', () => {
  test('410 page saying it was disabled for abuse; no Location, no click, whatever the method or a token', async () => {
    const { clicks, put, visit } = await setup()
    const target = link({ st: 'disabled' })
    await put('gone', target)
    for (const path of ['/gone', `/gone?continue=${continueToken(KEY, target.id, NOW)}`]) {
      const answer = await visit(path)
      expect(answer.status, path).toBe(410)
      expect(answer.location).toBeNull()
      expect(answer.text).toContain('disabled for abuse')
      expect(answer.text).not.toContain('bcher')
    }
    expect((await visit('/gone', { method: 'HEAD' })).status).toBe(410)
    expect(clicks).toEqual([])
  })
})

describe('a flagged link', () => {
  test('the warning shows the destination in full (punycode) and a Continue link; no click until it is followed', async () => {
    const { clicks, put, visit } = await setup()
    await put('warn', link({ st: 'flagged' }))
    const page = await visit('/warn')
    expect(page.status).toBe(200)
    expect(page.location).toBeNull()
    expect(page.text).toContain('https://xn--bcher-kva.example/login?a=1')
    expect(page.text).toContain('href="/warn+"')
    const continueHref = /href="(\/warn\?continue=[^"]+)"/.exec(page.text)?.[1]?.replaceAll('&#38;', '&')
    expect(continueHref, page.text).toBeDefined()
    expect(clicks).toEqual([])
    const followed = await visit(continueHref!)
    expect(followed.status).toBe(302)
    expect(followed.location).toBe('https://xn--bcher-kva.example/login?a=1')
    expect(clicks).toHaveLength(1)
  })

  test("a tampered, another link's, or expired token shows the warning again, uncounted", async () => {
    const { clicks, put, visit } = await setup()
    const target = link({ st: 'flagged' })
    await put('warn2', target)
    const good = continueToken(KEY, target.id, NOW)
    const tampered = `${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`
    const otherLink = continueToken(KEY, 'link_other', NOW)
    const expired = continueToken(KEY, target.id, NOW - CONTINUE_TTL_MS - 5000)
    const otherKey = continueToken(continueKey('y'.repeat(32)), target.id, NOW)
    for (const token of [tampered, otherLink, expired, otherKey, '', 'abc', `${Math.floor(NOW / 1000) + 99999}.x`]) {
      const answer = await visit(`/warn2?continue=${encodeURIComponent(token)}`)
      expect(answer.status, token).toBe(200)
      expect(answer.location, token).toBeNull()
    }
    expect(clicks).toEqual([])
  })

  test('a flagged password link does not show its destination', async () => {
    const { put, visit } = await setup()
    await put('pwf', link({ st: 'flagged', pw: 1 }))
    const page = await visit('/pwf')
    expect(page.status).toBe(200)
    expect(page.text).not.toContain('bcher')
    expect(page.text).toContain('password-protected')
  })
})

describe('the inspect page, /{alias}+', () => {
  const view: InspectView = { url: 'https://example.com/x?<script>', createdAt: '2026-11-01T10:00:00.000Z', by: 'guest', state: 'ok' }

  test('shows the link without following it, its age and maker, escaped; unknown is 404; no API is 503', async () => {
    const { put, visit } = await setup({ inspect: async (d, a) => (a === 'seen' && d === domain ? view : null), report: async () => ({ kind: 'filed' }) })
    await put('seen', link())
    const page = await visit('/seen+')
    expect(page.status).toBe(200)
    expect(page.location).toBeNull()
    expect(page.text).toContain('https://example.com/x?&#60;script&#62;')
    expect(page.text).toContain('2026-11-01')
    expect(page.text).toContain('a guest')
    expect(page.text).toContain('<form method="post">')
    expect((await visit('/nobody+')).status).toBe(404)
    const { visit: bare } = await setup()
    expect((await bare('/seen+')).status).toBe(503)
  })

  test("the form files a report with the visitor's address; each answer of the API shown as it should be", async () => {
    const filed: ReportInput[] = []
    let next: ReportResult = { kind: 'filed' }
    const { visit } = await setup({
      inspect: async () => view,
      report: async (input) => {
        filed.push(input)
        return next
      },
    })
    const post = (body: string) => visit('/seen+', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })
    const first = await post('reason=phishing&details=fake+bank&email=me%40example.com')
    expect(first.status).toBe(201)
    expect(first.text).toContain('Thank you')
    expect(filed[0]).toEqual({ domain, alias: 'seen', reason: 'phishing', details: 'fake bank', email: 'me@example.com', ip: '198.51.100.7' })
    next = { kind: 'already' }
    expect((await post('reason=spam')).text).toContain('already')
    next = { kind: 'invalid', hint: 'body.reason: one of <x>' }
    const invalid = await post('reason=nope')
    expect(invalid.status).toBe(400)
    expect(invalid.text).toContain('one of &#60;x&#62;')
    next = { kind: 'limited', retryAfterSeconds: 120 }
    expect((await post('reason=spam')).status).toBe(429)
    expect((await visit('/seen+', { method: 'POST', body: 'not a form' })).status).toBe(400)
  })
})
