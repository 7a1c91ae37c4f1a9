// The signed-in human on the API routes that are theirs alone (Agents, approvals, consent requests),
// through the real app: the session cookie authenticates, writes need X-CSRF-Token, an API route that an
// Agent may call does not take the cookie, and sign-out ends it.
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
  test('create and list Agents with the cookie (CSRF header on the write), not with the cookie alone on Agent routes; sign-out ends it', async () => {
    const { id } = await newAccount(api.deps.db)
    const browser = new Browser(api.app)
    await signInByMail(browser, sink, `${id.toLowerCase()}@example.test`)
    const csrf = inputValue((await browser.get('/signin/done')).text, 'csrf')!
    const json = { 'content-type': 'application/json' }

    const refused = await browser.request('POST', '/api/v1/agents', undefined, { ...json })
    expect(refused.status, refused.text).toBe(403)
    expect(JSON.parse(refused.text).error).toBe('CSRF_TOKEN_INVALID')

    const body = JSON.stringify({ name: 'from the browser', scopes: ['links:read'] })
    const created = await browser.app.handle(
      new Request('http://localhost/api/v1/agents', { method: 'POST', headers: { ...json, cookie: browser.cookieHeader(), 'x-csrf-token': csrf }, body }),
    )
    const createdText = await created.text()
    expect(created.status, createdText).toBe(201)
    const list = await browser.get('/api/v1/agents')
    expect(list.status, list.text).toBe(200)
    expect(JSON.parse(list.text).data.agents.map((a: { name: string }) => a.name)).toEqual(['from the browser'])

    // A route an Agent may call (links) is API key or token only: the cookie is not a credential there.
    const links = await browser.get('/api/v1/links')
    expect(links.status, links.text).toBe(401)

    await browser.post('/signout', { csrf })
    expect((await browser.get('/api/v1/agents')).status).toBe(401)
  })
})
