// A key restricted to scopes is held to them on every route, the way an Agent's at_ token is (the same
// 403, challenge and data), and finds no other door to the same operation: bulk beside shorten, a dry
// run, a conversion report, the MCP endpoint.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, show, testApi, type CallResult, type TestApp } from '../../../test/support/api'
import { agentToken, newAccount, newLink, type TestAccount } from '../../../test/support/fixtures'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
let human: TestAccount
let link: { alias: string; url: string }

beforeAll(async () => {
  api = await testApi()
  app = api.app
  human = await newAccount(api.deps.db, 'pro')
  link = await newLink(api.deps.db, human.id, 'sho.rt')
})

async function keyWith(scopes: string[]): Promise<string> {
  const res = await call(app, 'POST', '/api/v1/account/keys', { token: human.key, body: { name: scopes.join(' '), scopes } })
  if (res.status !== 201) throw new Error(show(res))
  return res.body.data.key
}

const linkCount = async () => (await call(app, 'GET', '/api/v1/links?limit=100', { token: human.key })).body.data.links.length

/** Operations a links:read key lacks the scope of, each with the scope it needs. */
const outside = (alias: string): [method: string, path: string, body: unknown, scope: string][] => [
  ['POST', '/api/v1/shorten', { url: 'https://example.com/sneak' }, 'links:write'],
  ['POST', '/api/v1/shorten?dry_run=true', { url: 'https://example.com/sneak' }, 'links:write'],
  ['POST', '/api/v1/links/bulk', { links: [{ url: 'https://example.com/sneak-1' }, { url: 'https://example.com/sneak-2' }] }, 'links:write'],
  ['PATCH', `/api/v1/links/${alias}`, { url: 'https://example.com/changed' }, 'links:write'],
  ['DELETE', `/api/v1/links/${alias}`, undefined, 'links:delete'],
  ['GET', `/api/v1/links/${alias}/stats`, undefined, 'stats:read'],
  ['GET', '/api/v1/tags', undefined, 'tags:read'],
  ['POST', '/api/v1/tags', { name: 'sneaky' }, 'tags:write'],
  ['GET', '/api/v1/domains', undefined, 'domains:read'],
  ['GET', '/api/v1/account/status', undefined, 'account:read'],
  ['POST', '/api/v1/account/upgrade', {}, 'billing:write'],
  ['POST', '/api/analytics/link-conversion', { clickId: 'x', conversionType: 'signup', eventId: 'e1' }, 'conversions:write'],
]

function expectInsufficientScope(res: CallResult, scope: string, where: string) {
  expect(res.status, `${where}: ${show(res)}`).toBe(403)
  expect(res.body, where).toMatchObject({ success: false, error: 'INSUFFICIENT_SCOPE', data: { required_scopes: [scope] } })
  expect(res.headers.get('www-authenticate'), where).toStartWith(`Bearer error="insufficient_scope", scope="${scope}", resource_metadata="`)
}

describe('a key restricted to scopes', () => {
  test('works within them', async () => {
    const key = await keyWith(['links:read'])
    for (const path of ['/api/v1/links', `/api/v1/links/${link.alias}`]) {
      const res = await call(app, 'GET', path, { token: key })
      expect(res.status, `${path}: ${show(res)}`).toBe(200)
    }
  })

  test('security: refused outside them on every route, as an Agent token with the same scopes is, and nothing is written', async () => {
    const key = await keyWith(['links:read'])
    const { token } = await agentToken(app, human, ['links:read'])
    const before = await linkCount()
    for (const [method, path, body, scope] of outside(link.alias)) {
      const byKey = await call(app, method, path, { token: key, body })
      expectInsufficientScope(byKey, scope, `key ${method} ${path}`)
      const byAgent = await call(app, method, path, { token, body })
      expectInsufficientScope(byAgent, scope, `agent ${method} ${path}`)
      expect(byKey.headers.get('www-authenticate'), `${method} ${path}`).toBe(byAgent.headers.get('www-authenticate'))
      expect(byKey.body.data, `${method} ${path}`).toEqual(byAgent.body.data)
    }
    expect(await linkCount()).toBe(before)
    const still = await call(app, 'GET', `/api/v1/links/${link.alias}`, { token: key })
    expect(still.body.data.full_url, show(still)).toBe(link.url)
  })

  test('security: shorten and bulk are one scope: a links:write key may use both, and not read', async () => {
    const key = await keyWith(['links:write'])
    const one = await call(app, 'POST', '/api/v1/shorten', { token: key, body: { url: 'https://example.com/w1' } })
    expect(one.status, show(one)).toBe(200)
    const bulk = await call(app, 'POST', '/api/v1/links/bulk', { token: key, body: { links: [{ url: 'https://example.com/w2' }] } })
    expect(bulk.status, show(bulk)).toBe(200)
    expectInsufficientScope(await call(app, 'GET', '/api/v1/links', { token: key }), 'links:read', 'GET /links')
    expectInsufficientScope(await call(app, 'DELETE', `/api/v1/links/${one.body.data.alias}`, { token: key }), 'links:delete', 'DELETE')
  })

  test('security: no other door: /mcp takes no API key, and a repeated query parameter is 400', async () => {
    const key = await keyWith(['links:read'])
    const mcp = await call(app, 'POST', '/mcp', {
      token: key,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'create_link', arguments: { url: 'https://example.com/mcp' } } },
    })
    expect(mcp.status, show(mcp)).toBe(401)
    const twice = await call(app, 'GET', '/api/v1/links?limit=1&limit=2', { token: key })
    expect(twice.status, show(twice)).toBe(400)
  })
})
