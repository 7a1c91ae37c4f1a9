// The audit of an Agent's calls through the REST API: every at_ call is one event, refused ones
// included (a missing scope, a human-only route, a killed Agent's token), with its operation, status,
// outcome, scopes and approval; newest first with a cursor; another account's Agent is 404.
import { beforeAll, describe, expect, test } from 'bun:test'
import type { AuditRecorder } from '../audit/recorder'
import { call, show, testApi, type TestApp } from '../../../test/support/api'
import { agentToken as newAgentToken, newAccount, newLink, type TestAccount } from '../../../test/support/fixtures'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
let audit: AuditRecorder

beforeAll(async () => {
  api = await testApi()
  app = api.app
  audit = api.audit!
})

const agentToken = (human: TestAccount, scopes: string[]) => newAgentToken(app, human, scopes)

/**
 * The Agent's audit once it holds `expected` events: the event is recorded after the answer is sent,
 * so the test polls (flush, read) as a user would, within a deadline.
 */
async function events(human: TestAccount, agentId: string, query = '', expected = 1) {
  const deadline = Date.now() + 10_000
  for (;;) {
    expect(await audit.flush(20_000)).toBe(true)
    const res = await call(app, 'GET', `/api/v1/agents/${agentId}/audit${query}`, { token: human.key })
    expect(res.status, show(res)).toBe(200)
    const page = res.body.data as { events: Record<string, unknown>[]; next_cursor: string | null }
    if (page.events.length >= expected || Date.now() > deadline) return page
    await Bun.sleep(25)
  }
}

describe('audit of Agent calls', () => {
  test('N calls are N events, refused ones included, newest first, with what each was', async () => {
    const human = await newAccount(api.deps.db, 'pro')
    const { agentId, token } = await agentToken(human, ['links:read', 'links:delete'])
    const link = await newLink(api.deps.db, human.id, 'sho.rt')
    const answers = [
      await call(app, 'GET', '/api/v1/links', { token }), // ok
      await call(app, 'GET', '/api/v1/tags', { token }), // 403: no tags:read
      await call(app, 'GET', '/api/v1/agents', { token }), // 403: human only
      await call(app, 'DELETE', `/api/v1/links/${link.alias}?dry_run=true`, { token }), // ok, dry run
      await call(app, 'DELETE', `/api/v1/links/${link.alias}`, { token }), // 202 held
    ]
    expect(answers.map((a) => a.status)).toEqual([200, 403, 403, 200, 202])
    const approvalId = answers[4]!.body.data.approval.id
    const approved = await call(app, 'POST', `/api/v1/agent/approvals/${approvalId}/approve`, { token: human.key }) // the execution: one more event
    expect(approved.body.data.status, show(approved)).toBe('executed')
    await call(app, 'POST', `/api/v1/agents/${agentId}/kill`, { token: human.key })
    const refused = await call(app, 'GET', '/api/v1/links', { token }) // 401: killed
    expect(refused.status).toBe(401)

    const { events: got } = await events(human, agentId, '?limit=100', 7)
    expect(got.length, JSON.stringify(got, null, 1)).toBe(7)
    const summary = got.map((e) => [e.method, e.status, e.outcome, e.operation]).reverse()
    expect(summary).toEqual([
      ['GET', 200, 'ok', 'links.read'],
      ['GET', 403, 'refused', 'tags.read'],
      ['GET', 403, 'refused', 'human_only'],
      ['DELETE', 200, 'ok', 'links.delete'],
      ['DELETE', 202, 'held', 'links.delete'],
      ['DELETE', 200, 'ok', 'links.delete'],
      ['GET', 401, 'refused', 'links.read'],
    ])
    const [killedCall, execution, held, dryRun] = got
    expect(held).toMatchObject({ approval_id: approvalId, scopes_used: ['links:delete'], via: 'rest', path: `/api/v1/links/${link.alias}`, dry_run: false, agent_id: agentId })
    expect(execution).toMatchObject({ approval_id: approvalId, outcome: 'ok' })
    expect(dryRun).toMatchObject({ dry_run: true, path: `/api/v1/links/${link.alias}` })
    expect(killedCall!.path).toBe('/api/v1/links')
    const raw = JSON.stringify(got)
    expect(raw).not.toContain(token)
    expect(raw).not.toContain('dry_run=true')
    for (const event of got) expect(event.id).toMatch(/^aud_/)
  })

  test("a route that authenticates on its own terms (the conversion report) audits an Agent's call too", async () => {
    const human = await newAccount(api.deps.db, 'pro')
    const { agentId, token } = await agentToken(human, ['links:read'])
    const body = { clickId: 'not-a-click-id', conversionType: 'signup' }
    const lacking = await call(app, 'POST', '/api/analytics/link-conversion', { token, body })
    expect(lacking.status, show(lacking)).toBe(403)
    expect(lacking.body.error).toBe('INSUFFICIENT_SCOPE')
    const { agentId: reporterId, token: reporter } = await agentToken(human, ['conversions:write'])
    const bad = await call(app, 'POST', '/api/analytics/link-conversion', { token: reporter, body })
    expect(bad.status, show(bad)).toBe(400)
    const [refused] = (await events(human, agentId)).events
    expect(refused).toMatchObject({ method: 'POST', path: '/api/analytics/link-conversion', status: 403, outcome: 'refused', operation: 'conversions.write', scopes_used: ['conversions:write'] })
    const [reported] = (await events(human, reporterId)).events
    expect(reported).toMatchObject({ method: 'POST', path: '/api/analytics/link-conversion', status: 400, outcome: 'error', operation: 'conversions.write' })
  })

  test('pages newest first with a cursor, no gaps or repeats', async () => {
    const human = await newAccount(api.deps.db, 'pro')
    const { agentId, token } = await agentToken(human, ['links:read'])
    for (let i = 0; i < 5; i++) await call(app, 'GET', '/api/v1/links', { token })
    await events(human, agentId, '?limit=100', 5)
    const first = await events(human, agentId, '?limit=2')
    expect(first.events.length).toBe(2)
    const second = await events(human, agentId, `?limit=2&cursor=${first.next_cursor}`)
    const third = await events(human, agentId, `?limit=2&cursor=${second.next_cursor}`)
    expect(third.next_cursor).toBeNull()
    const ids = [...first.events, ...second.events, ...third.events].map((e) => e.id)
    expect(new Set(ids).size).toBe(5)
    const times = [...first.events, ...second.events, ...third.events].map((e) => Date.parse(e.at as string))
    expect([...times].sort((a, b) => b - a)).toEqual(times)
    const bad = await call(app, 'GET', `/api/v1/agents/${agentId}/audit?cursor=not-a-cursor`, { token: human.key })
    expect(bad.status, show(bad)).toBe(400)
  })

  test("another account's Agent audit is 404; an Agent token cannot read audits", async () => {
    const human = await newAccount(api.deps.db, 'pro')
    const { agentId, token } = await agentToken(human, ['links:read'])
    const other = await newAccount(api.deps.db)
    const foreign = await call(app, 'GET', `/api/v1/agents/${agentId}/audit`, { token: other.key })
    expect(foreign.status, show(foreign)).toBe(404)
    const own = await call(app, 'GET', `/api/v1/agents/${agentId}/audit`, { token })
    expect(own.status, show(own)).toBe(403)
  })
})
