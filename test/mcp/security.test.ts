// Who may talk to /mcp, and what a token may do there: no token, a bad one, an API key or a guest token
// are 401 with the challenge that starts OAuth; an Origin changes nothing (cors.test.ts); a token without a tool's
// scope gets the route's INSUFFICIENT_SCOPE as a tool error and changes nothing; another account's link
// does not exist; a killed Agent is refused at once.
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, newGuestToken, show, testApi, type TestApp } from '../support/api'
import { newAccount, newLink, type TestAccount, agentToken } from '../support/fixtures'
import { callTool, inProcessClient, showResult } from '../support/mcp'
import { eventually } from '../support/stack'
import { ANSWER_DEADLINE_MS } from '../support/wait'

const ISSUER = 'https://api.sho.rt'
const METADATA = `${ISSUER}/.well-known/oauth-protected-resource/mcp`
const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' }
const ACCEPT = { accept: 'application/json, text/event-stream' }

let app: TestApp
let db: Awaited<ReturnType<typeof testApi>>['deps']['db']
let human: TestAccount

beforeAll(async () => {
  const api = await testApi()
  app = api.app
  db = api.deps.db
  human = await newAccount(db)
})

describe('POST /mcp without an access token', () => {
  test("no token: 401, WWW-Authenticate names the /mcp resource metadata and the tools' scopes, no error", async () => {
    const res = await call(app, 'POST', '/mcp', { body: LIST, headers: ACCEPT })
    expect(res.status, show(res)).toBe(401)
    expect(res.body.error).toBe('UNAUTHORIZED')
    const challenge = res.headers.get('www-authenticate') ?? ''
    expect(challenge).toStartWith(`Bearer resource_metadata="${METADATA}"`)
    expect(challenge).toContain('scope="')
    expect(challenge).toContain('links:write')
    expect(challenge).not.toContain('billing:write')
    expect(challenge).not.toContain('error=')
  })

  test('the metadata it names exists and points at this authorization server', async () => {
    const res = await call(app, 'GET', '/.well-known/oauth-protected-resource/mcp')
    expect(res.status, show(res)).toBe(200)
    expect(res.body).toMatchObject({ resource: `${ISSUER}/mcp`, authorization_servers: [ISSUER] })
  })

  test.each([
    ['an unknown access token', () => Promise.resolve(`at_${'x'.repeat(43)}`)],
    ['a malformed header value', () => Promise.resolve('not a token')],
    ['a guest token', () => newGuestToken(app)],
  ])('%s: 401 with error="invalid_token"', async (_, token) => {
    const res = await call(app, 'POST', '/mcp', { token: await token(), body: LIST, headers: ACCEPT })
    expect(res.status, show(res)).toBe(401)
    const challenge = res.headers.get('www-authenticate') ?? ''
    expect(challenge).toStartWith(`Bearer resource_metadata="${METADATA}", scope="`)
    expect(challenge).toEndWith(', error="invalid_token"')
  })

  test("the account's API key: 401 that says to connect through OAuth, and nothing runs", async () => {
    const res = await call(app, 'POST', '/mcp', {
      token: human.key,
      headers: ACCEPT,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'create_link', arguments: { url: 'https://example.com/with-a-key' } } },
    })
    expect(res.status, show(res)).toBe(401)
    expect(res.body.hint).toContain('OAuth access token (at_)')
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"')
    const links = await call(app, 'GET', '/api/v1/links?search=with-a-key', { token: human.key })
    expect(links.body.data.pagination.total, show(links)).toBe(0)
  })

  test('GET and DELETE (sessions, a server stream) are 405: the endpoint is stateless', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await call(app, method, '/mcp', { headers: { accept: 'text/event-stream' } })
      expect(res.status, `${method} ${show(res)}`).toBe(405)
      expect(res.headers.get('allow')).toBe('OPTIONS, POST')
    }
  })
})

describe('Origin (MCP_ALLOWED_ORIGINS unset; cors.test.ts has the narrowed case)', () => {
  test("is no credential: any origin, the API's own or none is served with a token, and still 401 without one", async () => {
    const { token } = await agentToken(app, human, ['links:read'])
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }
    for (const headers of [{ ...ACCEPT, origin: ISSUER }, { ...ACCEPT, origin: 'https://evil.example' }, { ...ACCEPT, origin: 'null' }, ACCEPT]) {
      const res = await call(app, 'POST', '/mcp', { token, body: init, headers })
      expect(res.status, show(res)).toBe(200)
      expect(res.text).toContain('"serverInfo"')
      const anonymous = await call(app, 'POST', '/mcp', { body: init, headers })
      expect(anonymous.status, show(anonymous)).toBe(401)
    }
  })
})

describe('a token within its scopes, on its own account', () => {
  test('without links:write, create_link is a tool error INSUFFICIENT_SCOPE and no link is made', async () => {
    const { token } = await agentToken(app, human, ['links:read'])
    const client = await inProcessClient(app, token)
    const url = `https://example.com/no-scope-${crypto.randomUUID()}`
    const result = await callTool(client, 'create_link', { url })
    expect(result.isError, showResult(result)).toBe(true)
    expect(result.content[0]!.text).toStartWith('INSUFFICIENT_SCOPE: ')
    expect(result.structuredContent).toMatchObject({ error: 'INSUFFICIENT_SCOPE', data: { required_scopes: ['links:write'] } })
    const links = await call(app, 'GET', `/api/v1/links?search=${encodeURIComponent(url)}`, { token: human.key })
    expect(links.body.data.pagination.total, show(links)).toBe(0)
    // The tools it may use work on the same connection.
    const listed = await callTool(client, 'list_links', { limit: 1 })
    expect(listed.isError, showResult(listed)).toBeFalsy()
    await client.close()
  })

  test("another account's link is LINK_NOT_FOUND to get_link, update_link and delete_link, and stays as it was", async () => {
    const other = await newAccount(db)
    const theirs = await newLink(db, other.id, 'sho.rt', `theirs-${crypto.randomUUID().slice(0, 8)}`, 'https://example.com/theirs')
    // Nothing held for the human, so the delete reaches its route (held, it would run as this Agent on approval and find nothing).
    const { token } = await agentToken(app, human, ['links:read', 'links:write', 'links:delete'], { require_approval: [] })
    const client = await inProcessClient(app, token)
    for (const [name, args] of [
      ['get_link', { alias: theirs.alias }],
      ['update_link', { alias: theirs.alias, url: 'https://example.com/hijacked' }],
      ['delete_link', { alias: theirs.alias }],
    ] as const) {
      const result = await callTool(client, name, args)
      expect(result.isError, `${name}: ${showResult(result)}`).toBe(true)
      expect(result.structuredContent?.error, name).toBe('LINK_NOT_FOUND')
    }
    const still = await call(app, 'GET', `/api/v1/links/${theirs.alias}`, { token: other.key })
    expect([still.status, still.body.data?.full_url], show(still)).toEqual([200, 'https://example.com/theirs'])
    await client.close()
  })

  test("a killed Agent's token is refused at /mcp within a second", async () => {
    const { token, agentId } = await agentToken(app, human, ['links:read'])
    const client = await inProcessClient(app, token)
    expect((await callTool(client, 'list_links', {})).isError).toBeFalsy()
    const killed = await call(app, 'POST', `/api/v1/agents/${agentId}/kill`, { token: human.key })
    expect(killed.status, show(killed)).toBe(200)
    // DESIGN: refused within 1 s everywhere (the kill reaches cached verdicts by pub/sub).
    const { value: res } = await eventually(
      () => call(app, 'POST', '/mcp', { token, body: LIST, headers: ACCEPT }),
      (r) => r.status !== 200,
      ANSWER_DEADLINE_MS,
      { what: 'the killed token refused' },
    )
    expect(res.status, show(res)).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"')
    await client.close().catch(() => {})
  })
})
