// The audit of an Agent working through MCP: each tool call is the event of its REST route, marked
// via: mcp, with the route's operation, status, scopes and dry_run, and the host's address (the same
// ip_hash as its REST calls); a token refused at the /mcp door is an event too; protocol messages are not.
import { beforeAll, expect, test } from 'bun:test'
import type { AuditRecorder } from '../../src/modules/audit/recorder'
import { call, show, testApi, uniqueIp, type TestApp } from '../support/api'
import { newAccount, type TestAccount, agentToken } from '../support/fixtures'
import { callTool, inProcessClient } from '../support/mcp'
import { eventually } from '../support/stack'
import { ANSWER_DEADLINE_MS } from '../support/wait'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
let audit: AuditRecorder

beforeAll(async () => {
  api = await testApi()
  app = api.app
  audit = api.audit!
})

/** The Agent's audit once it holds `expected` events (recorded after the answer: flush, read, retry). */
async function events(human: TestAccount, agentId: string, expected: number) {
  const deadline = Date.now() + 10_000
  for (;;) {
    expect(await audit.flush(20_000)).toBe(true)
    const res = await call(app, 'GET', `/api/v1/agents/${agentId}/audit?limit=100`, { token: human.key })
    expect(res.status, show(res)).toBe(200)
    const got = res.body.data.events as Record<string, unknown>[]
    if (got.length >= expected || Date.now() > deadline) return got.reverse()
    await Bun.sleep(25)
  }
}

test("tool calls are their routes' events via mcp; a refusal at the door too; tools/list is not an operation", async () => {
  const human = await newAccount(api.deps.db)
  const { token, agentId } = await agentToken(app, human, ['links:read', 'links:write'])
  const ip = uniqueIp()
  const client = await inProcessClient(app, token, { ip })
  await client.listTools()
  expect((await callTool(client, 'create_link', { url: 'https://example.com/audited' })).isError).toBeFalsy()
  expect((await callTool(client, 'create_link', { url: 'https://example.com/dry', dry_run: true })).isError).toBeFalsy()
  expect((await callTool(client, 'list_tags', {})).isError).toBe(true) // no tags:read
  const rest = await call(app, 'GET', '/api/v1/links', { token, ip })
  expect(rest.status, show(rest)).toBe(200)
  expect((await call(app, 'POST', `/api/v1/agents/${agentId}/kill`, { token: human.key })).status).toBe(200)
  // Refused within a second (the kill reaches cached verdicts by pub/sub); until then tools/list still answers, unaudited.
  const knock = () => call(app, 'POST', '/mcp', { token, ip, headers: { accept: 'application/json, text/event-stream' }, body: { jsonrpc: '2.0', id: 9, method: 'tools/list' } })
  const { value: door } = await eventually(knock, (r) => r.status !== 200, ANSWER_DEADLINE_MS, { what: 'the killed token refused at /mcp' })
  expect(door.status, show(door)).toBe(401)

  const got = await events(human, agentId, 5)
  expect(
    got.map((e) => [e.via, e.method, e.path, e.status, e.outcome, e.dry_run]),
    JSON.stringify(got, null, 1),
  ).toEqual([
    ['mcp', 'POST', '/api/v1/shorten', 200, 'ok', false],
    ['mcp', 'POST', '/api/v1/shorten', 200, 'ok', true],
    ['mcp', 'GET', '/api/v1/tags', 403, 'refused', false],
    ['rest', 'GET', '/api/v1/links', 200, 'ok', false],
    ['mcp', 'POST', '/mcp', 401, 'refused', false],
  ])
  expect(got[2]!.scopes_used).toEqual(['tags:read'])
  // One host, one address: its tool calls and its own REST call hash alike.
  expect(new Set(got.map((e) => e.ip_hash)).size, JSON.stringify(got.map((e) => e.ip_hash))).toBe(1)
  expect(JSON.stringify(got)).not.toContain(token)
  await client.close().catch(() => {})
})

test('a held tool call approved by the human later: its execution is audited via mcp too, with the approval', async () => {
  const human = await newAccount(api.deps.db, 'pro')
  const { token, agentId } = await agentToken(app, human, ['links:write', 'links:delete'])
  const client = await inProcessClient(app, token)
  const created = await callTool(client, 'create_link', { url: 'https://example.com/held-via-mcp' })
  const alias = created.structuredContent!.data.alias
  const held = await callTool(client, 'delete_link', { alias })
  expect(held.structuredContent?.held, JSON.stringify(held)).toBe(true)
  const approvalId = held.structuredContent!.approval.id
  const approved = await call(app, 'POST', `/api/v1/agent/approvals/${approvalId}/approve`, { token: human.key })
  expect(approved.body.data.status, show(approved)).toBe('executed')
  const got = await events(human, agentId, 3)
  expect(got.map((e) => [e.via, e.method, e.status, e.outcome, e.approval_id ?? null])).toEqual([
    ['mcp', 'POST', 200, 'ok', null],
    ['mcp', 'DELETE', 202, 'held', approvalId],
    ['mcp', 'DELETE', 200, 'ok', approvalId],
  ])
  await client.close()
})
