// GET/PATCH /api/v1/account/notifications and the mail of a new approval: on by default (the mail names the
// Agent, the call and the review page), off after {approval_emails: false}, on again after true. The
// route is the human's: an Agent's token is 403 HUMAN_ONLY, a restricted key 403 FULL_ACCESS_REQUIRED.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, show, testApi, testConfig, type TestApp } from '../../../test/support/api'
import { agentToken, newAccount, type TestAccount } from '../../../test/support/fixtures'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
let sink: SmtpSink
const PATH = '/api/v1/account/notifications'

beforeAll(async () => {
  sink = await startSmtpSink()
  api = await testApi({ config: testConfig({ SMTP_URL: sink.url }) })
  app = api.app
})
afterAll(() => sink.close())

const emailOf = (account: TestAccount) => `${account.id.toLowerCase()}@example.test`

/** An Agent's held link deletion; the approval. */
async function held(human: TestAccount, token: string) {
  const alias = `ntf-${crypto.randomUUID().slice(0, 10)}`
  expect((await call(app, 'POST', '/api/v1/shorten', { token: human.key, body: { url: 'https://example.com/n', alias } })).status).toBe(200)
  const res = await call(app, 'DELETE', `/api/v1/links/${alias}`, { token })
  expect(res.status, show(res)).toBe(202)
  return res.body.data.approval
}

describe('/api/v1/account/notifications', () => {
  test('GET answers approval_emails true by default; PATCH changes it and answers the settings', async () => {
    const human = await newAccount(api.deps.db)
    const got = await call(app, 'GET', PATH, { token: human.key })
    expect(got.status, show(got)).toBe(200)
    expect(got.body.data).toEqual({ approval_emails: true })
    const off = await call(app, 'PATCH', PATH, { token: human.key, body: { approval_emails: false } })
    expect(off.status, show(off)).toBe(200)
    expect(off.body.data).toEqual({ approval_emails: false })
    expect((await call(app, 'PATCH', PATH, { token: human.key, body: {} })).body.data).toEqual({ approval_emails: false })
    expect((await call(app, 'GET', PATH, { token: human.key })).body.data).toEqual({ approval_emails: false })
  })

  test('a body of the wrong type is 400 VALIDATION_FAILED', async () => {
    const human = await newAccount(api.deps.db)
    const res = await call(app, 'PATCH', PATH, { token: human.key, body: { approval_emails: 'no' } })
    expect(res.status, show(res)).toBe(400)
    expect(res.body.error).toBe('VALIDATION_FAILED')
  })

  test("the human's only: an Agent's token 403 HUMAN_ONLY, a restricted key 403 FULL_ACCESS_REQUIRED, nothing changed", async () => {
    const human = await newAccount(api.deps.db)
    const { token } = await agentToken(app, human, ['account:read'])
    const key = await call(app, 'POST', '/api/v1/account/keys', { token: human.key, body: { name: 'narrow', scopes: ['account:read'] } })
    for (const [who, error] of [
      [token, 'HUMAN_ONLY'],
      [key.body.data.key, 'FULL_ACCESS_REQUIRED'],
    ] as const) {
      const res = await call(app, 'PATCH', PATH, { token: who, body: { approval_emails: false } })
      expect(res.status, show(res)).toBe(403)
      expect(res.body.error).toBe(error)
    }
    expect((await call(app, 'GET', PATH, { token: human.key })).body.data).toEqual({ approval_emails: true })
  })
})

describe('the mail of a new approval', () => {
  test("mailed to the account's address with the Agent, the call and the review page; not while turned off; again once on", async () => {
    const human = await newAccount(api.deps.db)
    const { token } = await agentToken(app, human, ['links:read', 'links:delete'])
    const first = await held(human, token)
    const mails = sink.to(emailOf(human))
    expect(mails.length, mails.map((m) => m.raw).join('\n')).toBe(1)
    expect(mails[0]!.raw).toContain('asks for your approval: delete a link')
    expect(mails[0]!.raw).toContain(`DELETE /api/v1/links/`)
    expect(mails[0]!.raw.replace(/=\r?\n/g, '')).toContain(first.review_url)

    expect((await call(app, 'PATCH', PATH, { token: human.key, body: { approval_emails: false } })).status).toBe(200)
    const quiet = await held(human, token)
    expect(quiet.status).toBe('pending')
    // The mail is sent before the 202 answers: the next approval's mail, once turned on again, marks that
    // the one in between was not held back but never sent.
    expect((await call(app, 'PATCH', PATH, { token: human.key, body: { approval_emails: true } })).status).toBe(200)
    const third = await held(human, token)
    const after = sink.to(emailOf(human))
    expect(after.length, after.map((m) => m.raw).join('\n')).toBe(2)
    expect(after[1]!.raw.replace(/=\r?\n/g, '')).toContain(third.review_url)
    expect(after.some((m) => m.raw.replace(/=\r?\n/g, '').includes(quiet.id))).toBe(false)
  })
})
