// The signed-in human on the API routes that are theirs alone (Agents, approvals, consent requests),
// through the real app: the session cookie authenticates, writes need X-CSRF-Token, an API route that an
// Agent may call takes it too (the dashboard), with the same CSRF rule, and sign-out ends it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testApi, testConfig } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'
import { Browser, inputValue, signInByMail } from '../../../test/support/signin'

let sink: SmtpSink
let api: Awaited<ReturnType<typeof testApi>>

beforeAll(async () => {
  sink = await startSmtpSink()
  api = await testApi({ config: testConfig({ SMTP_URL: sink.url }) })
})

afterAll(async () => {
  await sink.close()
})

describe('the session on human API routes', () => {
  test('create and list Agents with the cookie (CSRF header on the write), links with the cookie too (CSRF on writes); sign-out ends it', async () => {
    const { id } = await newAccount(api.deps.db)
    const browser = new Browser(api.app)
    await signInByMail(browser, sink, `${id.toLowerCase()}@example.test`)
    const csrf = inputValue((await browser.get('/signin/done')).text, 'csrf')!
    const json = { 'content-type': 'application/json' }

    const refused = await browser.request('POST', '/api/v1/agents', undefined, { ...json })
    expect(refused.status, refused.text).toBe(403)
    expect(JSON.parse(refused.text).error).toBe('CSRF_TOKEN_INVALID')

    const body = JSON.stringify({ name: 'from the browser', scopes: ['links:read'] })
    const created = await browser.app.handle(new Request('http://localhost/api/v1/agents', { method: 'POST', headers: { ...json, cookie: browser.cookieHeader(), 'x-csrf-token': csrf }, body }))
    const createdText = await created.text()
    expect(created.status, createdText).toBe(201)
    const list = await browser.get('/api/v1/agents')
    expect(list.status, list.text).toBe(200)
    expect(JSON.parse(list.text).data.agents.map((a: { name: string }) => a.name)).toEqual(['from the browser'])

    // A route an Agent may call (links) takes the session too (the dashboard's credential), and its
    // writes the CSRF header: without it nothing is created.
    const noCsrf = await browser.app.handle(
      new Request('http://localhost/api/v1/shorten', { method: 'POST', headers: { ...json, cookie: browser.cookieHeader() }, body: JSON.stringify({ url: 'https://example.com/forged' }) }),
    )
    expect(noCsrf.status, await noCsrf.text()).toBe(403)
    const shortened = await browser.app.handle(
      new Request('http://localhost/api/v1/shorten', {
        method: 'POST',
        headers: { ...json, cookie: browser.cookieHeader(), 'x-csrf-token': csrf },
        body: JSON.stringify({ url: 'https://example.com/from-the-dashboard' }),
      }),
    )
    const shortenedText = await shortened.text()
    expect(shortened.status, shortenedText).toBe(200)
    const links = await browser.get('/api/v1/links')
    expect(links.status, links.text).toBe(200)
    expect(JSON.parse(links.text).data.links.map((l: { full_url: string }) => l.full_url)).toEqual(['https://example.com/from-the-dashboard'])

    // Another site's page may make the browser send the cookie, but may not read the answer: no CORS.
    const fromElsewhere = await browser.app.handle(new Request('http://localhost/api/v1/links', { headers: { cookie: browser.cookieHeader(), origin: 'https://elsewhere.example' } }))
    expect(fromElsewhere.headers.get('access-control-allow-origin')).toBeNull()
    expect(fromElsewhere.headers.get('access-control-allow-credentials')).toBeNull()
    const preflight = await browser.app.handle(
      new Request('http://localhost/api/v1/shorten', {
        method: 'OPTIONS',
        headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-csrf-token' },
      }),
    )
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull()

    await browser.post('/signout', { csrf })
    expect((await browser.get('/api/v1/agents')).status).toBe(401)
    expect((await browser.get('/api/v1/links')).status).toBe(401)
  })
})
