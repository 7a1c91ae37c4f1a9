// The account's keys from the signed-in browser (the dashboard's way): the session cookie lists them,
// and its writes need X-CSRF-Token. And the key verification gives is the account's first, named.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, show, TEST_IP_HEADER, testApi, testConfig } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { Browser, inputValue, signInByMail } from '../../../test/support/signin'
import { signUp } from '../../../test/support/signup'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'
import { DEFAULT_KEY_NAME } from './verdicts'

let sink: SmtpSink
let api: Awaited<ReturnType<typeof testApi>>

beforeAll(async () => {
  sink = await startSmtpSink()
  api = await testApi({ config: testConfig({ SMTP_URL: sink.url }) })
})
afterAll(() => sink.close())

const KEYS = '/api/v1/account/keys'

/** A JSON call with the browser's cookie (and the headers given). */
async function send(browser: Browser, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const all: Record<string, string> = { [TEST_IP_HEADER]: browser.ip, cookie: browser.cookieHeader(), ...headers }
  if (body !== undefined) all['content-type'] = 'application/json'
  const res = await api.app.handle(new Request(`http://localhost${path}`, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body) }))
  const text = await res.text()
  return { status: res.status, text, body: JSON.parse(text), headers: res.headers }
}

describe('API keys with the session', () => {
  test('list, create and revoke with the cookie; a write without the CSRF token (or with a wrong one) is 403 CSRF_TOKEN_INVALID and changes nothing', async () => {
    const human = await newAccount(api.deps.db)
    const browser = new Browser(api.app)
    await signInByMail(browser, sink, `${human.id.toLowerCase()}@example.test`)
    const csrf = inputValue((await browser.get('/signin/done')).text, 'csrf')!

    const listed = await send(browser, 'GET', KEYS)
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.data.keys).toHaveLength(1)
    const defaultKey = listed.body.data.keys[0]

    for (const headers of [{}, { 'x-csrf-token': 'not-the-token' }] as Record<string, string>[]) {
      const create = await send(browser, 'POST', KEYS, { name: 'forged' }, headers)
      expect(create.status, create.text).toBe(403)
      expect(create.body.error).toBe('CSRF_TOKEN_INVALID')
      const revoke = await send(browser, 'DELETE', `${KEYS}/${defaultKey.id}`, undefined, headers)
      expect(revoke.status, revoke.text).toBe(403)
      expect(revoke.body.error).toBe('CSRF_TOKEN_INVALID')
    }
    expect((await send(browser, 'GET', KEYS)).body.data.keys).toEqual([defaultKey])
    expect((await call(api.app, 'GET', '/api/v1/links', { token: human.key })).status).toBe(200)

    const created = await send(browser, 'POST', KEYS, { name: 'from the dashboard', scopes: ['stats:read'] }, { 'x-csrf-token': csrf })
    expect(created.status, created.text).toBe(201)
    expect(created.body.data).toMatchObject({ name: 'from the dashboard', scopes: ['stats:read'] })
    const revoked = await send(browser, 'DELETE', `${KEYS}/${defaultKey.id}`, undefined, { 'x-csrf-token': csrf })
    expect(revoked.status, revoked.text).toBe(200)
    expect((await call(api.app, 'GET', '/api/v1/links', { token: human.key })).status).toBe(401)
    expect((await send(browser, 'GET', KEYS)).body.data.keys.map((k: { name: string }) => k.name)).toEqual(['from the dashboard'])
  })

  test('the key verification gives is the first of the list, named and with full access', async () => {
    const { apiKey } = await signUp(api.app, sink)
    const res = await call(api.app, 'GET', KEYS, { token: apiKey })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data.keys).toHaveLength(1)
    expect(res.body.data.keys[0]).toMatchObject({ name: DEFAULT_KEY_NAME, prefix: apiKey.slice(0, 7), scopes: null })
  })
})
