// Held Agent calls and the human's decision: approve (runs once), reject, expiry, kill, concurrent
// approvals, scope removed before approval, retries with an Idempotency-Key; and who may see what.
import { beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { call, show, testApi, type TestApp } from '../../../test/support/api'
import { agentToken, newAccount, newLink, type TestAccount } from '../../../test/support/fixtures'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
let human: TestAccount
/** A clock the expiry test moves; everything else runs at the real time. */
let offsetMs = 0

beforeAll(async () => {
  api = await testApi({ now: () => Date.now() + offsetMs })
  app = api.app
})

// A human of their own per test: an API key allows 30 requests a minute on Free.
beforeEach(async () => {
  human = await newAccount(api.deps.db, 'pro')
})

/** An Agent with the default policy (links.delete held) and a token of its scopes. */
const agentWithToken = (scopes = ['links:read', 'links:write', 'links:delete']) => agentToken(app, human, scopes)

async function heldDelete(token: string, headers: Record<string, string> = {}) {
  const link = await newLink(api.deps.db, human.id, 'sho.rt')
  const res = await call(app, 'DELETE', `/api/v1/links/${link.alias}`, { token, headers })
  expect(res.status, show(res)).toBe(202)
  return { link, approval: res.body.data.approval, location: res.headers.get('location') }
}

const linkStatus = async (alias: string) => (await call(app, 'GET', `/api/v1/links/${alias}`, { token: human.key })).status
const decide = (id: string, decision: string, key?: string) => call(app, 'POST', `/api/v1/agent/approvals/${id}/${decision}`, { token: key ?? human.key })

describe('a held call', () => {
  test('an Agent deleting a link gets 202 with the approval; the link stays until the human approves; then it runs once', async () => {
    const { agentId, token } = await agentWithToken()
    const { link, approval, location } = await heldDelete(token)
    expect(approval).toMatchObject({ status: 'pending', agent_id: agentId, operation: 'links.delete', request: { method: 'DELETE', path: `/api/v1/links/${link.alias}` }, result: null })
    expect(approval.review_url).toBe(`https://api.sho.rt/approvals/${approval.id}`)
    expect(location).toBe(`/api/v1/agent/approvals/${approval.id}`)
    expect(await linkStatus(link.alias)).toBe(200)

    const polled = await call(app, 'GET', location!, { token })
    expect(polled.body.data.status, show(polled)).toBe('pending')
    const pending = await call(app, 'GET', '/api/v1/agent/approvals?status=pending', { token: human.key })
    expect(
      pending.body.data.approvals.map((a: { id: string }) => a.id),
      show(pending),
    ).toContain(approval.id)

    const approved = await decide(approval.id, 'approve')
    expect(approved.status, show(approved)).toBe(200)
    expect(approved.body.data).toMatchObject({ status: 'executed', result: { status: 200, body: { success: true } } })
    expect(await linkStatus(link.alias)).toBe(404)
    const after = await call(app, 'GET', location!, { token })
    expect(after.body.data.status, show(after)).toBe('executed')
    const all = await call(app, 'GET', '/api/v1/agent/approvals', { token: human.key })
    expect(
      all.body.data.approvals.map((a: { status: string }) => a.status),
      show(all),
    ).toEqual(['executed'])
    const again = await decide(approval.id, 'approve')
    expect(again.status, show(again)).toBe(409)
    expect(again.body.error).toBe('APPROVAL_DECIDED')
  })

  test("a held call is previewed first: a delete of a link that is not there (or is another account's) is 404 at once, nothing is held", async () => {
    const { token } = await agentWithToken()
    const missing = await call(app, 'DELETE', '/api/v1/links/no-such-alias-here', { token })
    expect(missing.status, show(missing)).toBe(404)
    expect(missing.body.error).toBe('LINK_NOT_FOUND')
    const other = await newAccount(api.deps.db)
    const foreign = await newLink(api.deps.db, other.id, 'sho.rt')
    const notMine = await call(app, 'DELETE', `/api/v1/links/${foreign.alias}`, { token })
    expect(notMine.status, show(notMine)).toBe(404)
    const list = await call(app, 'GET', '/api/v1/agent/approvals', { token: human.key })
    expect(list.body.data.approvals, show(list)).toEqual([])
    expect((await call(app, 'GET', `/api/v1/links/${foreign.alias}`, { token: other.key })).status).toBe(200)
  })

  test('an operation the policy does not name runs at once (links.create)', async () => {
    const { token } = await agentWithToken()
    const res = await call(app, 'POST', '/api/v1/shorten', { token, body: { url: 'https://example.com/not-held' } })
    expect(res.status, show(res)).toBe(200)
  })

  test('reject runs nothing; the link stays', async () => {
    const { token } = await agentWithToken()
    const { link, approval } = await heldDelete(token)
    const rejected = await decide(approval.id, 'reject')
    expect(rejected.body.data.status, show(rejected)).toBe('rejected')
    expect(await linkStatus(link.alias)).toBe(200)
    expect((await decide(approval.id, 'approve')).status).toBe(409)
    expect(await linkStatus(link.alias)).toBe(200)
  })

  test('expiry: 24 hours later the approval reads expired and approving runs nothing', async () => {
    const { token } = await agentWithToken()
    const { link, approval } = await heldDelete(token)
    offsetMs = 24 * 3600 * 1000 + 1000
    try {
      const read = await call(app, 'GET', `/api/v1/agent/approvals/${approval.id}`, { token: human.key })
      expect(read.body.data.status, show(read)).toBe('expired')
      const late = await decide(approval.id, 'approve')
      expect(late.status, show(late)).toBe(409)
    } finally {
      offsetMs = 0
    }
    expect(await linkStatus(link.alias)).toBe(200)
  })

  test('kill: pending approvals expire and approving runs nothing', async () => {
    const { agentId, token } = await agentWithToken()
    const { link, approval } = await heldDelete(token)
    await call(app, 'POST', `/api/v1/agents/${agentId}/kill`, { token: human.key })
    const read = await call(app, 'GET', `/api/v1/agent/approvals/${approval.id}`, { token: human.key })
    expect(read.body.data.status, show(read)).toBe('expired')
    expect((await decide(approval.id, 'approve')).status).toBe(409)
    expect(await linkStatus(link.alias)).toBe(200)
  })

  test('scope removed before approval: the approval fails with INSUFFICIENT_SCOPE and nothing runs', async () => {
    const { agentId, token } = await agentWithToken()
    const { link, approval } = await heldDelete(token)
    await call(app, 'PATCH', `/api/v1/agents/${agentId}`, { token: human.key, body: { scopes: ['links:read'] } })
    const approved = await decide(approval.id, 'approve')
    expect(approved.body.data, show(approved)).toMatchObject({ status: 'failed', result: { status: 403, body: { error: 'INSUFFICIENT_SCOPE' } } })
    expect(await linkStatus(link.alias)).toBe(200)
  })

  test('20 concurrent approvals of one call run it once', async () => {
    const { token } = await agentWithToken()
    const { link, approval } = await heldDelete(token)
    const answers = await Promise.all(Array.from({ length: 20 }, () => decide(approval.id, 'approve')))
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses.filter((s) => s === 200).length, JSON.stringify(statuses)).toBe(1)
    expect(statuses.filter((s) => s === 409).length).toBe(19)
    expect(answers.find((a) => a.status === 200)!.body.data.result.status).toBe(200)
    expect(await linkStatus(link.alias)).toBe(404)
  })

  test('a retry with the same Idempotency-Key finds the same approval; the key with another call is 400', async () => {
    const { token } = await agentWithToken()
    const key = crypto.randomUUID()
    const { link, approval } = await heldDelete(token, { 'idempotency-key': key })
    const retry = await call(app, 'DELETE', `/api/v1/links/${link.alias}`, { token, headers: { 'idempotency-key': key } })
    expect(retry.status, show(retry)).toBe(202)
    expect(retry.body.data.approval.id).toBe(approval.id)
    const other = await newLink(api.deps.db, human.id, 'sho.rt')
    const reused = await call(app, 'DELETE', `/api/v1/links/${other.alias}`, { token, headers: { 'idempotency-key': key } })
    expect(reused.status, show(reused)).toBe(400)
    expect(reused.body.error).toBe('IDEMPOTENCY_KEY_REUSED')
  })
})

describe('approvals: security', () => {
  test("another account's approval is 404 to read and to decide; another Agent of the same account cannot read it", async () => {
    const { token } = await agentWithToken()
    const { approval } = await heldDelete(token)
    const other = await newAccount(api.deps.db)
    expect((await call(app, 'GET', `/api/v1/agent/approvals/${approval.id}`, { token: other.key })).status).toBe(404)
    const decided = await decide(approval.id, 'approve', other.key)
    expect(decided.status, show(decided)).toBe(404)
    expect(decided.body.error).toBe('APPROVAL_NOT_FOUND')
    const list = await call(app, 'GET', '/api/v1/agent/approvals', { token: other.key })
    expect(list.body.data.approvals, show(list)).toEqual([])
    const sibling = await agentWithToken()
    expect((await call(app, 'GET', `/api/v1/agent/approvals/${approval.id}`, { token: sibling.token })).status).toBe(404)
  })

  test('an Agent cannot decide, not even its own approval, nor list them (403 HUMAN_ONLY)', async () => {
    const { token } = await agentWithToken()
    const { link, approval } = await heldDelete(token)
    const self = await decide(approval.id, 'approve', token)
    expect(self.status, show(self)).toBe(403)
    expect(self.body.error).toBe('HUMAN_ONLY')
    expect((await call(app, 'GET', '/api/v1/agent/approvals', { token })).status).toBe(403)
    expect(await linkStatus(link.alias)).toBe(200)
  })

  test('an unknown decision or a malformed id is a clear 4xx', async () => {
    const { token } = await agentWithToken()
    const { approval } = await heldDelete(token)
    expect((await decide(approval.id, 'maybe')).status).toBe(400)
    expect((await decide('apr_nope', 'approve')).status).toBe(404)
  })
})
