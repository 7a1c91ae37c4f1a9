// The Agent events, each committed with its change: a held call is agent.approval_requested (the approval
// with the page the human opens), a decision agent.approval_decided, a kill agent.killed (once). None
// carries a secret.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, testApi, type TestApp } from '../../../test/support/api'
import { agentToken, newAccount, type TestAccount } from '../../../test/support/fixtures'
import { eventsOf, subscribe } from '../webhooks/events-kit.test'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
beforeAll(async () => {
  api = await testApi()
  app = api.app
})

async function heldDelete(human: TestAccount) {
  const alias = `apr-${crypto.randomUUID().slice(0, 10)}`
  expect((await call(app, 'POST', '/api/v1/shorten', { token: human.key, body: { url: 'https://example.com/held', alias } })).status).toBe(200)
  const { token, agentId } = await agentToken(app, human, ['links:read', 'links:delete'])
  const held = await call(app, 'DELETE', `/api/v1/links/${alias}`, { token })
  expect(held.status, show(held)).toBe(202)
  return { approval: held.body.data.approval, agentId, token }
}

describe('Agent events', () => {
  test('agent.approval_requested: the approval as the API returns it, with its review_url', async () => {
    const human = await newAccount(api.deps.db)
    await subscribe(app, human.key, ['agent.approval_requested'])
    const { approval } = await heldDelete(human)
    const events = await eventsOf(api.deps.db, human.id)
    expect(events.map((e) => e.type)).toEqual(['agent.approval_requested'])
    expect(events[0]!.data).toEqual(approval)
    expect(events[0]!.data.review_url).toBe(`${api.deps.config.publicApiUrl}/approvals/${approval.id}`)
  })

  test('agent.approval_decided: on approve and on reject, with the decision; a second decision none', async () => {
    const human = await newAccount(api.deps.db)
    await subscribe(app, human.key, ['agent.approval_decided'])
    const first = await heldDelete(human)
    const second = await heldDelete(human)
    const approved = await call(app, 'POST', `/api/v1/agent/approvals/${first.approval.id}/approve`, { token: human.key })
    expect(approved.body.data.status, show(approved)).toBe('executed')
    const rejected = await call(app, 'POST', `/api/v1/agent/approvals/${second.approval.id}/reject`, { token: human.key })
    expect(rejected.body.data.status, show(rejected)).toBe('rejected')
    expect((await call(app, 'POST', `/api/v1/agent/approvals/${second.approval.id}/approve`, { token: human.key })).status).toBe(409)
    const events = await eventsOf(api.deps.db, human.id)
    expect(events.map((e) => [e.type, e.data.id, e.data.status, e.data.decided_at === null])).toEqual([
      ['agent.approval_decided', first.approval.id, 'approved', false],
      ['agent.approval_decided', second.approval.id, 'rejected', false],
    ])
  })

  test('agent.killed: once, with the Agent as the API returns it', async () => {
    const human = await newAccount(api.deps.db)
    await subscribe(app, human.key, ['agent.killed'])
    const { agentId } = await agentToken(app, human, ['links:read'])
    const killed = await call(app, 'POST', `/api/v1/agents/${agentId}/kill`, { token: human.key })
    expect(killed.status, show(killed)).toBe(200)
    expect((await call(app, 'POST', `/api/v1/agents/${agentId}/kill`, { token: human.key })).status).toBe(200)
    const events = await eventsOf(api.deps.db, human.id)
    expect(events.map((e) => e.type)).toEqual(['agent.killed'])
    expect(events[0]!.data).toEqual(killed.body.data)
  })
})
