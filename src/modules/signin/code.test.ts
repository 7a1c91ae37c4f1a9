// Sign-in by mailed code through the pages, against the real engines and a real SMTP relay (the sink):
// the code arrives by mail, the session cookie carries the right attributes, only hashes are stored, and
// the refusals (wrong, expired, reused code; missing CSRF token; unknown address) say no more than they
// should.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { humanSessions, signInCodes } from '../../db/schema'
import { hashSecret } from '../../lib/secrets'
import { testApi, testConfig } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'
import { uniqueEmail } from '../../../test/support/signup'
import { askForCode, Browser, inputValue, showPage, signInCodeFrom, waitForMail } from '../../../test/support/signin'
import { MAX_SIGN_IN_ATTEMPTS, SIGN_IN_CODE_TTL_MS } from './codes'
import { SESSION_TTL_MS } from './service'

let sink: SmtpSink
let api: Awaited<ReturnType<typeof testApi>>
/** The clock of `api`: tests move it forward to expire codes. */
let clockOffset = 0

async function accountEmail(): Promise<{ id: string; email: string }> {
  const { id } = await newAccount(api.deps.db)
  return { id, email: `${id.toLowerCase()}@example.test` }
}

beforeAll(async () => {
  sink = await startSmtpSink()
  api = await testApi({ config: testConfig({ SMTP_URL: sink.url }), now: () => Date.now() + clockOffset })
})

afterAll(async () => {
  await sink.close()
})

describe('sign-in by mailed code', () => {
  test('the pages: a form with a login token, strict headers, no script', async () => {
    const browser = new Browser(api.app)
    const page = await browser.get('/signin?next=%2Fconsent%3Frequest_id%3Dx')
    expect(page.status, showPage(page)).toBe(200)
    expect(page.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(page.headers.get('cache-control')).toBe('no-store')
    expect(page.text).not.toContain('<script')
    expect(inputValue(page.text, 'next')).toBe('/consent?request_id=x')
    // The double-submit token: the hidden field is the cookie's value.
    expect(page.setCookies).toHaveLength(1)
    expect(page.setCookies[0]).toMatch(/^__Host-ls_login=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Secure$/)
    expect(browser.cookies.get('__Host-ls_login')).toBe(inputValue(page.text, 'csrf')!)
  })

  test('happy path: the code is mailed, the session cookie is set, only hashes are stored', async () => {
    const { id, email } = await accountEmail()
    const browser = new Browser(api.app)
    const form = await askForCode(browser, email, '/somewhere?x=1')
    expect(form.page.text).toContain('Check your e-mail')
    const mail = await waitForMail(sink, email)
    const code = signInCodeFrom(mail)
    expect(mail.raw).toContain('Subject: Your sign-in code')

    const [stored] = await api.deps.db.select().from(signInCodes).where(eq(signInCodes.id, form.attempt))
    expect(stored?.accountId).toBe(id)
    expect(JSON.stringify(stored)).not.toContain(code)
    expect(stored!.codeHash).not.toBe(hashSecret(code))

    const done = await browser.post('/signin/code', { attempt: form.attempt, code, next: '/somewhere?x=1', csrf: form.csrf })
    expect(done.status, showPage(done)).toBe(303)
    expect(done.location).toBe('/somewhere?x=1')
    const cookie = done.setCookies.find((c) => c.startsWith('__Host-ls_session='))!
    expect(cookie).toMatch(new RegExp(`^__Host-ls_session=hs_[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${SESSION_TTL_MS / 1000}; Secure$`))
    const token = browser.cookies.get('__Host-ls_session')!

    const rows = await api.deps.db.select().from(humanSessions).where(eq(humanSessions.accountId, id))
    expect(rows).toHaveLength(1)
    expect(rows[0]!.tokenHash).toBe(hashSecret(token))
    expect(rows[0]!.method).toBe('email-code')
    expect(JSON.stringify(rows)).not.toContain(token)
    expect(rows[0]!.expiresAt.getTime() - rows[0]!.createdAt.getTime()).toBe(SESSION_TTL_MS)

    const who = await browser.get('/signin/done')
    expect(who.status, showPage(who)).toBe(200)
    expect(who.text).toContain(email)
    // Signed in, the sign-in page sends the browser on.
    const again = await browser.get('/signin?next=%2Fsomewhere')
    expect([again.status, again.location]).toEqual([303, '/somewhere'])
  })

  test('a code works once', async () => {
    const { email } = await accountEmail()
    const browser = new Browser(api.app)
    const form = await askForCode(browser, email)
    const code = signInCodeFrom(await waitForMail(sink, email))
    const fields = { attempt: form.attempt, code, next: '', csrf: form.csrf }
    const first = await browser.post('/signin/code', fields)
    expect([first.status, first.location], showPage(first)).toEqual([303, '/signin/done'])
    const replay = await new Browser(api.app).request('POST', '/signin/code', fields, { cookie: `__Host-ls_login=${form.csrf}` })
    expect(replay.status, showPage(replay)).toBe(400)
    expect(replay.setCookies.some((c) => c.includes('ls_session=hs_'))).toBe(false)
  })

  test(`wrong codes: counted, ${MAX_SIGN_IN_ATTEMPTS} burn the code, and the right one no longer works`, async () => {
    const { email } = await accountEmail()
    const browser = new Browser(api.app)
    const form = await askForCode(browser, email)
    const code = signInCodeFrom(await waitForMail(sink, email))
    const wrongCode = code === '000000' ? '111111' : '000000'
    for (let left = MAX_SIGN_IN_ATTEMPTS - 1; left >= 1; left--) {
      const wrong = await browser.post('/signin/code', { attempt: form.attempt, code: wrongCode, next: '', csrf: form.csrf })
      expect(wrong.status, showPage(wrong)).toBe(400)
      expect(wrong.text).toContain(`${left} attempt${left === 1 ? '' : 's'} left`)
      // The code form again, to retry.
      expect(inputValue(wrong.text, 'attempt')).toBe(form.attempt)
    }
    const last = await browser.post('/signin/code', { attempt: form.attempt, code: wrongCode, next: '', csrf: form.csrf })
    expect(last.status, showPage(last)).toBe(429)
    const right = await browser.post('/signin/code', { attempt: form.attempt, code, next: '', csrf: form.csrf })
    expect(right.status, showPage(right)).toBe(429)
    expect(browser.cookies.has('__Host-ls_session')).toBe(false)
  })

  test('a code older than 15 minutes is refused', async () => {
    const { email } = await accountEmail()
    const browser = new Browser(api.app)
    const form = await askForCode(browser, email)
    const code = signInCodeFrom(await waitForMail(sink, email))
    clockOffset = SIGN_IN_CODE_TTL_MS + 1000
    try {
      const late = await browser.post('/signin/code', { attempt: form.attempt, code, next: '', csrf: form.csrf })
      expect(late.status, showPage(late)).toBe(400)
      expect(late.text).toContain('wrong or has expired')
      expect(browser.cookies.has('__Host-ls_session')).toBe(false)
    } finally {
      clockOffset = 0
    }
  })

  test('an address without an account: the same page, the same answers to codes, and no mail', async () => {
    const known = await accountEmail()
    const unknown = uniqueEmail('nobody')
    const a = await askForCode(new Browser(api.app), known.email)
    const browser = new Browser(api.app)
    const b = await askForCode(browser, unknown)
    const normalize = (html: string, form: { attempt: string; csrf: string }, email: string) => html.replaceAll(form.attempt, 'ATTEMPT').replaceAll(form.csrf, 'CSRF').replaceAll(email, 'EMAIL')
    expect(normalize(b.page.text, b, unknown)).toBe(normalize(a.page.text, a, known.email))
    expect(b.page.status).toBe(a.page.status)
    expect(b.attempt).toMatch(/^sgn_[A-Za-z0-9_-]{22}$/)
    // Wrong codes on it are counted and worded as for a real one.
    const wrong = await browser.post('/signin/code', { attempt: b.attempt, code: '123456', next: '', csrf: b.csrf })
    expect(wrong.status, showPage(wrong)).toBe(400)
    expect(wrong.text).toContain(`${MAX_SIGN_IN_ATTEMPTS - 1} attempts left`)

    await waitForMail(sink, known.email)
    await Bun.sleep(300)
    expect(sink.to(unknown)).toEqual([])
    expect(await api.deps.db.select().from(signInCodes).where(eq(signInCodes.id, b.attempt))).toEqual([])
  })

  test('CSRF: POST /signin and /signin/code need the login token (field = cookie); a refusal does not use up an attempt', async () => {
    const { email } = await accountEmail()
    const noCookie = await new Browser(api.app).post('/signin', { email, next: '', csrf: 'x'.repeat(43) })
    expect(noCookie.status, showPage(noCookie)).toBe(403)

    const browser = new Browser(api.app)
    const form = await askForCode(browser, email)
    const code = signInCodeFrom(await waitForMail(sink, email))
    const missing = await browser.post('/signin/code', { attempt: form.attempt, code, next: '' })
    expect(missing.status, showPage(missing)).toBe(403)
    const forged = await browser.post('/signin/code', { attempt: form.attempt, code, next: '', csrf: 'A'.repeat(43) })
    expect(forged.status, showPage(forged)).toBe(403)
    // Another site's form carries the attacker's own token, not this browser's cookie.
    const elsewhere = await new Browser(api.app).request('POST', '/signin/code', { attempt: form.attempt, code, next: '', csrf: form.csrf }, { cookie: `__Host-ls_login=${'B'.repeat(43)}` })
    expect(elsewhere.status, showPage(elsewhere)).toBe(403)
    expect(browser.cookies.has('__Host-ls_session')).toBe(false)
    // The refusals counted no attempt: the first wrong code leaves all but one.
    const wrongCode = code === '000000' ? '111111' : '000000'
    const wrong = await browser.post('/signin/code', { attempt: form.attempt, code: wrongCode, next: '', csrf: form.csrf })
    expect(wrong.text, showPage(wrong)).toContain(`${MAX_SIGN_IN_ATTEMPTS - 1} attempts left`)

    const ok = await browser.post('/signin/code', { attempt: form.attempt, code, next: '', csrf: form.csrf })
    expect(ok.status, showPage(ok)).toBe(303)
  })

  test('a malformed address or code is the form again (400), not an error', async () => {
    const browser = new Browser(api.app)
    const page = await browser.get('/signin')
    const csrf = inputValue(page.text, 'csrf')!
    const bad = await browser.post('/signin', { email: 'not an address', next: '', csrf })
    expect(bad.status, showPage(bad)).toBe(400)
    expect(bad.text).toContain('Enter the e-mail address')
    const code = await browser.post('/signin/code', { attempt: 'sgn_nope', code: 'abc', next: '', csrf })
    expect(code.status, showPage(code)).toBe(400)
    expect(code.text).toContain('six digits')
  })
})
