// Every return path the service accepts (sign-in's `next`, sign-out's, an identity provider's, the
// pages that send a signed-out person to sign in) is a path on this site once normalised, or /app.
// Each attack below is a `next` that a URL parser or a browser turns into another host.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testApi, testConfig } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'
import { askForCode, Browser, inputValue, showPage, signInByMail, signInCodeFrom, waitForMail } from '../../../test/support/signin'
import { DEFAULT_NEXT, FALLBACK_NEXT, returnPath, signInUrl } from './next'

/** Each leads off this site: by dot segments the URL parser removes, encodings, backslashes, whitespace. */
export const FOREIGN_NEXTS = [
  '//evil.example',
  '/.//evil.example',
  '/..//evil.example/x',
  '/%2e%2e//evil.example',
  '/%2E%2E//evil.example',
  '/a/..//evil.example',
  '/%2e//evil.example',
  '/.%2f/evil.example',
  '/%2F%2Fevil.example',
  '/%252F%252Fevil.example',
  '/%252e%252e/%252F%252Fevil.example',
  '/\\evil.example',
  '/%5Cevil.example',
  '/%255Cevil.example',
  '\\\\evil.example',
  '/\t/evil.example',
  '/\n/evil.example',
  '/%09/evil.example',
  '/%0a/evil.example',
  ' //evil.example',
  'https://evil.example/',
  'HTTPS://evil.example',
  'http:evil.example',
  '//evil.example@localhost',
  'javascript:alert(1)',
  'data:text/html,hi',
  'evil.example',
  `/${'a'.repeat(2048)}`,
]

describe('returnPath', () => {
  test('a path on this site is kept as the URL parser normalises it', () => {
    expect(returnPath(undefined)).toBe(DEFAULT_NEXT)
    expect(returnPath('')).toBe(DEFAULT_NEXT)
    expect(returnPath('/consent?request_id=oreq_1')).toBe('/consent?request_id=oreq_1')
    expect(returnPath('/a/../b#frag')).toBe('/b#frag')
    expect(returnPath('/app/links?q=a%20b')).toBe('/app/links?q=a%20b')
    expect(returnPath('/%252e%252e/x')).toBe('/%252e%252e/x')
  })

  test('everything that leads off this site, or is not text, falls back to /app', () => {
    for (const next of [...FOREIGN_NEXTS, ['/a'], 42, null]) expect(returnPath(next), JSON.stringify(next)).toBe(FALLBACK_NEXT)
  })

  test('signInUrl checks the page it names the same way', () => {
    expect(signInUrl('/approvals/apr_1')).toBe('/signin?next=%2Fapprovals%2Fapr_1')
    expect(signInUrl('/.//evil.example')).toBe('/signin?next=%2Fapp')
  })
})

describe('the pages, signed in and signed out', () => {
  let sink: SmtpSink
  let api: Awaited<ReturnType<typeof testApi>>

  beforeAll(async () => {
    sink = await startSmtpSink()
    api = await testApi({ config: testConfig({ SMTP_URL: sink.url }) })
  })

  afterAll(async () => {
    await sink.close()
  })

  const newEmail = async () => `${(await newAccount(api.deps.db)).id.toLowerCase()}@example.test`

  test('signed in, GET /signin?next= sends every foreign next to /app', async () => {
    const browser = new Browser(api.app)
    await signInByMail(browser, sink, await newEmail())
    for (const next of FOREIGN_NEXTS) {
      const page = await browser.get(`/signin?next=${encodeURIComponent(next)}`)
      expect(page.status, `${JSON.stringify(next)}: ${showPage(page)}`).toBe(303)
      expect(page.location, JSON.stringify(next)).toBe(FALLBACK_NEXT)
    }
    const own = await browser.get('/signin?next=%2Fapp%2Ftags')
    expect(own.location, showPage(own)).toBe('/app/tags')
  })

  test('signed out, the form carries /app and the right code leads there, with a session', async () => {
    const email = await newEmail()
    const browser = new Browser(api.app)
    const form = await askForCode(browser, email, '/.//evil.example')
    expect(inputValue(form.page.text, 'next')).toBe(FALLBACK_NEXT)
    const code = signInCodeFrom(await waitForMail(sink, email))
    // The form's field replaced by the attack itself: the POST checks it again.
    const done = await browser.post('/signin/code', { attempt: form.attempt, code, next: '/%2e%2e//evil.example', csrf: form.csrf })
    expect(done.status, showPage(done)).toBe(303)
    expect(done.location).toBe(FALLBACK_NEXT)
    expect(
      [...browser.cookies.keys()].some((name) => name.endsWith('ls_session')),
      [...browser.cookies.keys()].join(','),
    ).toBe(true)
  })

  test('next given twice is refused (400 VALIDATION_FAILED naming it), whichever comes first', async () => {
    const browser = new Browser(api.app)
    await signInByMail(browser, sink, await newEmail())
    for (const query of ['next=%2F..%2F%2Fevil.example&next=%2Fapp%2Ftags', 'next=%2Fapp%2Ftags&next=%2F..%2F%2Fevil.example']) {
      const page = await browser.get(`/signin?${query}`)
      expect(page.status, `${query}: ${showPage(page)}`).toBe(400)
      expect(page.location, query).toBeNull()
      expect(JSON.parse(page.text), query).toMatchObject({ error: 'VALIDATION_FAILED', hint: expect.stringContaining('query.next') })
    }
  })

  test('sign-out keeps a foreign next out of the sign-in link it leads to', async () => {
    const browser = new Browser(api.app)
    await signInByMail(browser, sink, await newEmail())
    const csrf = inputValue((await browser.get('/signin/done')).text, 'csrf')!
    const out = await browser.post('/signout', { csrf, next: '/..//evil.example/x' })
    expect(out.status, showPage(out)).toBe(303)
    expect(out.location).toBe('/signin?next=%2Fapp')
  })

  test('the dashboard, consent and approval pages send a signed-out browser to sign in with their own path', async () => {
    const browser = new Browser(api.app)
    const dashboard = await browser.get('/app/links/example.com/x?tab=stats')
    expect(dashboard.location, showPage(dashboard)).toBe(`/signin?next=${encodeURIComponent('/app/links/example.com/x?tab=stats')}`)
    const approval = await browser.get('/approvals/apr_aaaaaaaaaaaaaaaaaaaaaa')
    expect(approval.location, showPage(approval)).toBe(`/signin?next=${encodeURIComponent('/approvals/apr_aaaaaaaaaaaaaaaaaaaaaa')}`)
    const consent = await browser.get('/consent?request_id=oreq_x')
    expect(consent.location, showPage(consent)).toBe(`/signin?next=${encodeURIComponent('/consent?request_id=oreq_x')}`)
  })
})
