// Agents and webhooks: an at_ token holding webhooks:read reads them; one holding webhooks:write has its
// changes of where events go (create, change, delete, rotate) held for the human by default (202), run
// only once the human approves, and their stored result keeps no secret; without the scope, 403. MCP has
// no webhook tools, so these are REST only.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { webhooks } from '../../db/schema'
import { call, show, testApi, type TestApp } from '../../../test/support/api'
import { agentToken, newAccount } from '../../../test/support/fixtures'
import { newWebhook } from '../../../test/support/webhooks'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
const URL_A = 'https://hooks.example.com/a'
const URL_AGENT = 'https://agent.example.com/hook'

beforeAll(async () => {
  api = await testApi()
  app = api.app
})

const endpointsOf = (accountId: string) => api.deps.db.select().from(webhooks).where(eq(webhooks.accountId, accountId))

describe("an Agent's token on the webhook routes", () => {
  test('with webhooks:read it lists the webhooks and reads one, without secrets', async () => {
    const human = await newAccount(api.deps.db)
    const { id } = await newWebhook(app, human.key, URL_A, ['link.created'])
    const { token } = await agentToken(app, human, ['webhooks:read'])
    const list = await call(app, 'GET', '/api/v1/webhooks', { token })
    expect(list.status, show(list)).toBe(200)
    expect(list.body.data.webhooks.map((w: { id: string; url: string }) => [w.id, w.url])).toEqual([[id, URL_A]])
    const one = await call(app, 'GET', `/api/v1/webhooks/${id}`, { token })
    expect(one.status, show(one)).toBe(200)
    expect(JSON.stringify(one.body)).not.toContain('whsec_')
  })

  test('a create with webhooks:write is held (202) and runs only after the human approves; the result keeps no secret', async () => {
    const human = await newAccount(api.deps.db)
    const { token } = await agentToken(app, human, ['webhooks:read', 'webhooks:write'])
    const held = await call(app, 'POST', '/api/v1/webhooks', { token, body: { url: URL_AGENT, events: ['*'] } })
    expect(held.status, show(held)).toBe(202)
    expect(held.body.data.approval).toMatchObject({ status: 'pending', operation: 'webhooks.change', request: { method: 'POST', path: '/api/v1/webhooks' } })
    expect(await endpointsOf(human.id), 'nothing created while held').toEqual([])

    const approved = await call(app, 'POST', `/api/v1/agent/approvals/${held.body.data.approval.id}/approve`, { token: human.key })
    expect(approved.status, show(approved)).toBe(200)
    expect(approved.body.data.status, show(approved)).toBe('executed')
    expect(approved.body.data.result.status).toBe(201)
    expect(approved.body.data.result.body.data.secret).toBe('[hidden]')
    expect((await endpointsOf(human.id)).map((w) => w.url)).toEqual([URL_AGENT])
    const polled = await call(app, 'GET', `/api/v1/agent/approvals/${held.body.data.approval.id}`, { token })
    expect(JSON.stringify(polled.body), show(polled)).not.toContain('whsec_')
  })

  test('a change, a rotation and a delete are held too; a rejected change leaves the endpoint as it was', async () => {
    const human = await newAccount(api.deps.db)
    const { id } = await newWebhook(app, human.key, URL_A)
    const { token } = await agentToken(app, human, ['webhooks:write'])
    for (const [method, path, body] of [
      ['PATCH', `/api/v1/webhooks/${id}`, { url: URL_AGENT }],
      ['POST', `/api/v1/webhooks/${id}/rotate-secret`],
      ['DELETE', `/api/v1/webhooks/${id}`],
    ] as [string, string, unknown?][]) {
      const res = await call(app, method, path, { token, body })
      expect(res.status, `${method} ${path}: ${show(res)}`).toBe(202)
      const rejected = await call(app, 'POST', `/api/v1/agent/approvals/${res.body.data.approval.id}/reject`, { token: human.key })
      expect(rejected.body.data.status, show(rejected)).toBe('rejected')
    }
    const [stored] = await endpointsOf(human.id)
    expect([stored?.url, stored?.previousSecretSealed]).toEqual([URL_A, null])
  })

  test('a policy without webhooks.change lets the create run at once, its secret in the answer', async () => {
    const human = await newAccount(api.deps.db)
    const { token } = await agentToken(app, human, ['webhooks:write'], { require_approval: [] })
    const created = await call(app, 'POST', '/api/v1/webhooks', { token, body: { url: URL_AGENT, events: ['link.created'] } })
    expect(created.status, show(created)).toBe(201)
    expect(created.body.data.secret).toMatch(/^whsec_/)
  })

  test('without the scope: 403 INSUFFICIENT_SCOPE naming it, and nothing is held or changed', async () => {
    const human = await newAccount(api.deps.db)
    const { id } = await newWebhook(app, human.key, URL_A)
    const { token } = await agentToken(app, human, ['links:read', 'links:write', 'links:delete', 'account:read'], { require_approval: [] })
    const { token: reader } = await agentToken(app, human, ['webhooks:read'])
    for (const [who, method, path, body, scope] of [
      [token, 'GET', '/api/v1/webhooks', undefined, 'webhooks:read'],
      [token, 'POST', '/api/v1/webhooks', { url: URL_AGENT, events: ['*'] }, 'webhooks:write'],
      [reader, 'PATCH', `/api/v1/webhooks/${id}`, { url: URL_AGENT }, 'webhooks:write'],
      [reader, 'DELETE', `/api/v1/webhooks/${id}`, undefined, 'webhooks:write'],
    ] as [string, string, string, unknown, string][]) {
      const res = await call(app, method, path, { token: who, body })
      expect(res.status, `${method} ${path}: ${show(res)}`).toBe(403)
      expect(res.body.error).toBe('INSUFFICIENT_SCOPE')
      expect(res.headers.get('www-authenticate')).toContain(`scope="${scope}"`)
    }
    const approvals = await call(app, 'GET', '/api/v1/agent/approvals', { token: human.key })
    expect(approvals.body.data.approvals, show(approvals)).toEqual([])
    expect((await endpointsOf(human.id)).map((w) => w.url)).toEqual([URL_A])
  })
})
