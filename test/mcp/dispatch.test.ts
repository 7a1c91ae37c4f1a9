// The seam between a tool and its REST route, seen from the route's side: the request a tool makes
// (method, path, query, body, the caller's credential, the in-process mark that says MCP and carries
// the caller's address), and what each kind of answer becomes. The route here is a stand-in that
// records the request and answers as the real one would; the end-to-end tests use the real ones.
import { describe, expect, test } from 'bun:test'
import { callTool, type Caller } from '../../src/mcp/dispatch'
import { TOOLS } from '../../src/mcp/tools'
import type { Principal } from '../../src/plugins/auth'
import { inProcess, onBehalfOf } from '../../src/plugins/on-behalf'

const ISSUER = 'https://api.sho.rt'
const principal: Principal = {
  kind: 'account',
  account: { id: 'acc_1', email: 'a@example.test', plan: 'free' },
  agent: { agentId: 'agt_1', tokenId: 'tok_1', clientId: 'cli_1', scopes: ['links:delete'], requireApproval: ['links.delete'] },
  rateHeaders: {},
  credentialId: 'at:agt_1',
}
const caller: Caller = { token: `at_${'t'.repeat(43)}`, principal, clientIp: '203.0.113.9' }
const tool = (name: string) => TOOLS.find((t) => t.name === name)!

function route(status: number, body: unknown, headers: Record<string, string> = {}) {
  const seen: Request[] = []
  const dispatch = async (request: Request) => {
    seen.push(request)
    return Response.json(body, { status, headers })
  }
  return { seen, dispatch }
}

describe('the REST call of a tool', () => {
  test("delete_link with dry_run: DELETE /api/v1/links/{alias}?domain&dry_run=true, the caller's token, marked as MCP with the caller's address", async () => {
    const { seen, dispatch } = route(200, { success: true, message: 'Link go.example.com/promo deleted.', meta: { dry_run: true } })
    const result = await callTool(tool('delete_link'), { alias: 'promo', domain: 'go.example.com', dry_run: true }, caller, { issuer: ISSUER, callAs: inProcess(dispatch, ISSUER) })
    const request = seen[0]!
    expect([request.method, request.url]).toEqual(['DELETE', `${ISSUER}/api/v1/links/promo?domain=go.example.com&dry_run=true`])
    expect(request.headers.get('authorization')).toBe(`Bearer ${caller.token}`)
    expect(onBehalfOf(request)).toEqual({ via: 'mcp', tool: 'delete_link', principal, clientIp: '203.0.113.9' })
    expect(result.isError).toBeFalsy()
    expect(result.content[0]!.type === 'text' && result.content[0]!.text).toStartWith('Link go.example.com/promo deleted. (dry run: nothing was written)')
  })

  test('a request that did not come through a tool carries no mark', () => {
    expect(onBehalfOf(new Request(`${ISSUER}/api/v1/links/promo`, { method: 'DELETE', headers: { 'x-via': 'mcp' } }))).toBeUndefined()
  })

  test('update_link: PATCH with only the fields sent in the body (null kept: it clears)', async () => {
    const { seen, dispatch } = route(200, { success: true, data: { short_url: 'https://sho.rt/promo', full_url: 'https://example.com/b' }, meta: {} })
    await callTool(tool('update_link'), { alias: 'promo', url: 'https://example.com/b', password: null }, caller, { issuer: ISSUER, callAs: inProcess(dispatch, ISSUER) })
    expect([seen[0]!.method, seen[0]!.url, seen[0]!.headers.get('content-type')]).toEqual(['PATCH', `${ISSUER}/api/v1/links/promo`, 'application/json'])
    expect(await seen[0]!.json()).toEqual({ url: 'https://example.com/b', password: null })
  })
})

describe('what an answer becomes', () => {
  test('202 (held for the human): not an error; the approval, its status and the URL a human opens', async () => {
    const id = 'apr_Vb0c3Xw9Lk2Qm8Rt5Yp1Za'
    const url = `${ISSUER}/approvals/${id}`
    const approval = { id, status: 'pending', agent_id: 'agt_1', operation: 'links.delete', expires_at: '2026-11-25T10:00:00.000Z', review_url: url }
    const { dispatch } = route(202, { success: true, data: { approval }, meta: { held_for_approval: true } }, { location: `/api/v1/agent/approvals/${id}` })
    const result = await callTool(tool('delete_link'), { alias: 'promo' }, caller, { issuer: ISSUER, callAs: inProcess(dispatch, ISSUER) })
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toEqual({ held: true, approval: { ...approval, url } })
    expect(result.content[0]!.type === 'text' && result.content[0]!.text).toStartWith(
      `Held for approval: delete_link runs only once a human approves it. Approval ${approval.id} is pending; ask the human to open ${url}.`,
    )
  })

  test('an error answer: isError, the code and hint first, the body as structuredContent', async () => {
    const body = { success: false, error: 'LINK_NOT_FOUND', hint: 'No link with that alias on that domain.', meta: {} }
    const { dispatch } = route(404, body)
    const result = await callTool(tool('get_link'), { alias: 'nope' }, caller, { issuer: ISSUER, callAs: inProcess(dispatch, ISSUER) })
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toEqual(body)
    expect(result.content[0]!.type === 'text' && result.content[0]!.text).toStartWith('LINK_NOT_FOUND: No link with that alias on that domain.')
  })

  test('a success that ignored dry_run is an error saying what was done', async () => {
    const { dispatch } = route(200, { success: true, data: { short_url: 'https://sho.rt/x', full_url: 'https://example.com/' }, meta: {} })
    const result = await callTool(tool('create_link'), { url: 'https://example.com/', dry_run: true }, caller, { issuer: ISSUER, callAs: inProcess(dispatch, ISSUER) })
    expect(result.isError).toBe(true)
    expect(result.content[0]!.type === 'text' && result.content[0]!.text).toStartWith('DRY_RUN_NOT_HONOURED: The server carried create_link out')
  })
})
