// The `admin` scope of an API key (docs/operators.md): only an operator (ADMIN_EMAILS) may give it to a
// key; anyone else asking for it is refused as for a scope that does not exist. A key holding it is held
// to it elsewhere like any restricted key: it opens the admin API and nothing more.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { adminKit, call, show, withSession, type Kit } from '../admin/admin-kit.test'

let kit: Kit
beforeAll(async () => {
  kit = await adminKit()
}, 120_000)
afterAll(() => kit.close())

const KEYS = '/api/v1/account/keys'

describe('who may create a key with admin', () => {
  test('anyone but an operator: 400 VALIDATION_FAILED, worded as for a scope that does not exist, and no key is made', async () => {
    const before = (await call(kit.api.app, 'GET', KEYS, { token: kit.stranger.key })).body.data.keys.length
    const unknown = await call(kit.api.app, 'POST', KEYS, { token: kit.stranger.key, body: { name: 'x', scopes: ['nonsense'] } })
    for (const scopes of [['admin'], ['links:read', 'admin']]) {
      const res = await call(kit.api.app, 'POST', KEYS, { token: kit.stranger.key, body: { name: 'x', scopes } })
      expect(res.status, show(res)).toBe(400)
      expect(res.body.error).toBe('VALIDATION_FAILED')
      expect(res.body.hint).toBe(unknown.body.hint.replace('"nonsense"', '"admin"'))
    }
    const { browser, csrf } = await kit.signIn(kit.stranger)
    const bySession = await withSession(browser, 'POST', KEYS, { name: 'x', scopes: ['admin'] }, { 'x-csrf-token': csrf })
    expect(bySession.status, show(bySession)).toBe(400)
    expect((await call(kit.api.app, 'GET', KEYS, { token: kit.stranger.key })).body.data.keys).toHaveLength(before)
  })

  test('an operator, with the session or a full-access key: 201, admin alone or beside OAuth scopes', async () => {
    const alone = await call(kit.api.app, 'POST', KEYS, { token: kit.operator.key, body: { name: 'moderation bot', scopes: ['admin'] } })
    expect(alone.status, show(alone)).toBe(201)
    expect(alone.body.data.scopes).toEqual(['admin'])
    const { browser, csrf } = await kit.signIn(kit.operator)
    const mixed = await withSession(browser, 'POST', KEYS, { name: 'both', scopes: ['admin', 'links:read', 'admin'] }, { 'x-csrf-token': csrf })
    expect(mixed.status, show(mixed)).toBe(201)
    expect(mixed.body.data.scopes).toEqual(['links:read', 'admin'])
  })

  test('a key holding admin cannot make keys itself (a restricted key), so admin never spreads from a key', async () => {
    const res = await call(kit.api.app, 'POST', KEYS, { token: kit.operator.adminKey, body: { name: 'copy', scopes: ['admin'] } })
    expect(res.status, show(res)).toBe(403)
    expect(res.body.error).toBe('FULL_ACCESS_REQUIRED')
  })
})

describe('what an admin key opens', () => {
  test('the admin API, and no other route: links are 403 INSUFFICIENT_SCOPE', async () => {
    expect((await call(kit.api.app, 'GET', '/api/v1/admin/me', { token: kit.operator.adminKey })).status).toBe(200)
    const links = await call(kit.api.app, 'GET', '/api/v1/links', { token: kit.operator.adminKey })
    expect(links.status, show(links)).toBe(403)
    expect(links.body.error).toBe('INSUFFICIENT_SCOPE')
  })
})
