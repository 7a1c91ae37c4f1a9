// Sign-in with GitHub and Google: the real implementation (arctic's client, our e-mail lookup) against
// loopback fakes of the providers (test/support/fake-identity-provider.ts). The browser's part is played
// by hand: our 302 to the provider, the provider's 302 back to our callback.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { humanSessions } from '../../db/schema'
import { ConfigError, parseConfig } from '../../../core/config'
import { testApi, testConfig } from '../../../test/support/api'
import { startFakeIdentityProvider, type FakeIdentityProvider, type FakeUser } from '../../../test/support/fake-identity-provider'
import { newAccount } from '../../../test/support/fixtures'
import { Browser, showPage } from '../../../test/support/signin'
import { uniqueEmail } from '../../../test/support/signup'

let github: FakeIdentityProvider
let google: FakeIdentityProvider
let api: Awaited<ReturnType<typeof testApi>>
let plain: Awaited<ReturnType<typeof testApi>>

beforeAll(async () => {
  github = startFakeIdentityProvider('github')
  google = startFakeIdentityProvider('google')
  api = await testApi({ config: testConfig({ ...github.env, ...google.env }) })
  plain = await testApi()
})

afterAll(() => {
  github.close()
  google.close()
})

async function account(): Promise<{ id: string; email: string }> {
  const { id } = await newAccount(api.deps.db)
  return { id, email: `${id.toLowerCase()}@example.test` }
}

/** Our redirect to the provider, the provider's answer (for `user`), and our callback's answer. */
async function signInAt(provider: FakeIdentityProvider, name: 'github' | 'google', user: FakeUser | 'deny', browser = new Browser(api.app), next = '/after') {
  const start = await browser.get(`/signin/${name}?next=${encodeURIComponent(next)}`)
  expect(start.status, showPage(start)).toBe(302)
  provider.next(user)
  const atProvider = await fetch(start.location!, { redirect: 'manual' })
  expect(atProvider.status, await atProvider.clone().text()).toBe(302)
  const back = new URL(atProvider.headers.get('location')!)
  expect(back.origin + back.pathname).toBe(`https://api.sho.rt/signin/${name}/callback`)
  const callback = await browser.get(back.pathname + back.search)
  return { start, back, callback, browser }
}

const sessionsOf = (accountId: string) => api.deps.db.select().from(humanSessions).where(eq(humanSessions.accountId, accountId))

describe('configuration', () => {
  test("client id and secret both or neither; the providers' own endpoints unless overridden", () => {
    expect(parseConfig({}).identityProviders).toEqual({ github: undefined, google: undefined })
    expect(() => parseConfig({ GITHUB_CLIENT_ID: 'id' })).toThrow(/GITHUB_CLIENT_SECRET is required/)
    expect(() => parseConfig({ GOOGLE_CLIENT_SECRET: 's' })).toThrow(/GOOGLE_CLIENT_ID is required/)
    expect(() => parseConfig({ GITHUB_CLIENT_ID: 'id', GITHUB_CLIENT_SECRET: 's', GITHUB_TOKEN_URL: 'ftp://x' })).toThrow(ConfigError)
    expect(parseConfig({ GITHUB_CLIENT_ID: 'id', GITHUB_CLIENT_SECRET: 's' }).identityProviders.github).toEqual({
      clientId: 'id',
      clientSecret: 's',
      authorizationUrl: 'https://github.com/login/oauth/authorize',
      tokenUrl: 'https://github.com/login/oauth/access_token',
      userUrl: 'https://api.github.com',
    })
    expect(parseConfig({ GOOGLE_CLIENT_ID: 'id', GOOGLE_CLIENT_SECRET: 's', GOOGLE_USER_URL: 'http://127.0.0.1:9/v1/userinfo/' }).identityProviders.google?.userUrl).toBe(
      'http://127.0.0.1:9/v1/userinfo',
    )
  })
})

describe('not configured', () => {
  test('no buttons on the sign-in page; the routes are 404 pages', async () => {
    const page = await new Browser(plain.app).get('/signin')
    expect(page.text).not.toContain('/signin/github')
    expect(page.text).not.toContain('/signin/google')
    for (const path of ['/signin/github', '/signin/github/callback?code=x&state=y', '/signin/google', '/signin/google/callback']) {
      const res = await new Browser(plain.app).get(path)
      expect(res.status, `${path}: ${showPage(res)}`).toBe(404)
      expect(res.headers.get('content-type')).toContain('text/html')
    }
  })
})

describe('GitHub', () => {
  test('the sign-in page offers it; the redirect carries client_id, state, the callback and scope user:email, and a state cookie', async () => {
    const page = await new Browser(api.app).get('/signin?next=%2Fx')
    expect(page.text).toContain('href="/signin/github?next=%2Fx"')
    const browser = new Browser(api.app)
    const start = await browser.get('/signin/github')
    const url = new URL(start.location!)
    expect(url.origin + url.pathname).toBe(github.env.GITHUB_AUTHORIZATION_URL!)
    expect(url.searchParams.get('client_id')).toBe(github.clientId)
    expect(url.searchParams.get('redirect_uri')).toBe('https://api.sho.rt/signin/github/callback')
    expect(url.searchParams.get('scope')).toBe('user:email')
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(start.setCookies[0]).toMatch(/^__Host-ls_provider=github\.[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=600; Secure$/)
  })

  test('the verified primary e-mail signs in to its account: session cookie, 303 to next', async () => {
    const { id, email } = await account()
    const { callback, browser } = await signInAt(github, 'github', {
      emails: [
        { email: 'other@example.com', primary: false, verified: true },
        { email: email.toUpperCase(), primary: true, verified: true },
      ],
    })
    expect([callback.status, callback.location], showPage(callback)).toEqual([303, '/after'])
    expect(browser.cookies.get('__Host-ls_session')).toMatch(/^hs_/)
    expect(browser.cookies.has('__Host-ls_provider')).toBe(false)
    const rows = await sessionsOf(id)
    expect(rows.map((r) => r.method)).toEqual(['github'])
    const who = await browser.get('/signin/done')
    expect(who.text).toContain(email)
  })

  test('an unverified primary e-mail is refused (a verified secondary one does not count)', async () => {
    const { id, email } = await account()
    const { callback, browser } = await signInAt(github, 'github', {
      emails: [
        { email, primary: true, verified: false },
        { email: 'x@example.com', primary: false, verified: true },
      ],
    })
    expect(callback.status, showPage(callback)).toBe(403)
    expect(browser.cookies.has('__Host-ls_session')).toBe(false)
    expect(await sessionsOf(id)).toEqual([])
    const secondary = await signInAt(github, 'github', {
      emails: [
        { email: 'y@example.com', primary: true, verified: true },
        { email, primary: false, verified: true },
      ],
    })
    expect(secondary.callback.status, showPage(secondary.callback)).toBe(404)
    expect(await sessionsOf(id)).toEqual([])
  })

  test('a verified e-mail without an account: a page saying so; no account is created', async () => {
    const email = uniqueEmail('nobody')
    const { callback, browser } = await signInAt(github, 'github', { emails: [{ email, primary: true, verified: true }] })
    expect(callback.status, showPage(callback)).toBe(404)
    expect(callback.text).toContain('No account uses')
    expect(browser.cookies.has('__Host-ls_session')).toBe(false)
  })

  test("state mismatch, another browser, another provider's cookie: refused before any call to the provider", async () => {
    const { email } = await account()
    const user = { emails: [{ email, primary: true, verified: true }] }
    const browser = new Browser(api.app)
    const start = await browser.get('/signin/github')
    github.next(user)
    const back = new URL((await fetch(start.location!, { redirect: 'manual' })).headers.get('location')!)
    const tokenCalls = () => github.requests.filter((r) => r.startsWith('POST')).length
    const before = tokenCalls()

    const tampered = new URLSearchParams(back.search)
    tampered.set('state', 'A'.repeat(43))
    const mismatch = await new Browser(api.app).request('GET', `${back.pathname}?${tampered}`, undefined, { cookie: browser.cookieHeader() })
    expect(mismatch.status, showPage(mismatch)).toBe(400)
    const elsewhere = await new Browser(api.app).get(back.pathname + back.search)
    expect(elsewhere.status, showPage(elsewhere)).toBe(400)
    const google = await new Browser(api.app).request('GET', `/signin/google/callback${back.search}`, undefined, { cookie: browser.cookieHeader() })
    expect(google.status, showPage(google)).toBe(400)
    expect(tokenCalls()).toBe(before)
    for (const res of [mismatch, elsewhere, google]) expect(res.setCookies.some((c) => c.includes('ls_session=hs_'))).toBe(false)

    // The rightful browser still completes it.
    const ok = await browser.get(back.pathname + back.search)
    expect(ok.status, showPage(ok)).toBe(303)
  })

  test('a code GitHub refuses (used already) is a 400 page; a denial at GitHub a 403 page', async () => {
    const { email } = await account()
    const first = await signInAt(github, 'github', { emails: [{ email, primary: true, verified: true }] })
    expect(first.callback.status).toBe(303)
    // The same callback again, with a fresh state cookie for it: the fake refuses the used code.
    const browser = new Browser(api.app)
    const start = await browser.get('/signin/github')
    const state = new URL(start.location!).searchParams.get('state')!
    const replay = new URLSearchParams(first.back.search)
    replay.set('state', state)
    const refused = await browser.get(`${first.back.pathname}?${replay}`)
    expect(refused.status, showPage(refused)).toBe(400)
    expect(browser.cookies.has('__Host-ls_session')).toBe(false)

    const denied = await signInAt(github, 'github', 'deny')
    expect(denied.callback.status, showPage(denied.callback)).toBe(403)
    expect(denied.callback.text).toContain('access_denied')
  })

  test('next is kept through the provider; a foreign one leads to /app', async () => {
    const { email } = await account()
    const kept = await signInAt(github, 'github', { emails: [{ email, primary: true, verified: true }] }, new Browser(api.app), '/consent?request_id=oreq_x')
    expect(kept.callback.location).toBe('/consent?request_id=oreq_x')
    const evil = await signInAt(github, 'github', { emails: [{ email, primary: true, verified: true }] }, new Browser(api.app), '/..//evil.example/x')
    expect(evil.callback.status, showPage(evil.callback)).toBe(303)
    expect(evil.callback.location).toBe('/app')
  })
})

describe('Google', () => {
  test('PKCE S256 and scope "openid email"; a verified e-mail signs in', async () => {
    const { id, email } = await account()
    const { start, callback, browser } = await signInAt(google, 'google', { email, email_verified: true })
    const url = new URL(start.location!)
    expect(url.searchParams.get('code_challenge_method')).toBe('S256')
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(url.searchParams.get('scope')).toBe('openid email')
    expect([callback.status, callback.location], showPage(callback)).toEqual([303, '/after'])
    expect(browser.cookies.get('__Host-ls_session')).toMatch(/^hs_/)
    expect((await sessionsOf(id)).map((r) => r.method)).toEqual(['google'])
  })

  test('email_verified false is refused', async () => {
    const { id, email } = await account()
    const { callback } = await signInAt(google, 'google', { email, email_verified: false })
    expect(callback.status, showPage(callback)).toBe(403)
    expect(await sessionsOf(id)).toEqual([])
  })

  test('a provider that does not answer: a 502 page, no session', async () => {
    const gone = startFakeIdentityProvider('google')
    const app = (await testApi({ config: testConfig(gone.env) })).app
    const browser = new Browser(app)
    const start = await browser.get('/signin/google')
    gone.next({ email: 'x@example.com', email_verified: true })
    const back = new URL((await fetch(start.location!, { redirect: 'manual' })).headers.get('location')!)
    gone.close()
    const callback = await browser.get(back.pathname + back.search)
    expect(callback.status, showPage(callback)).toBe(502)
    expect(browser.cookies.has('__Host-ls_session')).toBe(false)
  })
})
