// The MCP flow end to end with the official client over real HTTP: an unauthenticated call, discovery,
// dynamic registration, the browser at the authorization server, the human's consent, finishAuth,
// tools/list, create_link (the short link redirects at the redirector), delete_link (held for the
// human, as the default policy says; approved by them; the link is gone at the redirector).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eventually } from '../support/stack'
import { ANSWER_DEADLINE_MS } from '../support/wait'
import { callTool, connectWithConsent, newHuman, showResult, startMcpStack, type McpStack } from '../support/mcp'
import type { TestAccount } from '../support/fixtures'

const show = showResult

let stack: McpStack
let human: TestAccount

beforeAll(async () => {
  stack = await startMcpStack()
  human = await newHuman(stack)
})

afterAll(async () => {
  await stack?.stop()
})

/** The human decides a held operation (DESIGN: approvals are for the human's API key or session). */
async function humanApproves(approvalId: string): Promise<void> {
  const response = await fetch(`${stack.origin}/api/v1/agent/approvals/${approvalId}/approve`, { method: 'POST', headers: { authorization: `Bearer ${human.key}` } })
  expect(response.status, await response.clone().text()).toBe(200)
}

describe('an MCP host connects through OAuth and manages links', () => {
  test('401 → discovery → registration → consent → finishAuth → tools/list → create_link → delete_link', async () => {
    const { client, fetchAs, provider } = await connectWithConsent(stack, human)

    // What the host did, seen from the outside, in order.
    const steps = fetchAs.log.map((e) => `${e.method} ${e.path} ${e.status}`)
    const expected = [
      'POST /mcp 401',
      'GET /.well-known/oauth-protected-resource/mcp 200',
      'GET /.well-known/oauth-authorization-server 200',
      'POST /oauth/register 201',
      'GET /oauth/authorize 302',
      'POST /api/v1/oauth/approve 200',
      'POST /oauth/token 200',
      'POST /mcp 200',
    ]
    let at = 0
    for (const step of steps) if (step === expected[at]) at++
    expect(at, steps.join('\n')).toBe(expected.length)
    const challenge = fetchAs.log[0]!.headers.get('www-authenticate') ?? ''
    expect(challenge).toContain(`resource_metadata="${stack.origin}/.well-known/oauth-protected-resource/mcp"`)
    expect(provider.clientId, 'registered dynamically').toMatch(/^cli_/)
    // The host asked for the tools' scopes (the 401's scope), not every scope the server knows.
    const asked = new Set(provider.authorizationUrl!.searchParams.get('scope')!.split(' '))
    expect(asked.has('links:write') && asked.has('links:delete') && !asked.has('billing:write') && !asked.has('domains:write'), [...asked].join(' ')).toBe(true)
    expect(provider.authorizationUrl!.searchParams.get('code_challenge_method')).toBe('S256')
    expect(provider.tokens()?.access_token).toMatch(/^at_/)

    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'account_status',
      'check_alias',
      'create_link',
      'create_tag',
      'delete_link',
      'delete_tag',
      'get_approval',
      'get_link',
      'get_link_routing',
      'link_stats',
      'list_links',
      'list_tags',
      'set_link_routing',
      'tag_link',
      'untag_link',
      'update_link',
    ])
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]))
    expect(byName.get_link!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })
    expect(byName.create_link!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false })
    expect(byName.delete_link!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true })
    expect(byName.delete_link!.inputSchema.properties).toHaveProperty('dry_run')

    const alias = `mcp-${crypto.randomUUID().slice(0, 8)}`
    const created = await callTool(client, 'create_link', { url: 'https://example.com/from-mcp?x=1', alias })
    expect(created.isError, show(created)).toBeFalsy()
    expect(created.structuredContent?.data).toMatchObject({ alias, full_url: 'https://example.com/from-mcp?x=1', short_url: `${stack.origin}/${alias}` })
    expect(created.content[0]!.text).toStartWith(`Created ${stack.origin}/${alias} → https://example.com/from-mcp?x=1`)
    const redirect = await fetch(`${stack.origin}/${alias}`, { redirect: 'manual' })
    expect([redirect.status, redirect.headers.get('location')]).toEqual([302, 'https://example.com/from-mcp?x=1'])

    // The default policy holds deletes for the human (DEFAULT_REQUIRE_APPROVAL): the call answers with a
    // pending approval and nothing has happened yet.
    const deleted = await callTool(client, 'delete_link', { alias })
    expect(deleted.isError, show(deleted)).toBeFalsy()
    expect(deleted.structuredContent?.held, show(deleted)).toBe(true)
    const { id, status, review_url: reviewUrl, url } = deleted.structuredContent!.approval
    expect([id, status, reviewUrl, url], show(deleted)).toEqual([expect.stringMatching(/^apr_/), 'pending', `${stack.origin}/approvals/${id}`, `${stack.origin}/approvals/${id}`])
    expect(deleted.content[0]!.text).toContain(`ask the human to open ${reviewUrl}`)
    // The human sees it pending; the link is still stored and still redirects.
    const pending = await fetch(`${stack.origin}/api/v1/agent/approvals/${id}`, { headers: { authorization: `Bearer ${human.key}` } })
    const pendingText = await pending.text()
    expect(pending.status, pendingText).toBe(200)
    expect(JSON.parse(pendingText).data, pendingText).toMatchObject({ id, status: 'pending', operation: 'links.delete' })
    const stored = await fetch(`${stack.origin}/api/v1/links/${alias}`, { headers: { authorization: `Bearer ${human.key}` } })
    expect(stored.status, await stored.clone().text()).toBe(200)
    expect((await fetch(`${stack.origin}/${alias}`, { redirect: 'manual' })).status).toBe(302)

    await humanApproves(id)
    // The host learns what became of it.
    const after = await callTool(client, 'get_approval', { approvalId: id })
    expect(after.structuredContent?.data, show(after)).toMatchObject({ status: 'executed', result: { status: 200 } })
    expect(after.content[0]!.text).toStartWith(`Approval ${id} is executed; the operation answered 200`)
    await eventually(
      () => fetch(`${stack.origin}/${alias}`, { redirect: 'manual' }).then((r) => r.status),
      (status) => status === 404,
      ANSWER_DEADLINE_MS,
      { what: 'the deleted link to be 404 at the redirector' },
    )
    await client.close()
  }, 60_000)

  test('a 2026-07-28 host negotiates the modern era on the same endpoint and calls tools', async () => {
    const { client } = await connectWithConsent(stack, human, { era: 'auto' })
    expect(client.getProtocolEra()).toBe('modern')
    const { tools } = await client.listTools()
    expect(tools.length).toBe(16)
    const status = await callTool(client, 'account_status', {})
    expect(status.isError, show(status)).toBeFalsy()
    expect(status.structuredContent?.data?.account_type).toBe('free')
    await client.close()
  }, 60_000)

  test("a tool call is one request against the Agent's rate limit, and its REST call counts against the caller's address", async () => {
    const { client, fetchAs } = await connectWithConsent(stack, human, { scopes: ['links:read', 'account:read'] })
    const remaining = () =>
      Number(
        fetchAs.log
          .filter((e) => e.path === '/mcp' && e.status === 200)
          .at(-1)!
          .headers.get('x-ratelimit-remaining'),
      )
    await callTool(client, 'account_status', {})
    const before = remaining()
    await callTool(client, 'list_links', {})
    expect(before - remaining()).toBe(1)

    // check_alias is limited per client address: the tool's call is the host's address, not the server's.
    const checkAsHost = () => fetchAs(`${stack.origin}/api/v1/alias/check`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ alias: 'free-alias' }) })
    const first = Number((await checkAsHost()).headers.get('x-ratelimit-remaining'))
    const checked = await callTool(client, 'check_alias', { alias: 'free-alias' })
    expect(checked.structuredContent, show(checked)).toEqual({ exists: false })
    const third = Number((await checkAsHost()).headers.get('x-ratelimit-remaining'))
    expect(first - third).toBe(2)
    await client.close()
  }, 60_000)
})
