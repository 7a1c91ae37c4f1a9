// /mcp and the browser (DESIGN "Machine access", MCP): an Origin is no credential there, so a page on
// any origin is answered with CORS (no credentials) on every answer, the 401 and its challenge too, and
// its preflight is a 204. MCP_ALLOWED_ORIGINS narrows that: another origin is then 403, preflight
// included, and gets no CORS headers; a bad value stops the start with a message naming the variable.
import { beforeAll, describe, expect, test } from 'bun:test'
import { parseConfig } from '../../core/config'
import { call, show, testApi, testConfig, type TestApp } from '../support/api'
import { newAccount, type TestAccount, agentToken } from '../support/fixtures'

const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' }
const ACCEPT = { accept: 'application/json, text/event-stream' }
const INSPECTOR = 'http://localhost:6274'
const PREFLIGHT = { 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' }

let open: TestApp
let narrowed: TestApp
let human: TestAccount

beforeAll(async () => {
  const api = await testApi()
  open = api.app
  narrowed = (await testApi({ config: testConfig({ MCP_ALLOWED_ORIGINS: `${INSPECTOR}, https://ops.example` }) })).app
  human = await newAccount(api.deps.db)
})

const exposed = (headers: Headers) => (headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/,\s*/)

describe('MCP_ALLOWED_ORIGINS unset: any origin', () => {
  test('the preflight is 204 allowing the token, JSON and the protocol headers, without credentials', async () => {
    for (const origin of ['https://inspector.example', INSPECTOR, 'null']) {
      const res = await call(open, 'OPTIONS', '/mcp', { headers: { origin, ...PREFLIGHT } })
      expect(res.status, `${origin}: ${show(res)}`).toBe(204)
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
      const headers = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/)
      for (const name of ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id']) expect(headers).toContain(name)
      expect((res.headers.get('access-control-allow-methods') ?? '').split(/,\s*/)).toEqual(expect.arrayContaining(['POST', 'GET', 'DELETE']))
      expect(res.headers.get('access-control-allow-credentials')).toBeNull()
    }
  })

  test('the 401 carries CORS and exposes its WWW-Authenticate, so a page can start OAuth', async () => {
    const res = await call(open, 'POST', '/mcp', { body: LIST, headers: { ...ACCEPT, origin: 'https://inspector.example' } })
    expect(res.status, show(res)).toBe(401)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(exposed(res.headers)).toEqual(expect.arrayContaining(['www-authenticate', 'mcp-session-id']))
    expect(res.headers.get('www-authenticate')).toContain('resource_metadata=')
  })

  test('with a token, a page on another origin is served; GET is a 405 it can read', async () => {
    const { token } = await agentToken(open, human, ['links:read'])
    const res = await call(open, 'POST', '/mcp', { token, body: LIST, headers: { ...ACCEPT, origin: 'https://inspector.example' } })
    expect(res.status, show(res)).toBe(200)
    expect(res.text).toContain('create_link')
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('access-control-allow-credentials')).toBeNull()
    const get = await call(open, 'GET', '/mcp', { token, headers: { accept: 'text/event-stream', origin: 'https://inspector.example' } })
    expect([get.status, get.headers.get('access-control-allow-origin')], show(get)).toEqual([405, '*'])
  })

  test('no Origin (a program, not a page): served as before, without CORS headers', async () => {
    const res = await call(open, 'POST', '/mcp', { body: LIST, headers: ACCEPT })
    expect(res.status).toBe(401)
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('MCP_ALLOWED_ORIGINS set', () => {
  test("a listed origin (and the API's own) is answered with its own origin and Vary: Origin", async () => {
    const { token } = await agentToken(narrowed, human, ['links:read'])
    for (const origin of [INSPECTOR, 'https://ops.example', 'https://api.sho.rt']) {
      const preflight = await call(narrowed, 'OPTIONS', '/mcp', { headers: { origin, ...PREFLIGHT } })
      expect([preflight.status, preflight.headers.get('access-control-allow-origin')], `${origin}: ${show(preflight)}`).toEqual([204, origin])
      expect(preflight.headers.get('vary')).toContain('Origin')
      const res = await call(narrowed, 'POST', '/mcp', { token, body: LIST, headers: { ...ACCEPT, origin } })
      expect([res.status, res.headers.get('access-control-allow-origin')], show(res)).toEqual([200, origin])
    }
  })

  test('another origin: 403 ORIGIN_NOT_ALLOWED with a good token too, preflight included, without CORS headers', async () => {
    const { token } = await agentToken(narrowed, human, ['links:read'])
    for (const origin of ['https://evil.example', 'null', 'http://api.sho.rt', 'https://api.sho.rt.evil.example', 'http://localhost:6275']) {
      const res = await call(narrowed, 'POST', '/mcp', { token, body: LIST, headers: { ...ACCEPT, origin } })
      expect([res.status, res.body?.error], `${origin}: ${show(res)}`).toEqual([403, 'ORIGIN_NOT_ALLOWED'])
      expect(res.headers.get('access-control-allow-origin')).toBeNull()
      const preflight = await call(narrowed, 'OPTIONS', '/mcp', { headers: { origin, ...PREFLIGHT } })
      expect([preflight.status, preflight.headers.get('access-control-allow-origin')], show(preflight)).toEqual([403, null])
    }
    const anonymous = await call(narrowed, 'POST', '/mcp', { body: LIST, headers: { ...ACCEPT, origin: 'https://evil.example' } })
    expect(anonymous.status, show(anonymous)).toBe(403)
  })

  test('parsed once at boot: origins as browsers send them; anything else names the variable', () => {
    expect(parseConfig({ MCP_ALLOWED_ORIGINS: ' https://a.example ,http://localhost:6274' }).mcpAllowedOrigins).toEqual(['https://a.example', 'http://localhost:6274'])
    expect(parseConfig({}).mcpAllowedOrigins).toBeUndefined()
    for (const bad of ['https://a.example/', 'https://a.example/path', 'a.example', '*', 'ftp://a.example', 'https://A.example:443', 'https://a.example,,']) {
      expect(() => parseConfig({ MCP_ALLOWED_ORIGINS: bad }), bad).toThrow(/^configuration: MCP_ALLOWED_ORIGINS must be comma-separated web origins/)
    }
  })
})
