// The human side of OAuth in a real browser: Debian's Chromium driven by playwright-core (no browser is
// ever downloaded) against the app on a real port. A client registers with a loopback redirect URI
// (served by a tiny Bun.serve here), the browser opens its authorization URL, signs in on the pages with
// the code from the mail the SMTP sink received, approves part of the request on the consent page and
// lands on the redirect URI with code, state and iss. Then, still signed in, it approves an Agent's held
// call on the approval page. Without JavaScript tricks: the pages have none.
// Skipped, with a printed reason, where Chromium is absent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { TEST_IP_HEADER, testApi, testConfig, uniqueIp, type TestApp } from '../support/api'
import { newAccount } from '../support/fixtures'
import { authorizationUrl, discoverAndRegister, exchange, type Flow } from '../support/oauth'
import { signInCodeFrom, waitForMail } from '../support/signin'
import { startSmtpSink, type SmtpSink } from '../support/smtp'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const HAVE_CHROMIUM = existsSync(CHROMIUM)
if (!HAVE_CHROMIUM) {
  console.log(`test/browser/consent.test.ts: SKIPPED: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`)
}

const LAUNCH_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

let sink: SmtpSink
let server: ReturnType<typeof Bun.serve>
let callbackServer: ReturnType<typeof Bun.serve>
let app: TestApp
let origin: string
let db: Awaited<ReturnType<typeof testApi>>['deps']['db']
let browser: Browser
let context: BrowserContext
let page: Page
/** What the client's redirect URI received. */
const callbacks: URL[] = []
/** Requests to any origin but the two servers here; page errors, console errors, CSP violations. */
const foreign: string[] = []
const problems: string[] = []
/** The API key of the human the first test signs in. */
let humanKey = ''

describe.skipIf(!HAVE_CHROMIUM)('sign-in and consent in Chromium', () => {
  beforeAll(async () => {
    sink = await startSmtpSink()
    // The app learns its own origin (PUBLIC_API_URL, the issuer) once the port is known.
    server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => app.handle(request) })
    origin = server.url.origin
    const api = await testApi({ config: testConfig({ SMTP_URL: sink.url, PUBLIC_API_URL: origin }) })
    app = api.app
    db = api.deps.db
    callbackServer = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(request) {
        callbacks.push(new URL(request.url))
        return new Response('<!doctype html><title>Client</title><h1>Connected</h1>', { headers: { 'content-type': 'text/html' } })
      },
    })

    browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS })
    context = await browser.newContext({ extraHTTPHeaders: { [TEST_IP_HEADER]: uniqueIp() } })
    context.on('request', (request) => {
      const url = new URL(request.url())
      if (url.origin !== origin && url.origin !== callbackServer.url.origin) foreign.push(request.url())
    })
    page = await context.newPage()
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console ${message.type()}: ${message.text()}`)
    })
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    server?.stop(true)
    callbackServer?.stop(true)
    await sink?.close()
  })

  test('authorize → sign in with the mailed code → approve a subset → the redirect URI gets code, state and iss', async () => {
    const { id, key } = await newAccount(db)
    humanKey = key
    const email = `${id.toLowerCase()}@example.test`
    const ip = uniqueIp()
    const fetchAsClient = (url: string, init?: RequestInit) => fetch(url, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), [TEST_IP_HEADER]: ip } })
    const redirectUri = `${callbackServer.url.origin}/callback`
    const registered = await discoverAndRegister(fetchAsClient, origin, { client_name: 'Browser test client', redirect_uris: [redirectUri] })
    const flow: Flow = { ...registered, redirectUri }
    const started = await authorizationUrl(flow, 'links:read links:write account:read')

    // Signed out: authorize → consent → the sign-in page.
    await page.goto(started.url.href)
    expect(new URL(page.url()).pathname).toBe('/signin')
    await page.fill('input[name=email]', email)
    await page.click('button[type=submit]')
    await page.waitForSelector('input[name=code]')
    const code = signInCodeFrom(await waitForMail(sink, email))
    await page.fill('input[name=code]', code)
    await page.click('button[type=submit]')

    // Signed in, back on the consent page of this request.
    await page.waitForURL((url) => url.pathname === '/consent')
    expect(await page.textContent('h1')).toBe('Browser test client wants access to your account')
    expect(await page.locator('input[name=scope]').count()).toBe(3)
    await page.uncheck('input[name=scope][value="links:write"]')
    await Promise.all([page.waitForURL((url) => url.origin === callbackServer.url.origin), page.click('button[value=approve]')])

    const landed = new URL(page.url())
    expect(landed.pathname).toBe('/callback')
    expect(landed.searchParams.get('code')).toBeTruthy()
    expect(landed.searchParams.get('state')).toBe(started.state)
    expect(landed.searchParams.get('iss')).toBe(origin)
    expect(callbacks.map((u) => u.href)).toContain(landed.href)
    const tokens = await exchange(flow, started, landed)
    expect(tokens.scope?.split(' ').sort()).toEqual(['account:read', 'links:read'])
  }, 60_000)

  test("the approval page: an Agent's held delete, approved in the browser, runs once", async () => {
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${origin}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${humanKey}`, 'content-type': 'application/json', [TEST_IP_HEADER]: uniqueIp(), ...Object.fromEntries(new Headers(init.headers)) },
      })
    const agent = (await (await api('/api/v1/agents', { method: 'POST', body: JSON.stringify({ name: 'Cleanup bot', scopes: ['links:write', 'links:delete'] }) })).json()) as { data: { id: string } }
    const minted = (await (await api(`/api/v1/agents/${agent.data.id}/tokens`, { method: 'POST', body: '{}' })).json()) as { data: { token: string } }
    const asAgent = { authorization: `Bearer ${minted.data.token}` }
    const created = (await (await api('/api/v1/shorten', { method: 'POST', headers: asAgent, body: JSON.stringify({ url: 'https://example.com/to-delete' }) })).json()) as { data: { alias: string } }
    const held = await api(`/api/v1/links/${created.data.alias}`, { method: 'DELETE', headers: asAgent })
    expect(held.status).toBe(202)
    const { approval } = ((await held.json()) as { data: { approval: { review_url: string; id: string } } }).data

    await page.goto(approval.review_url)
    expect(await page.textContent('h1')).toBe('Cleanup bot asks to links.delete')
    expect(await page.textContent('body')).toContain(`DELETE /api/v1/links/${created.data.alias}`)
    await Promise.all([page.waitForLoadState('load'), page.click('button[value=approve]')])
    await page.waitForSelector('text=Approved and run')
    expect(await page.locator('button[value=approve]').count()).toBe(0)
    expect((await api(`/api/v1/links/${created.data.alias}`)).status).toBe(404)
  }, 60_000)

  test('the signed-in page signs out; the consent page then asks to sign in again', async () => {
    await page.goto(`${origin}/signin/done`)
    expect(await page.textContent('h1')).toBe('Signed in')
    await page.click('button[type=submit]')
    await page.waitForURL((url) => url.pathname === '/signin')
    await page.goto(`${origin}/consent?request_id=oreq_AAAAAAAAAAAAAAAAAAAAAA`)
    expect(new URL(page.url()).pathname).toBe('/signin')
  })

  test('no request left the machine; no page error, console error or CSP violation', () => {
    expect(foreign).toEqual([])
    expect(problems).toEqual([])
  })
})
