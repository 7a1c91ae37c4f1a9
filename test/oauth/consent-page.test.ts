// The consent page between GET /oauth/authorize and the client's redirect URI: a client registered and
// authorized the way real ones do (oauth4webapi, test/support/oauth.ts), the human signed in through the
// sign-in pages, deciding on the page. The code it yields is exchanged, so a subset of scopes is checked
// where it matters: in the token.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testApi, testConfig } from '../support/api'
import { CONSENT_TTL_MS } from '../../src/modules/oauth/authorize'
import { newAccount } from '../support/fixtures'
import { appFetch, authorizationUrl, discoverAndRegister, exchange, openAuthorization, type Flow } from '../support/oauth'
import { Browser, inputValue, showPage, signInByMail } from '../support/signin'
import { startSmtpSink, type SmtpSink } from '../support/smtp'

let sink: SmtpSink
let api: Awaited<ReturnType<typeof testApi>>
let flow: Flow
/** The clock of `api`: moved forward to expire a request. */
let clockOffset = 0

beforeAll(async () => {
  sink = await startSmtpSink()
  api = await testApi({ config: testConfig({ SMTP_URL: sink.url }), now: () => Date.now() + clockOffset })
  flow = await discoverAndRegister(appFetch(api.app), undefined, { client_name: 'Claude <b>Desktop</b>' })
})

afterAll(async () => {
  await sink.close()
})

async function signedInBrowser(): Promise<Browser> {
  const { id } = await newAccount(api.deps.db)
  const browser = new Browser(api.app)
  await signInByMail(browser, sink, `${id.toLowerCase()}@example.test`)
  return browser
}

async function pendingRequest(scope = 'links:read links:write offline_access') {
  const started = await authorizationUrl(flow, scope)
  return { started, requestId: await openAuthorization(flow, started) }
}

/** The scope checkboxes of a consent page, in order. */
const scopeBoxes = (html: string) => [...html.matchAll(/<input type="checkbox" name="scope" value="([^"]+)" checked>/g)].map((m) => m[1])

describe('GET /consent', () => {
  test('signed out: 303 to sign-in, which leads back here', async () => {
    const { requestId } = await pendingRequest()
    const page = await new Browser(api.app).get(`/consent?request_id=${requestId}`)
    expect(page.status, showPage(page)).toBe(303)
    expect(page.location).toBe(`/signin?next=${encodeURIComponent(`/consent?request_id=${requestId}`)}`)
  })

  test('signed in: who asks (escaped), where it sends you back, the scopes in words; form-action allows that origin', async () => {
    const browser = await signedInBrowser()
    const { requestId } = await pendingRequest()
    const page = await browser.get(`/consent?request_id=${requestId}`)
    expect(page.status, showPage(page)).toBe(200)
    expect(page.text).toContain('Claude &#60;b&#62;Desktop&#60;/b&#62; wants access to your account')
    expect(page.text).not.toContain('<b>Desktop')
    expect(page.text).toContain(flow.client.client_id)
    expect(page.text).toContain(new URL(flow.redirectUri).host)
    expect(page.text).toContain('read your links')
    expect(page.text).toContain('stay connected while you are away')
    expect(scopeBoxes(page.text)).toEqual(['links:read', 'links:write', 'offline_access'])
    expect(page.text).toContain('value="approve"')
    expect(page.text).toContain('value="deny"')
    expect(page.text).not.toContain('<script')
    expect(page.headers.get('content-security-policy')).toContain(`form-action 'self' ${new URL(flow.redirectUri).origin};`)
    expect(page.headers.get('x-frame-options')).toBe('DENY')
  })

  test('an expired request is a 410 page, and cannot be approved', async () => {
    const browser = await signedInBrowser()
    const { requestId } = await pendingRequest()
    const page = await browser.get(`/consent?request_id=${requestId}`)
    clockOffset = CONSENT_TTL_MS + 1000
    try {
      const late = await browser.get(`/consent?request_id=${requestId}`)
      expect(late.status, showPage(late)).toBe(410)
      expect(late.text).toContain('expired')
      const approve = await browser.post('/consent', { request_id: requestId, csrf: inputValue(page.text, 'csrf')!, decision: 'approve' })
      expect(approve.status, showPage(approve)).toBe(410)
      expect(approve.location).toBeNull()
    } finally {
      clockOffset = 0
    }
  })

  test('an unknown request is a 404 page, never a redirect', async () => {
    const browser = await signedInBrowser()
    for (const id of ['oreq_AAAAAAAAAAAAAAAAAAAAAA', 'nonsense', '']) {
      const page = await browser.get(`/consent?request_id=${id}`)
      expect(page.status, `${id}: ${showPage(page)}`).toBe(404)
      expect(page.location).toBeNull()
      expect(page.headers.get('content-type')).toContain('text/html')
    }
  })
})

describe('POST /consent', () => {
  test('approve a subset: 303 to the redirect URI with code, state and iss; the token holds only the ticked scopes', async () => {
    const browser = await signedInBrowser()
    const { started, requestId } = await pendingRequest()
    const page = await browser.get(`/consent?request_id=${requestId}`)
    const decided = await browser.post('/consent', { request_id: requestId, csrf: inputValue(page.text, 'csrf')!, scope_choice: '1', scope: ['links:read', 'offline_access'], decision: 'approve' })
    expect(decided.status, showPage(decided)).toBe(303)
    const back = new URL(decided.location!)
    expect(back.origin + back.pathname).toBe(flow.redirectUri)
    expect(back.searchParams.get('state')).toBe(started.state)
    expect(back.searchParams.get('iss')).toBe('https://api.sho.rt')
    expect(back.searchParams.get('code')).toBeTruthy()
    const tokens = await exchange(flow, started, back)
    expect(tokens.scope?.split(' ').sort()).toEqual(['links:read', 'offline_access'])

    // Decided: the page is closed (410), and so is a second decision.
    const again = await browser.get(`/consent?request_id=${requestId}`)
    expect(again.status, showPage(again)).toBe(410)
    const twice = await browser.post('/consent', { request_id: requestId, csrf: inputValue(page.text, 'csrf')!, decision: 'deny' })
    expect(twice.status, showPage(twice)).toBe(410)
    expect(twice.location).toBeNull()
  })

  test('deny: 303 with error=access_denied and the state', async () => {
    const browser = await signedInBrowser()
    const { started, requestId } = await pendingRequest()
    const page = await browser.get(`/consent?request_id=${requestId}`)
    const decided = await browser.post('/consent', { request_id: requestId, csrf: inputValue(page.text, 'csrf')!, decision: 'deny' })
    const back = new URL(decided.location!)
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('state')).toBe(started.state)
    expect(back.searchParams.get('code')).toBeNull()
  })

  test("without the session's CSRF token: 403 page, the request stays pending", async () => {
    const browser = await signedInBrowser()
    const other = await signedInBrowser()
    const { requestId } = await pendingRequest()
    const otherCsrf = inputValue((await other.get('/signin/done')).text, 'csrf')!
    for (const csrf of [undefined, otherCsrf]) {
      const refused = await browser.post('/consent', { request_id: requestId, decision: 'approve', ...(csrf && { csrf }) })
      expect(refused.status, showPage(refused)).toBe(403)
      expect(refused.location).toBeNull()
    }
    expect((await browser.get(`/consent?request_id=${requestId}`)).status).toBe(200)
  })

  test('no scope ticked: the page again with a message (400), still pending', async () => {
    const browser = await signedInBrowser()
    const { requestId } = await pendingRequest()
    const page = await browser.get(`/consent?request_id=${requestId}`)
    const none = await browser.post('/consent', { request_id: requestId, csrf: inputValue(page.text, 'csrf')!, scope_choice: '1', decision: 'approve' })
    expect(none.status, showPage(none)).toBe(400)
    expect(none.text).toContain('Tick at least one')
    expect(scopeBoxes(none.text)).toEqual(['links:read', 'links:write', 'offline_access'])
    expect((await browser.get(`/consent?request_id=${requestId}`)).status).toBe(200)
  })

  test('a request decided by another account is not found for this one', async () => {
    const alice = await signedInBrowser()
    const bob = await signedInBrowser()
    const { requestId } = await pendingRequest()
    const page = await alice.get(`/consent?request_id=${requestId}`)
    await alice.post('/consent', { request_id: requestId, csrf: inputValue(page.text, 'csrf')!, decision: 'approve' })
    const seen = await bob.get(`/consent?request_id=${requestId}`)
    expect(seen.status, showPage(seen)).toBe(404)
  })

  test('signed out: 303 to sign-in, nothing decided', async () => {
    const { requestId } = await pendingRequest()
    const out = await new Browser(api.app).post('/consent', { request_id: requestId, decision: 'approve', csrf: 'x' })
    expect(out.status, showPage(out)).toBe(303)
    expect(out.location).toStartWith('/signin?next=')
    expect((await (await signedInBrowser()).get(`/consent?request_id=${requestId}`)).status).toBe(200)
  })
})
