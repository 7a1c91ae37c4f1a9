// Who reaches the admin API: an operator's session (writes with the CSRF token) or an operator's key
// carrying `admin`. Everyone else — no credential, a guest, another account's session or key, an
// operator's key without `admin`, an operator's own Agent token — gets the unknown path's 404 on every
// route, for every method and body, and nothing changes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { accounts, bannedHosts, links, reports } from '../../db/schema'
import { agentToken } from '../../../test/support/fixtures'
import { newGuestToken, testApi, testConfig } from '../../../test/support/api'
import { adminKit, call, insertLink, show, withSession, type Kit } from './admin-kit.test'
import { SCOPES } from '../../lib/agent-access'

let kit: Kit
let linkId: string
let reportId: string
let targetAccount: string
const HOST = `access-${crypto.randomUUID().slice(0, 8)}.example`

/** Every admin route, with real ids, so a leak would act on something. */
const routes = () =>
  [
    ['GET', '/api/v1/admin/me'],
    ['GET', '/api/v1/admin/reports?status=open'],
    ['POST', `/api/v1/admin/reports/${reportId}/dismiss`, { reason: 'x' }],
    ['GET', `/api/v1/admin/links?q=${HOST}`],
    ['POST', `/api/v1/admin/links/${linkId}/disable`, { reason: 'x' }],
    ['POST', `/api/v1/admin/links/${linkId}/flag`],
    ['GET', '/api/v1/admin/hosts'],
    ['POST', '/api/v1/admin/hosts', { host: HOST, reason: 'x' }],
    ['DELETE', `/api/v1/admin/hosts/${HOST}`],
    ['GET', `/api/v1/admin/accounts/${targetAccount}`],
    ['POST', `/api/v1/admin/accounts/${targetAccount}/suspend`, { reason: 'x' }],
    ['GET', '/api/v1/admin/actions'],
    // Not routes: the same answer.
    ['GET', '/api/v1/admin'],
    ['GET', '/api/v1/admin/no-such-thing'],
  ] as [string, string, unknown?][]

let unknownPath: { body: unknown; headers: string[] }
const headerNames = (headers: Headers) => [...headers.keys()].filter((name) => name !== 'x-request-id').sort()

beforeAll(async () => {
  kit = await adminKit()
  const owner = await kit.account()
  targetAccount = owner.id
  const link = await insertLink(kit, null, `https://${HOST}/login`)
  linkId = link.id
  const filed = await call(kit.api.app, 'POST', '/api/v1/reports', { body: { url: `https://sho.rt/${link.alias}`, reason: 'phishing' } })
  if (filed.status !== 201) throw new Error(show(filed))
  reportId = filed.body.data.id
  const unknown = await call(kit.api.app, 'GET', '/api/v1/no-such-path')
  unknownPath = { body: unknown.body, headers: headerNames(unknown.headers) }
}, 120_000)
afterAll(() => kit.close())

/** Nothing any refused call could have changed has changed. */
async function untouched() {
  const db = kit.api.deps.db
  const [report] = await db.select().from(reports).where(eq(reports.id, reportId))
  const [link] = await db.select().from(links).where(eq(links.id, linkId))
  const [account] = await db.select().from(accounts).where(eq(accounts.id, targetAccount))
  const bans = await db.select().from(bannedHosts).where(eq(bannedHosts.host, HOST))
  expect({ report: report?.status, link: link?.state, suspended: account?.suspendedAt, bans: bans.length }).toEqual({ report: 'open', link: 'ok', suspended: null, bans: 0 })
}

/** Every route answers exactly as an unknown path does. */
async function refusedEverywhere(send: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: unknown; headers: Headers; text: string }>) {
  for (const [method, path, body] of routes()) {
    const res = await send(method, path, body)
    const where = `${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`
    expect(res.status, where).toBe(404)
    expect(res.body, where).toEqual(unknownPath.body)
    expect(headerNames(res.headers), where).toEqual(unknownPath.headers)
  }
  await untouched()
}

describe("everyone but an operator gets the unknown path's 404", () => {
  test('no credential, a malformed one, an unknown key, a guest token', async () => {
    await refusedEverywhere((method, path, body) => call(kit.api.app, method, path, { body }))
    await refusedEverywhere((method, path, body) => call(kit.api.app, method, path, { body, headers: { authorization: 'Basic b3A6cGFzcw==' } }))
    await refusedEverywhere((method, path, body) => call(kit.api.app, method, path, { body, token: `mk_${'A'.repeat(43)}` }))
    const guest = await newGuestToken(kit.api.app)
    await refusedEverywhere((method, path, body) => call(kit.api.app, method, path, { body, token: guest }))
  })

  test('another account: its key, and its signed-in session with the CSRF token on writes', async () => {
    await refusedEverywhere((method, path, body) => call(kit.api.app, method, path, { body, token: kit.stranger.key }))
    const { browser, csrf } = await kit.signIn(kit.stranger)
    await refusedEverywhere((method, path, body) => withSession(browser, method, path, body, { 'x-csrf-token': csrf }))
  })

  test("the operator's keys without `admin` (full access, other scopes) and the operator's own Agent token", async () => {
    await refusedEverywhere((method, path, body) => call(kit.api.app, method, path, { body, token: kit.operator.key }))
    const scoped = await call(kit.api.app, 'POST', '/api/v1/account/keys', { token: kit.operator.key, body: { name: 'links only', scopes: ['links:read', 'links:write'] } })
    expect(scoped.status, show(scoped)).toBe(201)
    await refusedEverywhere((method, path, body) => call(kit.api.app, method, path, { body, token: scoped.body.data.key }))
    const { token } = await agentToken(kit.api.app, kit.operator, ['links:read', 'links:write', 'account:read'])
    expect((await call(kit.api.app, 'GET', '/api/v1/account/status', { token })).status, 'the Agent token works elsewhere').toBe(200)
    await refusedEverywhere((method, path, body) => call(kit.api.app, method, path, { body, token }))
  })

  test("a stranger's bearer token never falls back to the operator's session cookie sent with it", async () => {
    const { browser, csrf } = await kit.signIn(kit.operator)
    await refusedEverywhere((method, path, body) => withSession(browser, method, path, body, { 'x-csrf-token': csrf, authorization: `Bearer ${kit.stranger.key}` }))
  })

  test('a refused caller learns nothing from a body, a method or a query: no 400 or 405 before the 404', async () => {
    const probes = [
      call(kit.api.app, 'POST', '/api/v1/admin/hosts', { token: kit.stranger.key, body: '{not json' }),
      call(kit.api.app, 'POST', '/api/v1/admin/hosts', { token: kit.stranger.key, body: { host: 42 } }),
      call(kit.api.app, 'PATCH', '/api/v1/admin/hosts', { token: kit.stranger.key, body: {} }),
      call(kit.api.app, 'GET', `/api/v1/admin/links?q=a&q=b`, { token: kit.stranger.key }),
      call(kit.api.app, 'GET', `/api/v1/admin/reports?status=nonsense`, { token: kit.stranger.key }),
    ]
    for (const res of await Promise.all(probes)) {
      expect(res.status, show(res)).toBe(404)
      expect(res.body).toEqual(unknownPath.body)
    }
    // The same probes from the operator do reach the routes: the guard is what hid them.
    const asOperator = [
      await call(kit.api.app, 'POST', '/api/v1/admin/hosts', { token: kit.operator.adminKey, body: '{not json' }),
      await call(kit.api.app, 'PATCH', '/api/v1/admin/hosts', { token: kit.operator.adminKey, body: {} }),
      await call(kit.api.app, 'GET', `/api/v1/admin/reports?status=nonsense`, { token: kit.operator.adminKey }),
    ]
    expect(
      asOperator.map((res) => res.status),
      asOperator.map(show).join('\n'),
    ).toEqual([400, 405, 400])
  })

  test('an admin key stops working when revoked, and when its owner leaves ADMIN_EMAILS', async () => {
    const made = await call(kit.api.app, 'POST', '/api/v1/account/keys', { token: kit.operator.key, body: { name: 'short-lived', scopes: ['admin'] } })
    expect(made.status, show(made)).toBe(201)
    expect((await call(kit.api.app, 'GET', '/api/v1/admin/me', { token: made.body.data.key })).status).toBe(200)
    const revoked = await call(kit.api.app, 'DELETE', `/api/v1/account/keys/${made.body.data.id}`, { token: kit.operator.key })
    expect(revoked.status, show(revoked)).toBe(200)
    await refusedEverywhere((method, path, body) => call(kit.api.app, method, path, { body, token: made.body.data.key }))
    // The same database, an instance whose ADMIN_EMAILS no longer names this operator.
    const without = await testApi({ config: testConfig({ ADMIN_EMAILS: 'someone-else@example.test' }) })
    const res = await call(without.app, 'GET', '/api/v1/admin/me', { token: kit.operator.adminKey })
    expect(res.status, show(res)).toBe(404)
    expect((await call(kit.api.app, 'GET', '/api/v1/admin/me', { token: kit.operator.adminKey })).status).toBe(200)
  })
})

describe('an operator', () => {
  test('with the admin key: every read answers 200 with rate headers; a write needs no CSRF token', async () => {
    const me = await call(kit.api.app, 'GET', '/api/v1/admin/me', { token: kit.operator.adminKey })
    expect(me.status, show(me)).toBe(200)
    expect(me.body.data).toEqual({ id: kit.operator.id, email: kit.operator.email, via: 'key' })
    expect(me.headers.get('x-ratelimit-limit')).not.toBeNull()
    for (const path of ['/api/v1/admin/reports', '/api/v1/admin/links', '/api/v1/admin/hosts', '/api/v1/admin/actions', `/api/v1/admin/accounts/${targetAccount}`]) {
      const res = await call(kit.api.app, 'GET', path, { token: kit.operator.adminKey })
      expect(res.status, `${path}: ${show(res)}`).toBe(200)
    }
    const other = await insertLink(kit, null, 'https://example.com/fine')
    const flagged = await call(kit.api.app, 'POST', `/api/v1/admin/links/${other.id}/flag`, { token: kit.operator.adminKey })
    expect(flagged.status, show(flagged)).toBe(200)
  })

  test('with the session: reads answer 200; a write without the CSRF token, or with a wrong one, is 403 CSRF_TOKEN_INVALID and changes nothing', async () => {
    const { browser, csrf } = await kit.signIn(kit.operator)
    const me = await withSession(browser, 'GET', '/api/v1/admin/me')
    expect(me.status, show(me)).toBe(200)
    expect(me.body.data.via).toBe('session')
    for (const headers of [{}, { 'x-csrf-token': 'not-the-token' }] as Record<string, string>[]) {
      for (const [method, path, body] of routes().filter(([method]) => method !== 'GET')) {
        const res = await withSession(browser, method, path, body, headers)
        expect(res.status, `${method} ${path}: ${show(res)}`).toBe(403)
        expect(res.body.error).toBe('CSRF_TOKEN_INVALID')
      }
    }
    await untouched()
    const dismissed = await withSession(browser, 'POST', `/api/v1/admin/reports/${reportId}/dismiss`, undefined, { 'x-csrf-token': csrf })
    expect(dismissed.status, show(dismissed)).toBe(200)
    expect(dismissed.body.data.report.status).toBe('closed')
  })
})

describe('admin is no OAuth scope', () => {
  test('the OAuth scope table lacks it, and an Agent cannot be given it, even by an operator', async () => {
    expect(Object.keys(SCOPES)).not.toContain('admin')
    const agent = await call(kit.api.app, 'POST', '/api/v1/agents', { token: kit.operator.key, body: { name: 'would-be admin', scopes: ['admin'] } })
    expect(agent.status, show(agent)).toBe(400)
    const metadata = await call(kit.api.app, 'GET', '/.well-known/oauth-protected-resource')
    expect(metadata.body.scopes_supported, show(metadata)).not.toContain('admin')
  })
})
