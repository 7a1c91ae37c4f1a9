// Agents for the human: create, list, rescope, mint tokens, kill. Happy paths, errors, and security
// (an Agent's own token cannot manage Agents; another account's Agent is 404).
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { oauthTokens } from '../../db/schema'
import { hashSecret } from '../../lib/secrets'
import { call, show, testApi, type TestApp } from '../../../test/support/api'
import { newAccount, type TestAccount } from '../../../test/support/fixtures'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
let human: TestAccount

beforeAll(async () => {
  api = await testApi()
  app = api.app
  human = await newAccount(api.deps.db)
})

async function newAgent(key: string, body: Record<string, unknown> = { name: 'Release bot', scopes: ['links:read', 'links:write'] }) {
  const res = await call(app, 'POST', '/api/v1/agents', { token: key, body })
  expect(res.status, show(res)).toBe(201)
  return res.body.data as { id: string; scopes: string[]; policy: { require_approval: string[] }; status: string }
}

async function mint(key: string, agentId: string, body: Record<string, unknown> = {}) {
  return call(app, 'POST', `/api/v1/agents/${agentId}/tokens`, { token: key, body })
}

describe('Agents', () => {
  test('create with the default policy, list it, mint a token that works within its scopes and no further', async () => {
    const agent = await newAgent(human.key)
    expect(agent).toMatchObject({
      scopes: ['links:read', 'links:write'],
      status: 'active',
      client_id: null,
      policy: { require_approval: ['links.delete', 'tags.delete', 'domains.change', 'billing.upgrade', 'webhooks.change'] },
    })
    const list = await call(app, 'GET', '/api/v1/agents', { token: human.key })
    expect(
      list.body.data.agents.map((a: { id: string }) => a.id),
      show(list),
    ).toContain(agent.id)

    const minted = await mint(human.key, agent.id, { ttl_seconds: 120, scopes: ['links:read'] })
    expect(minted.status, show(minted)).toBe(201)
    expect(minted.headers.get('cache-control')).toBe('no-store')
    const { token, expires_at, scopes } = minted.body.data
    expect(token).toMatch(/^at_/)
    expect(scopes).toEqual(['links:read'])
    expect(Math.abs(Date.parse(expires_at) - Date.now() - 120_000)).toBeLessThan(10_000)
    const [row] = await api.deps.db
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, hashSecret(token)))
    expect(row?.clientId).toBeNull()
    expect(JSON.stringify(row)).not.toContain(token)

    const read = await call(app, 'GET', '/api/v1/links', { token })
    expect(read.status, show(read)).toBe(200)
    const write = await call(app, 'POST', '/api/v1/shorten', { token, body: { url: 'https://example.com/agent' } })
    expect(write.status, show(write)).toBe(403)
    expect(write.body.error).toBe('INSUFFICIENT_SCOPE')
  })

  test('narrowing the scopes binds tokens already issued, at once', async () => {
    const agent = await newAgent(human.key)
    const { token } = (await mint(human.key, agent.id)).body.data
    const before = await call(app, 'POST', '/api/v1/shorten', { token, body: { url: 'https://example.com/before' } })
    expect(before.status, show(before)).toBe(200)
    const patched = await call(app, 'PATCH', `/api/v1/agents/${agent.id}`, { token: human.key, body: { scopes: ['links:read'] } })
    expect(patched.body.data.scopes, show(patched)).toEqual(['links:read'])
    const after = await call(app, 'POST', '/api/v1/shorten', { token, body: { url: 'https://example.com/after' } })
    expect(after.status, show(after)).toBe(403)
    expect((await call(app, 'GET', '/api/v1/links', { token })).status).toBe(200)
  })

  test('kill: every token refused at once, no new token (409 AGENT_KILLED), killing again answers the same', async () => {
    const agent = await newAgent(human.key)
    const { token } = (await mint(human.key, agent.id)).body.data
    expect((await call(app, 'GET', '/api/v1/links', { token })).status).toBe(200)
    const killed = await call(app, 'POST', `/api/v1/agents/${agent.id}/kill`, { token: human.key })
    expect(killed.body.data.status, show(killed)).toBe('killed')
    const refused = await call(app, 'GET', '/api/v1/links', { token })
    expect(refused.status, show(refused)).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')
    const again = await mint(human.key, agent.id)
    expect(again.status, show(again)).toBe(409)
    expect(again.body.error).toBe('AGENT_KILLED')
    expect((await call(app, 'POST', `/api/v1/agents/${agent.id}/kill`, { token: human.key })).status).toBe(200)
  })
})

describe('Agents: errors', () => {
  test('unknown scopes, scopes beyond the Agent and a ttl outside 60-3600 are 400 VALIDATION_FAILED', async () => {
    const bad = await call(app, 'POST', '/api/v1/agents', { token: human.key, body: { name: 'x', scopes: ['links:everything'] } })
    expect(bad.status, show(bad)).toBe(400)
    expect(bad.body.error).toBe('VALIDATION_FAILED')
    const agent = await newAgent(human.key, { name: 'reader', scopes: ['links:read'] })
    for (const body of [{ scopes: ['links:write'] }, { ttl_seconds: 59 }, { ttl_seconds: 3601 }]) {
      const res = await mint(human.key, agent.id, body)
      expect(res.status, `${JSON.stringify(body)}: ${show(res)}`).toBe(400)
      expect(res.body.error).toBe('VALIDATION_FAILED')
    }
    const policy = await call(app, 'PATCH', `/api/v1/agents/${agent.id}`, { token: human.key, body: { policy: { require_approval: ['links.explode'] } } })
    expect(policy.status, show(policy)).toBe(400)
  })
})

describe('Agents: security', () => {
  test("an Agent's token cannot manage Agents (403 HUMAN_ONLY), not even its own", async () => {
    const agent = await newAgent(human.key)
    const { token } = (await mint(human.key, agent.id)).body.data
    for (const [method, path, body] of [
      ['GET', '/api/v1/agents', undefined],
      ['POST', '/api/v1/agents', { name: 'child', scopes: ['links:read'] }],
      ['PATCH', `/api/v1/agents/${agent.id}`, { scopes: ['links:read', 'links:write', 'links:delete'] }],
      ['POST', `/api/v1/agents/${agent.id}/tokens`, {}],
      ['POST', `/api/v1/agents/${agent.id}/kill`, undefined],
    ] as const) {
      const res = await call(app, method, path, { token, body })
      expect(res.status, `${method} ${path}: ${show(res)}`).toBe(403)
      expect(res.body.error).toBe('HUMAN_ONLY')
    }
  })

  test("another account's Agent is 404 on every route, and not listed", async () => {
    const agent = await newAgent(human.key)
    const other = await newAccount(api.deps.db)
    for (const [method, path, body] of [
      ['PATCH', `/api/v1/agents/${agent.id}`, { name: 'mine now' }],
      ['POST', `/api/v1/agents/${agent.id}/tokens`, {}],
      ['POST', `/api/v1/agents/${agent.id}/kill`, undefined],
    ] as const) {
      const res = await call(app, method, path, { token: other.key, body })
      expect(res.status, `${method} ${path}: ${show(res)}`).toBe(404)
      expect(res.body.error).toBe('AGENT_NOT_FOUND')
    }
    const list = await call(app, 'GET', '/api/v1/agents', { token: other.key })
    expect(list.body.data.agents, show(list)).toEqual([])
    const mine = await call(app, 'GET', '/api/v1/agents', { token: human.key })
    expect(mine.body.data.agents.find((a: { id: string }) => a.id === agent.id)?.status, show(mine)).toBe('active')
  })
})
