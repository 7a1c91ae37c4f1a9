// The approval page for the human: signed out it sends to sign-in; signed in it shows what the Agent
// asked and decides with the session's CSRF token; the decision runs the call once; another account's
// approval is a 404 page.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { call, show, testApi, testConfig } from '../../../test/support/api'
import { newAccount, newLink } from '../../../test/support/fixtures'
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

/** A signed-in human, an Agent of theirs, and a link delete held for approval. */
async function heldDelete() {
  const human = await newAccount(api.deps.db, 'pro')
  const browser = new Browser(api.app)
  await signInByMail(browser, sink, `${human.id.toLowerCase()}@example.test`)
  const agent = await call(api.app, 'POST', '/api/v1/agents', { token: human.key, body: { name: 'Cleanup bot', scopes: ['links:delete'] } })
  const token = (await call(api.app, 'POST', `/api/v1/agents/${agent.body.data.id}/tokens`, { token: human.key, body: {} })).body.data.token
  const link = await newLink(api.deps.db, human.id, 'sho.rt')
  const held = await call(api.app, 'DELETE', `/api/v1/links/${link.alias}`, { token })
  expect(held.status, show(held)).toBe(202)
  const approval = held.body.data.approval
  return { human, browser, link, approval, path: new URL(approval.review_url).pathname }
}

describe('the approval page', () => {
  test('shows the held call and approves it with the session: the call runs once, the page says so', async () => {
    const { human, browser, link, approval, path } = await heldDelete()
    const page = await browser.get(path)
    expect(page.status, page.text).toBe(200)
    expect(page.text).toContain('Cleanup bot')
    expect(page.text).toContain('links.delete')
    expect(page.text).toContain(`DELETE /api/v1/links/${link.alias}`)
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    const csrf = inputValue(page.text, 'csrf')!
    const decided = await browser.post(path, { decision: 'approve', csrf })
    expect(decided.status, decided.text).toBe(303)
    expect(decided.location).toBe(path)
    const after = await browser.get(path)
    expect(after.text).toContain('Approved and run')
    expect(after.text).not.toContain('name="decision"')
    expect((await call(api.app, 'GET', `/api/v1/links/${link.alias}`, { token: human.key })).status).toBe(404)
    const read = await call(api.app, 'GET', `/api/v1/agent/approvals/${approval.id}`, { token: human.key })
    expect(read.body.data.status, show(read)).toBe('executed')
  })

  test('reject from the page runs nothing', async () => {
    const { human, browser, link, path } = await heldDelete()
    const csrf = inputValue((await browser.get(path)).text, 'csrf')!
    await browser.post(path, { decision: 'reject', csrf })
    expect((await browser.get(path)).text).toContain('Rejected: nothing was run')
    expect((await call(api.app, 'GET', `/api/v1/links/${link.alias}`, { token: human.key })).status).toBe(200)
  })

  test("a form without the session's CSRF token is refused and decides nothing", async () => {
    const { human, browser, link, path } = await heldDelete()
    for (const csrf of ['', 'forged']) {
      const refused = await browser.post(path, { decision: 'approve', csrf })
      expect(refused.status, refused.text).toBe(403)
    }
    expect((await call(api.app, 'GET', `/api/v1/links/${link.alias}`, { token: human.key })).status).toBe(200)
    expect((await browser.get(path)).text).toContain('Waiting for your decision')
  })

  test("signed out: to sign-in and back; another account's approval is a 404 page", async () => {
    const { path } = await heldDelete()
    const stranger = new Browser(api.app)
    const out = await stranger.get(path)
    expect(out.status).toBe(303)
    expect(out.location).toBe(`/signin?next=${encodeURIComponent(path)}`)
    const other = await newAccount(api.deps.db)
    await signInByMail(stranger, sink, `${other.id.toLowerCase()}@example.test`)
    const foreign = await stranger.get(path)
    expect(foreign.status, foreign.text).toBe(404)
    const csrf = inputValue((await stranger.get('/signin/done')).text, 'csrf')!
    expect((await stranger.post(path, { decision: 'approve', csrf })).status).toBe(404)
  })
})
