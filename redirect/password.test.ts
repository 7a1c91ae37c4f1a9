// Password-protected links end to end in one process: the real redirect handler, its resolver on the
// API's cache, and the API's /internal/unlock through app.handle().
import { beforeAll, describe, expect, test } from 'bun:test'
import type { ClickEvent } from '../core/clicks'
import { linkCacheKey } from '../core/link-cache'
import { newAccount, type TestAccount } from '../test/support/fixtures'
import { call, show, testApi, TEST_INTERNAL_SECRET } from '../test/support/api'
import { until } from '../test/support/wait'
import { handleRedirect, type RedirectDeps } from './handler'
import { internalApi, readUnlockAnswer, type Unlock } from './internal-api'
import { BAD_FORM, EMPTY_PASSWORD, WRONG_PASSWORD } from './password'
import { LinkResolver } from './resolver'

const IP_HEADER = 'x-visitor-ip'
let api: Awaited<ReturnType<typeof testApi>>
let account: TestAccount
let clicks: ClickEvent[]
let deps: RedirectDeps

const viaApp = (request: Request) => api.app.handle(request)

beforeAll(async () => {
  api = await testApi()
  account = await newAccount(api.deps.db, 'pro')
  // The embedded process's client: the internal API through app.handle().
  const internal = internalApi(viaApp, { apiUrl: 'http://localhost', secret: TEST_INTERNAL_SECRET, timeoutMs: 1000 })
  const resolver = new LinkResolver(api.adapters.kv, internal.resolve, { l1TtlMs: 60_000, l1MaxEntries: 1000, negativeTtlMs: 100 })
  await resolver.listen()
  clicks = []
  deps = {
    resolver,
    record: (click) => void clicks.push(click),
    shortDomain: 'sho.rt',
    keyPrefix: linkCacheKey('sho.rt', ''),
    clientIp: { from: 'header', header: IP_HEADER },
    unlock: internal.unlock,
  }
})

async function protectedLink(body: Record<string, unknown> = {}): Promise<string> {
  const alias = `pw-${crypto.randomUUID().slice(0, 12)}`
  const res = await call(api.app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: 'https://example.com/secret-page', alias, password: 'open sesame', ...body } })
  if (res.status !== 200) throw new Error(show(res))
  return alias
}

const visitor = () => `198.51.100.${Math.floor(Math.random() * 200)}-${crypto.randomUUID().slice(0, 6)}`
const get = (alias: string, d: RedirectDeps = deps) => handleRedirect(new Request(`http://sho.rt/${alias}`), d)
function post(alias: string, body: string, opts: { ip?: string; type?: string; d?: RedirectDeps } = {}) {
  const headers = { 'content-type': opts.type ?? 'application/x-www-form-urlencoded', [IP_HEADER]: opts.ip ?? visitor() }
  return handleRedirect(new Request(`http://sho.rt/${alias}`, { method: 'POST', headers, body }), opts.d ?? deps)
}
const form = (password: string) => new URLSearchParams({ password }).toString()

describe('password-protected links at the redirector', () => {
  test('GET shows the form; the right password redirects (302) and counts one click; nothing is stored client-side', async () => {
    const alias = await protectedLink()
    const page = await get(alias)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('<form method="post">')
    const before = clicks.length
    const response = await post(alias, form('open sesame'))
    expect(response.status, await response.clone().text()).toBe(302)
    expect(response.headers.get('location')).toBe('https://example.com/secret-page')
    expect(response.headers.get('cache-control')).toBe('private, max-age=0')
    expect(response.headers.get('set-cookie')).toBeNull()
    expect(clicks.length).toBe(before + 1)
    expect(clicks.at(-1)).toMatchObject({ alias, domain: 'sho.rt', linkId: expect.stringMatching(/^link_/) })
    expect(JSON.stringify(clicks.at(-1))).not.toContain('open sesame')
  })

  test('a wrong, empty or overlong password is 401 with the form again; a form of another kind is 400; no click', async () => {
    const alias = await protectedLink()
    const before = clicks.length
    const cases: [string, string | undefined, number, string][] = [
      [form('Open sesame'), undefined, 401, WRONG_PASSWORD],
      [form(''), undefined, 401, EMPTY_PASSWORD],
      ['other=1', undefined, 401, EMPTY_PASSWORD],
      [form('x'.repeat(129)), undefined, 401, WRONG_PASSWORD],
      [JSON.stringify({ password: 'open sesame' }), 'application/json', 400, BAD_FORM],
      [`password=${'x'.repeat(5000)}`, undefined, 400, BAD_FORM],
    ]
    for (const [body, type, status, notice] of cases) {
      const response = await post(alias, body, { type })
      const html = await response.text()
      expect(response.status, `${body.slice(0, 40)}: ${html.slice(0, 200)}`).toBe(status)
      expect(html).toContain(notice)
      expect(html).toContain('<form method="post">')
      expect(html).not.toContain('open sesame')
      expect(response.headers.get('location')).toBeNull()
    }
    expect(clicks.length).toBe(before)
  })

  test('after 5 attempts from one address the page is 429 with Retry-After, even for the right password; others still get in', async () => {
    const alias = await protectedLink()
    const ip = visitor()
    for (let i = 0; i < 5; i++) expect((await post(alias, form(`guess-${i}`), { ip })).status).toBe(401)
    const limited = await post(alias, form('open sesame'), { ip })
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(limited.headers.get('location')).toBeNull()
    expect((await post(alias, form('open sesame'))).status).toBe(302)
  })

  test('behind a proxy, a new left-most X-Forwarded-For entry per attempt does not escape the attempt limit', async () => {
    const alias = await protectedLink()
    const behindProxy: RedirectDeps = { ...deps, clientIp: { from: 'forwarded-for', hops: 1 } }
    const proxy = { requestIP: () => ({ address: '10.0.0.2' }) }
    const real = visitor()
    const attempt = (i: number, password: string) => {
      const headers = { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': `198.51.100.${i}, ${real}` }
      return handleRedirect(new Request(`http://sho.rt/${alias}`, { method: 'POST', headers, body: form(password) }), behindProxy, proxy)
    }
    for (let i = 0; i < 5; i++) expect((await attempt(i, `guess-${i}`)).status).toBe(401)
    expect((await attempt(5, 'open sesame')).status).toBe(429)
  })

  test('expired → 410, not yet active → 404, before any password is asked; POST to an open link is 405', async () => {
    // The link expires in an hour (the API takes no expiry in the past); the redirector is then asked
    // with its clock a second past that expiry.
    const expiresAt = Date.now() + 3_600_000
    const expired = await protectedLink({ expiration: new Date(expiresAt).toISOString() })
    const later = await protectedLink({ activated_at: '2098-01-01T00:00:00Z', expiration: '2099-01-01T00:00:00Z' })
    const pastExpiry: RedirectDeps = { ...deps, now: () => expiresAt + 1000 }
    expect((await get(expired)).status, 'before the expiry').toBe(200)
    expect((await get(expired, pastExpiry)).status).toBe(410)
    expect((await post(expired, form('open sesame'), { d: pastExpiry })).status).toBe(410)
    expect((await get(later)).status).toBe(404)
    expect((await post(later, form('open sesame'))).status).toBe(404)
    const open = await protectedLink({ password: undefined })
    expect((await get(open)).status).toBe(302)
    expect((await post(open, form('anything'))).status).toBe(405)
  })

  test('removing the password through the API makes the link redirect at once', async () => {
    const alias = await protectedLink()
    expect((await get(alias)).status).toBe(200)
    const patched = await call(api.app, 'PATCH', `/api/v1/links/${alias}`, { token: account.key, body: { password: null } })
    expect(patched.status, show(patched)).toBe(200)
    // The invalidation reaches the redirector's cache by the store's pub/sub: polled under a deadline of
    // seconds, not a count of tries.
    let status = 0
    await until(
      async () => (status = (await get(alias)).status) === 302,
      () => `the link still answers ${status}`,
    )
    expect(status).toBe(302)
  })

  test('when the API cannot check the password the page is 503, never a redirect', async () => {
    const alias = await protectedLink()
    const down: Unlock = async () => {
      throw new Error('API down')
    }
    for (const d of [
      { ...deps, unlock: down },
      { ...deps, unlock: undefined },
    ]) {
      const response = await post(alias, form('open sesame'), { d })
      expect(response.status).toBe(503)
      expect(response.headers.get('location')).toBeNull()
    }
  })
})

describe('readUnlockAnswer', () => {
  test('maps the API answers; an unexpected one (wrong secret, 500) is an error, not a wrong password', async () => {
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers })
    expect(await readUnlockAnswer(json(200, { v: 1, id: 'link_a', url: 'https://e.com/' }))).toEqual({ kind: 'ok', link: { v: 1, id: 'link_a', url: 'https://e.com/' } })
    expect(await readUnlockAnswer(json(401, { error: 'PASSWORD_INCORRECT' }))).toEqual({ kind: 'wrong' })
    expect(await readUnlockAnswer(json(404, {}))).toEqual({ kind: 'gone' })
    expect(await readUnlockAnswer(json(429, {}, { 'retry-after': '42' }))).toEqual({ kind: 'limited', retryAfterSeconds: 42 })
    expect(await readUnlockAnswer(json(429, {}))).toEqual({ kind: 'limited', retryAfterSeconds: 900 })
    for (const response of [json(401, { error: 'UNAUTHORIZED' }), json(500, {}), json(200, { nope: 1 })]) {
      expect(readUnlockAnswer(response)).rejects.toThrow()
    }
  })
})
