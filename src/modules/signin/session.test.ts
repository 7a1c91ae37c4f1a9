// Sessions: what sessionPrincipal gives the auth plugin, the CSRF token, sign-out (the old cookie stops
// working at once), expiry, and the cookie without https.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { accounts, humanSessions } from '../../db/schema'
import { Elysia } from 'elysia'
import { agentCalls } from '../../plugins/agent-calls'
import { createAuth } from '../../plugins/auth'
import { errors } from '../../plugins/errors'
import { createServices } from '../../services'
import { TEST_IP_HEADER, testApi, testConfig, uniqueIp } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'
import { askForCode, Browser, inputValue, showPage, signInByMail, signInCodeFrom, waitForMail } from '../../../test/support/signin'
import { checkCsrf, createSession, csrfTokenFor, readSession, SESSION_TTL_MS, sessionPrincipal } from './service'

let sink: SmtpSink
let api: Awaited<ReturnType<typeof testApi>>
let clockOffset = 0
let services: ReturnType<typeof createServices>

beforeAll(async () => {
  sink = await startSmtpSink()
  api = await testApi({ config: testConfig({ SMTP_URL: sink.url }), now: () => Date.now() + clockOffset })
  services = createServices(api.deps)
})

afterAll(async () => {
  await sink.close()
})

async function signedIn(): Promise<{ browser: Browser; accountId: string; email: string; token: string }> {
  const { id } = await newAccount(api.deps.db)
  const email = `${id.toLowerCase()}@example.test`
  const browser = new Browser(api.app)
  await signInByMail(browser, sink, email)
  return { browser, accountId: id, email, token: browser.cookies.get('__Host-ls_session')! }
}

const withCookie = (token: string) => new Request('http://localhost/x', { headers: { cookie: `other=1; __Host-ls_session=${token}`, [TEST_IP_HEADER]: uniqueIp() } })

describe('sessionPrincipal', () => {
  test('the account of a live session, its CSRF token, rate headers of its window (above the plan one) and credential ses:<id>', async () => {
    const { accountId, email, token } = await signedIn()
    const principal = await sessionPrincipal(services, withCookie(token))
    expect(principal?.kind).toBe('account')
    if (principal?.kind !== 'account') throw new Error('no principal')
    expect(principal.account).toMatchObject({ id: accountId, email, plan: 'free' })
    const sessionId = principal.session?.sessionId ?? ''
    expect(sessionId).toMatch(/^ses_/)
    expect(principal.credentialId).toBe(`ses:${sessionId}`)
    expect(principal.session).toEqual({ sessionId, csrfToken: csrfTokenFor(api.deps.config, sessionId) })
    expect(principal.rateHeaders['x-ratelimit-limit']).toBe('300') // SESSION_REQUESTS_PER_MINUTE: above the Free plan's 30
    expect(principal.agent).toBeUndefined()
  })

  test('null without a cookie, with a malformed or unknown one', async () => {
    expect(await sessionPrincipal(services, new Request('http://localhost/x'))).toBeNull()
    expect(await sessionPrincipal(services, withCookie('nonsense'))).toBeNull()
    expect(await sessionPrincipal(services, withCookie(`hs_${'A'.repeat(43)}`))).toBeNull()
    // The cookie of the https name only: a plain `ls_session` is not read on an https deployment.
    const { token } = await signedIn()
    expect(await sessionPrincipal(services, new Request('http://localhost/x', { headers: { cookie: `ls_session=${token}` } }))).toBeNull()
  })

  test('a session ends after SESSION_TTL_MS', async () => {
    const { token } = await signedIn()
    clockOffset = SESSION_TTL_MS + 1000
    try {
      expect(await sessionPrincipal(services, withCookie(token))).toBeNull()
    } finally {
      clockOffset = 0
    }
    expect(await sessionPrincipal(services, withCookie(token))).not.toBeNull()
  })

  test('a session of a deleted account is no session', async () => {
    const { id } = await newAccount(api.deps.db)
    const { token } = await createSession(services, id, 'email-code')
    expect(await readSession(services, withCookie(token))).not.toBeNull()
    await api.deps.db.delete(accounts).where(eq(accounts.id, id))
    expect(await readSession(services, withCookie(token))).toBeNull()
  })
})

describe('sessionPrincipal in the auth plugin (a route for the human: API key or session)', () => {
  test('the cookie authenticates; a write needs X-CSRF-Token; a signed-out cookie is 401', async () => {
    const resourceMetadataUrl = 'https://api.sho.rt/.well-known/oauth-protected-resource'
    const auth = createAuth([], { resourceMetadataUrl, session: (request) => sessionPrincipal(services, request), agentCalls: agentCalls({ resourceMetadataUrl, clientIp: () => '' }) })
    const app = new Elysia()
      .use(errors)
      .use(auth.plugin)
      .get('/mine', ({ principal }) => ({ credential: principal.credentialId }), { human: true })
      .post('/mine', ({ principal }) => ({ credential: principal.credentialId }), { human: true })
    const { browser, token } = await signedIn()
    const send = (method: string, headers: Record<string, string> = {}) => app.handle(new Request('http://localhost/mine', { method, headers: { cookie: `__Host-ls_session=${token}`, ...headers } }))
    const read = await send('GET')
    expect(read.status).toBe(200)
    expect(((await read.json()) as { credential: string }).credential).toMatch(/^ses:ses_/)
    expect(read.headers.get('x-ratelimit-limit')).toBe('300')
    const unguarded = await send('POST')
    expect(unguarded.status).toBe(403)
    expect(((await unguarded.json()) as { error: string }).error).toBe('CSRF_TOKEN_INVALID')
    const csrf = inputValue((await browser.get('/signin/done')).text, 'csrf')!
    expect((await send('POST', { 'x-csrf-token': csrf })).status).toBe(200)

    await browser.post('/signout', { csrf })
    expect((await send('GET')).status).toBe(401)
  })
})

describe('checkCsrf', () => {
  test("true only for the session's own token; false for a principal without a session", async () => {
    const { token } = await signedIn()
    const principal = (await sessionPrincipal(services, withCookie(token)))!
    const own = principal.kind === 'account' ? principal.session!.csrfToken : ''
    expect(checkCsrf(principal, own)).toBe(true)
    expect(checkCsrf(principal, own.slice(0, -1))).toBe(false)
    expect(checkCsrf(principal, csrfTokenFor(api.deps.config, 'ses_someoneelse'))).toBe(false)
    expect(checkCsrf(principal, undefined)).toBe(false)
    expect(checkCsrf(principal, '')).toBe(false)
    expect(checkCsrf({ sessionId: 'ses_x', csrfToken: own }, own)).toBe(true)
    const keyPrincipal = { kind: 'account' as const, account: { id: 'acct_x', email: 'x@example.test', plan: 'free' as const }, rateHeaders: {}, credentialId: 'mk:key_x' }
    expect(checkCsrf(keyPrincipal, own)).toBe(false)
    expect(checkCsrf(null, own)).toBe(false)
  })

  test('derived from INTERNAL_SECRET: another secret gives another token', () => {
    const other = testConfig({ INTERNAL_SECRET: 'another-internal-secret-0123456789abcdef' })
    expect(csrfTokenFor(other, 'ses_a')).not.toBe(csrfTokenFor(api.deps.config, 'ses_a'))
    expect(csrfTokenFor(api.deps.config, 'ses_a')).not.toBe(csrfTokenFor(api.deps.config, 'ses_b'))
  })
})

describe('sign-out', () => {
  test('without the CSRF token: 403, the session lives on', async () => {
    const { browser, token } = await signedIn()
    const refused = await browser.post('/signout', {})
    expect(refused.status, showPage(refused)).toBe(403)
    const forged = await browser.post('/signout', { csrf: csrfTokenFor(api.deps.config, 'ses_other') })
    expect(forged.status, showPage(forged)).toBe(403)
    expect(await sessionPrincipal(services, withCookie(token))).not.toBeNull()
  })

  test('with it: the row is revoked, the cookie cleared, and the old cookie no longer works', async () => {
    const { browser, accountId, token } = await signedIn()
    const page = await browser.get('/signin/done')
    const out = await browser.post('/signout', { csrf: inputValue(page.text, 'csrf')! })
    expect([out.status, out.location], showPage(out)).toEqual([303, '/signin'])
    expect(out.setCookies).toContain('__Host-ls_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure')
    const [row] = await api.deps.db.select().from(humanSessions).where(eq(humanSessions.accountId, accountId))
    expect(row?.revokedAt).toBeInstanceOf(Date)

    expect(await sessionPrincipal(services, withCookie(token))).toBeNull()
    const replayed = new Browser(api.app)
    replayed.cookies.set('__Host-ls_session', token)
    const done = await replayed.get('/signin/done')
    expect([done.status, done.location]).toEqual([303, '/signin'])
  })

  test("signing in again ends the browser's previous session", async () => {
    const { id } = await newAccount(api.deps.db)
    const email = `${id.toLowerCase()}@example.test`
    const { token } = await createSession(services, id, 'email-code')
    // A signed-in browser (GET /signin would send it on) posting a new code.
    const browser = new Browser(api.app)
    const form = await askForCode(browser, email)
    browser.cookies.set('__Host-ls_session', token)
    expect(await sessionPrincipal(services, withCookie(token))).not.toBeNull()
    const code = signInCodeFrom(await waitForMail(sink, email))
    const again = await browser.post('/signin/code', { attempt: form.attempt, code, next: '', csrf: form.csrf })
    expect(again.status, showPage(again)).toBe(303)
    expect(browser.cookies.get('__Host-ls_session')).not.toBe(token)
    expect(await sessionPrincipal(services, withCookie(token))).toBeNull()
  })
})

describe('over plain http (PUBLIC_API_URL http://…)', () => {
  test('the cookies are not Secure and have no __Host- prefix', async () => {
    const local = await testApi({ config: testConfig({ SMTP_URL: sink.url, PUBLIC_API_URL: 'http://localhost:3000' }) })
    const { id } = await newAccount(local.deps.db)
    const browser = new Browser(local.app)
    const done = await signInByMail(browser, sink, `${id.toLowerCase()}@example.test`)
    const cookie = done.setCookies.find((c) => c.startsWith('ls_session='))
    expect(cookie, done.setCookies.join(' | ')).toMatch(/^ls_session=hs_[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/)
  })
})
