// The MCP Inspector's browser flow in Chromium (modelcontextprotocol/inspector client/src/lib/auth.ts
// and the SDK's auth flow it runs in the page): a page on another origin (another loopback port) reads
// the 401's challenge, fetches discovery, registers, keeps the PKCE verifier in sessionStorage, sends
// the browser to authorize; back on its /oauth/callback it exchanges the code and calls /mcp with the
// Bearer token: initialize, tools/list, create_link. Every cross-origin answer must carry CORS, or
// Chromium hides it from the page. The human's consent goes through the API, as in the other tests.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'
import { newHuman, startMcpStack, type McpStack } from '../support/mcp'
import { agentToken, type TestAccount } from '../support/fixtures'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const HAVE_CHROMIUM = existsSync(CHROMIUM)
if (!HAVE_CHROMIUM) console.log(`test/hosts/inspector-browser.test.ts: SKIPPED: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`)
const LAUNCH_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

let stack: McpStack
let human: TestAccount
let inspector: ReturnType<typeof Bun.serve>
let browser: Browser

/** The page's script: what the Inspector does in the browser, in plain fetch calls. */
const script = (api: string) => `
const API = ${JSON.stringify(api)}
const VERSION = '2025-06-18'
const b64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '')
const mcpHeaders = (token) => ({ 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(token && { authorization: 'Bearer ' + token, 'mcp-protocol-version': VERSION }) })
async function rpc(token, message) {
  const answer = await fetch(API + '/mcp', { method: 'POST', headers: mcpHeaders(token), body: JSON.stringify(message) })
  const text = await answer.text()
  if (answer.status !== 200) throw new Error('mcp ' + message.method + ': ' + answer.status + ' ' + text)
  const data = (answer.headers.get('content-type') || '').includes('text/event-stream') ? text.split('\\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).filter(Boolean).pop() : text
  return JSON.parse(data)
}
// A fetch Chromium refuses for CORS rejects with a bare TypeError: say which request it was.
const _fetch = window.fetch.bind(window)
window.fetch = (url, init = {}) => _fetch(url, init).catch((error) => { throw new Error((init.method || 'GET') + ' ' + url + ': ' + error.message) })
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'inspector-page', version: '1' } } }
window.start = async () => {
  const first = await fetch(API + '/mcp', { method: 'POST', headers: mcpHeaders(), body: JSON.stringify(initialize) })
  const challenge = first.headers.get('www-authenticate')
  if (first.status !== 401 || !challenge) throw new Error('the 401 or its WWW-Authenticate is hidden from the page: ' + first.status + ' ' + challenge)
  const prm = await (await fetch(/resource_metadata="([^"]+)"/.exec(challenge)[1], { headers: { 'mcp-protocol-version': VERSION } })).json()
  const as = await (await fetch(prm.authorization_servers[0] + '/.well-known/oauth-authorization-server', { headers: { 'mcp-protocol-version': VERSION } })).json()
  const redirectUri = location.origin + '/oauth/callback'
  const registered = await fetch(as.registration_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], client_name: 'MCP Inspector', client_uri: 'https://github.com/modelcontextprotocol/inspector', scope: '' }),
  })
  if (registered.status !== 201) throw new Error('register: ' + registered.status + ' ' + (await registered.text()))
  const client = await registered.json()
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)))
  const state = b64url(crypto.getRandomValues(new Uint8Array(16)))
  sessionStorage.setItem('flow', JSON.stringify({ verifier, state, clientId: client.client_id, tokenEndpoint: as.token_endpoint, redirectUri, resource: prm.resource }))
  const url = new URL(as.authorization_endpoint)
  const scope = /scope="([^"]+)"/.exec(challenge)?.[1] ?? ''
  const params = { response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, code_challenge: b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))), code_challenge_method: 'S256', state, scope, resource: prm.resource }
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.href
}
window.callMcp = async (token, alias) => {
  const initialized = await rpc(token, initialize)
  const listed = await rpc(token, { jsonrpc: '2.0', id: 2, method: 'tools/list' })
  const called = await rpc(token, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'create_link', arguments: { url: 'https://example.com/from-the-inspector', alias } } })
  return { server: initialized.result.serverInfo.name, tools: listed.result.tools.map((t) => t.name), call: called.result }
}
window.finish = async (alias) => {
  const flow = JSON.parse(sessionStorage.getItem('flow'))
  const back = new URL(location.href)
  if (back.searchParams.get('state') !== flow.state) throw new Error('state mismatch')
  const form = new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code'), redirect_uri: flow.redirectUri, code_verifier: flow.verifier, client_id: flow.clientId, resource: flow.resource })
  const token = await fetch(flow.tokenEndpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form })
  if (token.status !== 200) throw new Error('token: ' + token.status + ' ' + (await token.text()))
  const { access_token } = await token.json()
  return window.callMcp(access_token, alias)
}
`

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return
  stack = await startMcpStack()
  human = await newHuman(stack)
  const page = `<!doctype html><meta charset="utf-8"><title>Inspector</title><script>${script(stack.origin)}</script><p>inspector</p>`
  inspector = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } }) })
  browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS })
  // The first file of a run opens the embedded engines (PGlite, chDB): slow on a loaded machine.
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await inspector?.stop(true)
  await stack?.stop()
})

describe.skipIf(!HAVE_CHROMIUM)('the MCP Inspector in Chromium, on another origin', () => {
  test('/mcp alone: the page reads the 401 challenge, and with a token calls initialize, tools/list and create_link', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`http://127.0.0.1:${inspector.port}/`)
    const challenge = await page.evaluate(async (api) => {
      const answer = await fetch(`${api}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      })
      return [answer.status, answer.headers.get('www-authenticate')]
    }, stack.origin)
    expect(challenge[0]).toBe(401)
    expect(challenge[1]).toContain(`resource_metadata="${stack.origin}/.well-known/oauth-protected-resource/mcp"`)
    const { token } = await agentToken(stack.app, human, ['links:read', 'links:write'])
    const alias = `page-${crypto.randomUUID().slice(0, 8)}`
    const result = await page.evaluate(([t, a]) => (globalThis as unknown as { callMcp(token: string, alias: string): Promise<any> }).callMcp(t!, a!), [token, alias])
    expect(result.tools).toContain('create_link')
    expect(result.call.structuredContent.data, JSON.stringify(result.call).slice(0, 500)).toMatchObject({ alias })
    await context.close()
  }, 60_000)

  test('discovery, registration, authorize, token and /mcp from the page, through CORS', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const errors: string[] = []
    // Chromium logs every 4xx as a console error; the 401 of the first call is the expected challenge.
    page.on('console', (message) => void (message.type() === 'error' && !message.text().includes('status of 401') && errors.push(message.text())))
    const pageOrigin = `http://127.0.0.1:${inspector.port}`
    expect(pageOrigin).not.toBe(stack.origin)
    await page.goto(`${pageOrigin}/`)
    const authorizeUrl = await page.evaluate(() => (globalThis as unknown as { start(): Promise<string> }).start())

    // The browser at the authorization server; the human approves (through the API, as the consent page would).
    const opened = await fetch(authorizeUrl, { redirect: 'manual' })
    const requestId = /request_id=(oreq_[A-Za-z0-9_-]+)/.exec(opened.headers.get('location') ?? '')?.[1]
    expect([opened.status, requestId !== undefined], await opened.text()).toEqual([302, true])
    const decided = await fetch(`${stack.origin}/api/v1/oauth/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${human.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ request_id: requestId }),
    })
    expect(decided.status).toBe(200)
    const redirectTo = ((await decided.json()) as { data: { redirect_to: string } }).data.redirect_to
    expect(redirectTo.startsWith(`${pageOrigin}/oauth/callback?`)).toBe(true)

    await page.goto(redirectTo)
    const alias = `inspector-${crypto.randomUUID().slice(0, 8)}`
    const result = await page.evaluate((a) => (globalThis as unknown as { finish(alias: string): Promise<any> }).finish(a), alias)
    expect(result.server).toBe('linkservice')
    expect(result.tools).toContain('create_link')
    expect(result.call.isError, JSON.stringify(result.call).slice(0, 500)).toBeFalsy()
    expect(result.call.structuredContent.data).toMatchObject({ alias, full_url: 'https://example.com/from-the-inspector' })
    expect(errors, errors.join('\n')).toEqual([])
    await context.close()
  }, 60_000)
})
