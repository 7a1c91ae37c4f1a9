// Tried as a hostile Agent would: every way found to get a held operation, or a real write, past the
// human by a `dry_run` flag a route ignores, a parameter given twice, or the same call through MCP.
// Each case fails on the code before the fix (the write happened, answered 200) and must stay refused:
// the target is still there afterwards, nothing is held, and the audit does not call the call a dry run.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { guestSessions } from '../../src/db/schema'
import type { AuditRecorder } from '../../src/modules/audit/recorder'
import { GUEST_TOKEN_PREFIX } from '../../src/modules/guest/service'
import { call, newGuestToken, show, testApi, type TestApp } from '../support/api'
import { newAccount, newDomain, newLink, type TestAccount, agentToken } from '../support/fixtures'
import { callTool, inProcessClient, showResult } from '../support/mcp'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
let audit: AuditRecorder

beforeAll(async () => {
  api = await testApi()
  app = api.app
  audit = api.audit!
})

const EVERY_SCOPE = ['links:read', 'links:write', 'links:delete', 'tags:read', 'tags:write', 'domains:read', 'domains:write']
/** The default policy and, on top, the tag operations a careful human also holds. */
const STRICT_POLICY = { require_approval: ['links.delete', 'links.update', 'tags.create', 'tags.delete', 'tags.assign', 'domains.change'] }

async function setup() {
  const human = await newAccount(api.deps.db, 'pro')
  const agent = await agentToken(app, human, EVERY_SCOPE, STRICT_POLICY)
  return { human, ...agent }
}

async function newTag(human: TestAccount) {
  const res = await call(app, 'POST', '/api/v1/tags', { token: human.key, body: { name: `t-${crypto.randomUUID().slice(0, 8)}` } })
  expect(res.status, show(res)).toBe(201)
  return res.body.tag.id as number
}

const tagIds = async (human: TestAccount) => ((await call(app, 'GET', '/api/v1/tags', { token: human.key })).body.tags as { id: number }[]).map((t) => t.id)
const linkOf = (human: TestAccount, alias: string) => call(app, 'GET', `/api/v1/links/${alias}`, { token: human.key })
const approvals = async (human: TestAccount) => (await call(app, 'GET', '/api/v1/agent/approvals', { token: human.key })).body.data.approvals as unknown[]

/** A 400 that names dry_run: the flag is refused, not ignored. */
function refusesDryRun(res: Awaited<ReturnType<typeof call>>) {
  expect(res.status, show(res)).toBe(400)
  expect(res.body.error, show(res)).toBe('VALIDATION_FAILED')
  expect(res.body.hint, show(res)).toContain('dry_run')
}

function refusesRepeat(res: Awaited<ReturnType<typeof call>>, name: string) {
  expect(res.status, show(res)).toBe(400)
  expect(res.body.error, show(res)).toBe('VALIDATION_FAILED')
  expect(res.body.hint, show(res)).toContain(name)
}

/** The Agent's audit events once `count` are there (recorded after each answer, so polled). */
async function auditEvents(human: TestAccount, agentId: string, count: number) {
  const deadline = Date.now() + 20_000
  for (;;) {
    expect(await audit.flush(20_000)).toBe(true)
    const res = await call(app, 'GET', `/api/v1/agents/${agentId}/audit?limit=100`, { token: human.key })
    const events = res.body.data.events as { path: string; status: number; dry_run: boolean; via: string }[]
    if (events.length >= count || Date.now() > deadline) return events
    await Bun.sleep(50)
  }
}

describe('a dry_run flag on a route that has no dry run is refused, never ignored', () => {
  test('DELETE /tags/{id}?dry_run=true (held tags.delete): 400 naming dry_run, the tag stays, nothing held', async () => {
    const { human, token } = await setup()
    const tag = await newTag(human)
    refusesDryRun(await call(app, 'DELETE', `/api/v1/tags/${tag}?dry_run=true`, { token }))
    expect(await tagIds(human)).toContain(tag)
    expect(await approvals(human)).toEqual([])
  })

  test('DELETE /domains/{host}?dry_run=true (held domains.change): 400, the domain and its links stay', async () => {
    const { human, token } = await setup()
    const host = await newDomain(api.deps.db, human.id)
    const link = await newLink(api.deps.db, human.id, host)
    refusesDryRun(await call(app, 'DELETE', `/api/v1/domains/${host}?dry_run=true`, { token }))
    const domains = await call(app, 'GET', '/api/v1/domains', { token: human.key })
    expect(JSON.stringify(domains.body), show(domains)).toContain(host)
    expect((await call(app, 'GET', `/api/v1/links/${link.alias}?domain=${host}`, { token: human.key })).status).toBe(200)
  })

  test('POST /tags?dry_run=true (held tags.create): 400, no tag written', async () => {
    const { human, token } = await setup()
    const before = await tagIds(human)
    refusesDryRun(await call(app, 'POST', '/api/v1/tags?dry_run=true', { token, body: { name: 'sneaky' } }))
    expect(await tagIds(human)).toEqual(before)
  })

  test('POST /links/{alias}/tags?dry_run=true (held tags.assign): 400, the link keeps no tag', async () => {
    const { human, token } = await setup()
    const tag = await newTag(human)
    const link = await newLink(api.deps.db, human.id, 'sho.rt')
    refusesDryRun(await call(app, 'POST', `/api/v1/links/${link.alias}/tags?dry_run=true`, { token, body: { tagId: tag } }))
    const tags = await call(app, 'GET', `/api/v1/links/${link.alias}/tags`, { token: human.key })
    expect(tags.status, show(tags)).toBe(200)
    expect(JSON.stringify(tags.body.tags ?? tags.body.data), show(tags)).not.toContain(`"id":${tag}`)
  })

  test('the same with an API key: a preview is never silently a real write', async () => {
    const { human } = await setup()
    const tag = await newTag(human)
    refusesDryRun(await call(app, 'DELETE', `/api/v1/tags/${tag}?dry_run=true`, { token: human.key }))
    expect(await tagIds(human)).toContain(tag)
  })

  test('an unauthenticated write refuses it too: POST /guest/token?dry_run=true issues no token', async () => {
    // An app of its own whose clock stands at an instant no other test uses: the guest sessions it
    // creates are the rows with that created_at, so they can be counted while others run.
    const instant = Date.UTC(2001, 0, 1) + Math.floor(Math.random() * 86_400_000)
    const clocked = (await testApi({ now: () => instant })).app
    const issued = async () =>
      (
        await api.deps.db
          .select({ id: guestSessions.id })
          .from(guestSessions)
          .where(eq(guestSessions.createdAt, new Date(instant)))
      ).length
    // Counting works: a token asked for without the flag is one row.
    const control = await call(clocked, 'POST', '/api/v1/guest/token')
    expect(control.status, show(control)).toBe(200)
    expect(await issued(), show(control)).toBe(1)
    const refused = await call(clocked, 'POST', '/api/v1/guest/token?dry_run=true')
    refusesDryRun(refused)
    expect(refused.text, show(refused)).not.toContain(GUEST_TOKEN_PREFIX)
    expect(await issued(), `a guest session was created by ${show(refused)}`).toBe(1)
  })

  test('a value other than true or false is refused, not read as false: DELETE /links/{alias}?dry_run=1 by a human deletes nothing', async () => {
    const { human } = await setup()
    const link = await newLink(api.deps.db, human.id, 'sho.rt')
    for (const value of ['1', 'yes', 'TRUE', '']) {
      const res = await call(app, 'DELETE', `/api/v1/links/${link.alias}?dry_run=${value}`, { token: human.key })
      expect(res.status, `dry_run=${value}: ${show(res)}`).toBe(400)
    }
    expect((await linkOf(human, link.alias)).status).toBe(200)
  })

  test('where a route has a dry run it is honoured: DELETE /links/{alias}?dry_run=true previews, nothing held, the link stays', async () => {
    const { human, token } = await setup()
    const link = await newLink(api.deps.db, human.id, 'sho.rt')
    const res = await call(app, 'DELETE', `/api/v1/links/${link.alias}?dry_run=true`, { token })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.meta.dry_run).toBe(true)
    expect((await linkOf(human, link.alias)).status).toBe(200)
    expect(await approvals(human)).toEqual([])
  })
})

describe('a query parameter given twice is 400 on every route', () => {
  test.each([
    ['DELETE', 'dry_run=true&dry_run=false'],
    ['DELETE', 'dry_run=false&dry_run=true'],
    ['PATCH', 'dry_run=true&dry_run=false'],
    ['PATCH', 'dry_run=false&dry_run=true'],
  ])('%s /links/{alias}?%s by a held Agent: 400, the link unchanged, nothing held', async (method, query) => {
    const { human, token } = await setup()
    const link = await newLink(api.deps.db, human.id, 'sho.rt')
    const body = method === 'PATCH' ? { url: 'https://evil.example/phish' } : undefined
    refusesRepeat(await call(app, method, `/api/v1/links/${link.alias}?${query}`, { token, body }), 'dry_run')
    const after = await linkOf(human, link.alias)
    expect(after.status, show(after)).toBe(200)
    expect(after.body.data.full_url).toBe(link.url)
    expect(await approvals(human)).toEqual([])
  })

  test.each([
    ['GET', '/api/v1/links?limit=1&limit=2'],
    ['GET', '/api/v1/links?domain=sho.rt&domain=other.example'],
    ['POST', '/api/v1/shorten?dry_run=true&dry_run=true'],
  ])('%s %s: 400 naming the parameter', async (method, path) => {
    const { human } = await setup()
    const name = new URL(path, 'http://x').searchParams.keys().next().value!
    const res = await call(app, method, path, { token: human.key, body: method === 'POST' ? { url: 'https://example.com/x' } : undefined })
    refusesRepeat(res, name)
  })

  test('a guest route too: POST /shorten?x=1&x=2 with a guest token is 400 and creates no link', async () => {
    const guest = await newGuestToken(app)
    refusesRepeat(await call(app, 'POST', '/api/v1/shorten?x=1&x=2', { token: guest, body: { url: 'https://example.com/g' } }), 'x')
    // The guest's own count (spec 4.1: GET /account/status answers a guest token too).
    const status = await call(app, 'GET', '/api/v1/account/status', { token: guest })
    expect(status.status, show(status)).toBe(200)
    expect(status.body.data.usage.links_created, show(status)).toBe(0)
    // The count moves with a link: the same call without the repeat makes one.
    const made = await call(app, 'POST', '/api/v1/shorten', { token: guest, body: { url: 'https://example.com/g' } })
    expect(made.status, show(made)).toBe(200)
    const after = await call(app, 'GET', '/api/v1/account/status', { token: guest })
    expect(after.body.data.usage.links_created, show(after)).toBe(1)
  })

  test('an OAuth endpoint answers in its RFC shape: POST /oauth/token?x=1&x=2 is invalid_request', async () => {
    const res = await call(app, 'POST', '/oauth/token?x=1&x=2', { body: 'grant_type=refresh_token&refresh_token=rt_x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(res.status, show(res)).toBe(400)
    expect(res.body.error, show(res)).toBe('invalid_request')
    expect(res.body.error_description, show(res)).toContain('x')
  })
})

describe('the audit says dry_run only when nothing was written', () => {
  test('a refused flag and a repeated one are not dry runs; an honoured preview is', async () => {
    const { human, token, agentId } = await setup()
    const tag = await newTag(human)
    const link = await newLink(api.deps.db, human.id, 'sho.rt')
    refusesDryRun(await call(app, 'DELETE', `/api/v1/tags/${tag}?dry_run=true`, { token }))
    refusesRepeat(await call(app, 'DELETE', `/api/v1/links/${link.alias}?dry_run=true&dry_run=false`, { token }), 'dry_run')
    const preview = await call(app, 'DELETE', `/api/v1/links/${link.alias}?dry_run=true`, { token })
    expect(preview.status, show(preview)).toBe(200)
    const events = await auditEvents(human, agentId, 3)
    const byPath = (path: string, status: number) => events.find((e) => e.path === path && e.status === status)
    expect(byPath(`/api/v1/tags/${tag}`, 400), JSON.stringify(events)).toMatchObject({ dry_run: false })
    expect(byPath(`/api/v1/links/${link.alias}`, 400), JSON.stringify(events)).toMatchObject({ dry_run: false })
    expect(byPath(`/api/v1/links/${link.alias}`, 200), JSON.stringify(events)).toMatchObject({ dry_run: true })
  })
})

describe('the same through MCP', () => {
  test('delete_tag and create_tag take no dry_run: the call is refused, nothing written or held', async () => {
    const { human, token } = await setup()
    const tag = await newTag(human)
    const client = await inProcessClient(app, token)
    const before = await tagIds(human)
    for (const [name, args] of [
      ['delete_tag', { tagId: tag, dry_run: true }],
      ['create_tag', { name: 'via-mcp', dry_run: true }],
    ] as const) {
      const result = await callTool(client, name, args).catch((error: Error) => ({ isError: true, content: [{ type: 'text', text: error.message }] }))
      expect(result.isError, `${name}: ${JSON.stringify(result).slice(0, 600)}`).toBe(true)
    }
    expect(await tagIds(human)).toEqual(before)
    expect(await approvals(human)).toEqual([])
    await client.close()
  })

  test('delete_link with dry_run previews (nothing deleted, nothing held, audited as a dry run); without it the call is held', async () => {
    const { human, token, agentId } = await setup()
    const link = await newLink(api.deps.db, human.id, 'sho.rt')
    const client = await inProcessClient(app, token)
    const preview = await callTool(client, 'delete_link', { alias: link.alias, dry_run: true })
    expect(preview.isError, showResult(preview)).toBeFalsy()
    expect(preview.structuredContent?.meta?.dry_run, showResult(preview)).toBe(true)
    expect((await linkOf(human, link.alias)).status).toBe(200)
    const held = await callTool(client, 'delete_link', { alias: link.alias })
    expect(held.structuredContent?.held, showResult(held)).toBe(true)
    expect((await linkOf(human, link.alias)).status).toBe(200)
    const events = await auditEvents(human, agentId, 2)
    const mcp = events.filter((e) => e.via === 'mcp' && e.path === `/api/v1/links/${link.alias}`)
    expect(mcp.map((e) => [e.status, e.dry_run]).sort(), JSON.stringify(events)).toEqual([
      [200, true],
      [202, false],
    ])
    await client.close()
  })
})
