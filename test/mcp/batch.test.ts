// JSON-RPC batches over raw HTTP (DESIGN "Machine access", MCP): under 2025-03-26 (the header, or none,
// or an initialize in the batch naming it) a POST may carry an array, answered with an array of the
// responses (none for notifications); each message counts against the Agent's rate limit and runs as
// its own REST call. Later versions keep refusing batches (2025-06-18 removed them).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { newHuman, startMcpStack, type McpStack } from '../support/mcp'
import { TEST_IP_HEADER, uniqueIp } from '../support/api'
import { agentToken, type TestAccount } from '../support/fixtures'

let stack: McpStack
let human: TestAccount
let token: string

beforeAll(async () => {
  stack = await startMcpStack()
  human = await newHuman(stack)
  token = (await agentToken(stack.app, human, ['links:read', 'links:write'])).token
  // The first file of a run opens the embedded engines (PGlite, chDB): slow on a loaded machine.
}, 120_000)

afterAll(async () => {
  await stack?.stop()
})

async function post(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const response = await fetch(stack.mcpUrl, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', [TEST_IP_HEADER]: uniqueIp(), ...headers },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

const V2025_03 = { 'mcp-protocol-version': '2025-03-26' }
const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })

describe('a JSON-RPC batch under 2025-03-26', () => {
  test('tools/list, two tool calls and a notification: an array of three responses by id, in order; the calls ran', async () => {
    const alias = `batch-${crypto.randomUUID().slice(0, 8)}`
    const res = await post(
      [
        { jsonrpc: '2.0', id: 'list', method: 'tools/list' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        call(2, 'create_link', { url: 'https://example.com/batched', alias }),
        call(3, 'get_link', { alias }),
      ],
      V2025_03,
    )
    expect(res.status, res.text).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(Array.isArray(res.json), res.text).toBe(true)
    expect(res.json.map((m: any) => m.id)).toEqual(['list', 2, 3])
    expect(res.json[0].result.tools.map((t: any) => t.name)).toContain('create_link')
    expect(res.json[1].result.isError, JSON.stringify(res.json[1])).toBeFalsy()
    expect(res.json[2].result.structuredContent.data).toMatchObject({ alias, full_url: 'https://example.com/batched' })
    const redirect = await fetch(`${stack.origin}/${alias}`, { redirect: 'manual' })
    expect([redirect.status, redirect.headers.get('location')]).toEqual([302, 'https://example.com/batched'])
  })

  test('without MCP-Protocol-Version (the spec: assume 2025-03-26) and with an initialize naming 2025-03-26', async () => {
    const bare = await post([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }])
    expect([bare.status, Array.isArray(bare.json)], bare.text).toEqual([200, true])
    const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }
    const initialized = await post([init], { 'mcp-protocol-version': '2025-06-18' })
    expect(initialized.status, initialized.text).toBe(200)
    expect(initialized.json).toEqual([expect.objectContaining({ id: 0, result: expect.objectContaining({ protocolVersion: '2025-03-26' }) })])
  })

  test('only notifications: 202 with no body', async () => {
    const res = await post(
      [
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } },
      ],
      V2025_03,
    )
    expect([res.status, res.text]).toEqual([202, ''])
  })

  test("each message is one request against the Agent's rate limit", async () => {
    const remaining = async (body: unknown) => Number((await post(body, V2025_03)).headers.get('x-ratelimit-remaining'))
    const before = await remaining({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    const after = await remaining([1, 2, 3, 4].map((id) => ({ jsonrpc: '2.0', id, method: 'tools/list' })))
    expect(before - after).toBe(4)
  })

  test('without a token: 401 with the challenge, nothing runs', async () => {
    const alias = `batch-${crypto.randomUUID().slice(0, 8)}`
    const res = await post([call(1, 'create_link', { url: 'https://example.com/x', alias })], { ...V2025_03, authorization: '' })
    expect(res.status, res.text).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain('resource_metadata=')
    expect((await fetch(`${stack.origin}/${alias}`, { redirect: 'manual' })).status).toBe(404)
  })

  test('an empty batch or one over 100 messages is 400', async () => {
    expect((await post([], V2025_03)).status).toBe(400)
    const many = Array.from({ length: 101 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'tools/list' }))
    expect((await post(many, V2025_03)).status).toBe(400)
  })
})

describe('later protocol versions', () => {
  test.each(['2025-06-18', '2025-11-25'])('%s: a batch is 400 (a JSON-RPC error), and nothing in it runs', async (version) => {
    const alias = `batch-${crypto.randomUUID().slice(0, 8)}`
    const res = await post([call(1, 'create_link', { url: 'https://example.com/refused', alias })], { 'mcp-protocol-version': version })
    expect(res.status, res.text).toBe(400)
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } })
    expect(res.json.error.message).toContain('2025-03-26')
    expect((await fetch(`${stack.origin}/${alias}`, { redirect: 'manual' })).status).toBe(404)
  })

  test('an initialize in the batch naming 2025-06-18 is refused too, whatever the header', async () => {
    const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }
    const res = await post([init], V2025_03)
    expect(res.status, res.text).toBe(400)
  })
})
