// The account's API keys through the real app (index.ts): created and shown once, stored as a hash,
// listed without secrets, limited in number, and kept to their own account.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { apiKeys } from '../../db/schema'
import { hashSecret } from '../../lib/secrets'
import { call, show, testApi, type TestApp } from '../../../test/support/api'
import { agentToken, newAccount } from '../../../test/support/fixtures'
import { MAX_LIVE_KEYS } from './model'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

beforeAll(async () => {
  api = await testApi()
  app = api.app
})

const KEYS = '/api/v1/account/keys'
const createKey = (token: string, body: unknown) => call(app, 'POST', KEYS, { token, body })
const listKeys = (token: string) => call(app, 'GET', KEYS, { token })

describe('API keys', () => {
  test('create: the key once, in clear; only its hash is stored; the list shows no secret', async () => {
    const human = await newAccount(api.deps.db)
    const created = await createKey(human.key, { name: '  CI deploys ', scopes: ['links:write', 'links:read', 'links:read'] })
    expect(created.status, show(created)).toBe(201)
    expect(created.headers.get('cache-control')).toBe('no-store')
    const { key, ...record } = created.body.data
    expect(key).toMatch(/^mk_[A-Za-z0-9_-]{43}$/)
    // Trimmed, scopes deduplicated in the order of the scope table.
    expect(record).toMatchObject({ name: 'CI deploys', prefix: key.slice(0, 7), scopes: ['links:read', 'links:write'], last_used_at: null })
    expect(record.id).toMatch(/^key_/)

    const [row] = await api.deps.db.select().from(apiKeys).where(eq(apiKeys.id, record.id))
    expect(row!.keyHash).toBe(hashSecret(key))
    expect(JSON.stringify(row)).not.toContain(key)

    const list = await listKeys(human.key)
    expect(list.status, show(list)).toBe(200)
    expect(list.body.data.keys.map((k: { name: string }) => k.name)).toEqual(['CI deploys', 'Default key'])
    expect(list.body.data.keys[0]).toEqual(record)
    expect(list.body.data.keys[1]).toMatchObject({ prefix: human.key.slice(0, 7), scopes: null })
    for (const secret of [key, human.key, row!.keyHash, hashSecret(human.key)]) expect(list.text).not.toContain(secret)
    expect(Object.keys(list.body.data.keys[0]).sort()).toEqual(['created_at', 'id', 'last_used_at', 'name', 'prefix', 'scopes'])

    // The new key works at once, within its scopes.
    const links = await call(app, 'GET', '/api/v1/links', { token: key })
    expect(links.status, show(links)).toBe(200)
  })

  test('a key without scopes (absent or null) has full access and can manage keys itself', async () => {
    const human = await newAccount(api.deps.db)
    const created = await createKey(human.key, { name: 'laptop', scopes: null })
    expect(created.status, show(created)).toBe(201)
    expect(created.body.data.scopes).toBeNull()
    const listed = await listKeys(created.body.data.key)
    expect(listed.status, show(listed)).toBe(200)
    expect(listed.body.data.keys).toHaveLength(2)
  })

  test('names and scopes are checked: 400 VALIDATION_FAILED naming the field', async () => {
    const human = await newAccount(api.deps.db)
    const bad: [unknown, string][] = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(65) }, 'name'],
      [{ name: 'a\u0007b' }, 'name'],
      [{ name: 'k', scopes: [] }, 'scopes'],
      [{ name: 'k', scopes: ['offline_access'] }, 'scopes'],
      [{ name: 'k', scopes: ['links:read', 'admin'] }, 'scopes'],
      [{ name: 'k', scopes: 'links:read' }, 'scopes'],
    ]
    for (const [body, field] of bad) {
      const res = await createKey(human.key, body)
      expect(res.status, `${JSON.stringify(body)}: ${show(res)}`).toBe(400)
      expect(res.body.error).toBe('VALIDATION_FAILED')
      expect(res.body.hint, show(res)).toContain(field)
    }
    expect((await listKeys(human.key)).body.data.keys).toHaveLength(1)
    const longest = await createKey(human.key, { name: 'é'.repeat(64) })
    expect(longest.status, show(longest)).toBe(201)
  })

  test(`at most ${MAX_LIVE_KEYS} live keys, exactly, under concurrent creation; revoking one makes room`, async () => {
    // Pro: 120 requests a minute leave room for the 30 creations and what follows.
    const human = await newAccount(api.deps.db, 'pro')
    const results = await Promise.all(Array.from({ length: MAX_LIVE_KEYS + 5 }, (_, i) => createKey(human.key, { name: `key ${i}` })))
    expect(results.filter((r) => r.status === 201)).toHaveLength(MAX_LIVE_KEYS - 1)
    for (const r of results.filter((r) => r.status !== 201)) {
      expect(r.status, show(r)).toBe(409)
      expect(r.body, show(r)).toMatchObject({ error: 'API_KEY_LIMIT_REACHED', limit: MAX_LIVE_KEYS, remaining: 0 })
    }
    const victim = results.find((r) => r.status === 201)!.body.data.id
    const revoked = await call(app, 'DELETE', `${KEYS}/${victim}`, { token: human.key })
    expect(revoked.status, show(revoked)).toBe(200)
    expect((await createKey(human.key, { name: 'one more' })).status).toBe(201)
  })

  test("security: another account's key is 404 and stays alive; unknown, malformed and revoked ids are 404", async () => {
    const [alice, mallory] = [await newAccount(api.deps.db), await newAccount(api.deps.db)]
    const aliceKey = (await createKey(alice.key, { name: 'alice' })).body.data
    const stolen = await call(app, 'DELETE', `${KEYS}/${aliceKey.id}`, { token: mallory.key })
    expect(stolen.status, show(stolen)).toBe(404)
    expect(stolen.body.error).toBe('API_KEY_NOT_FOUND')
    expect((await call(app, 'GET', '/api/v1/account/status', { token: aliceKey.key })).status).toBe(200)
    expect((await listKeys(mallory.key)).text).not.toContain(aliceKey.id)

    for (const id of [`key_${'A'.repeat(22)}`, 'nope', aliceKey.id.slice(0, -1)]) {
      const res = await call(app, 'DELETE', `${KEYS}/${id}`, { token: alice.key })
      expect(res.status, `${id}: ${show(res)}`).toBe(404)
    }
    const first = await call(app, 'DELETE', `${KEYS}/${aliceKey.id}`, { token: alice.key })
    expect(first.status, show(first)).toBe(200)
    expect(first.body.data).toMatchObject({ id: aliceKey.id, name: 'alice' })
    expect(Date.parse(first.body.data.revoked_at)).toBeGreaterThan(0)
    const again = await call(app, 'DELETE', `${KEYS}/${aliceKey.id}`, { token: alice.key })
    expect(again.status, show(again)).toBe(404)
    expect((await listKeys(alice.key)).text).not.toContain(aliceKey.id)
  })

  test("security: an Agent's at_ token cannot list, create or revoke keys (403 HUMAN_ONLY)", async () => {
    const human = await newAccount(api.deps.db)
    const { token } = await agentToken(app, human, ['links:read', 'account:read'])
    const keyId = (await listKeys(human.key)).body.data.keys[0].id
    for (const [method, path, body] of [
      ['GET', KEYS],
      ['POST', KEYS, { name: 'mine now' }],
      ['DELETE', `${KEYS}/${keyId}`],
    ] as const) {
      const res = await call(app, method, path, { token, body })
      expect(res.status, `${method} ${path}: ${show(res)}`).toBe(403)
      expect(res.body.error).toBe('HUMAN_ONLY')
    }
    expect((await listKeys(human.key)).body.data.keys).toHaveLength(1)
  })

  test('security: a key restricted to scopes cannot manage keys, Agents or approvals (403 FULL_ACCESS_REQUIRED)', async () => {
    const human = await newAccount(api.deps.db)
    const scoped = (await createKey(human.key, { name: 'narrow', scopes: ['links:read', 'links:write', 'links:delete', 'account:read', 'billing:write'] })).body.data
    const attempts = [
      ['GET', KEYS],
      ['POST', KEYS, { name: 'wider' }],
      ['DELETE', `${KEYS}/${scoped.id}`],
      ['GET', '/api/v1/agents'],
      ['POST', '/api/v1/agents', { name: 'wider', scopes: ['tags:write'] }],
      ['GET', '/api/v1/agent/approvals'],
    ] as const
    for (const [method, path, body] of attempts) {
      const res = await call(app, method, path, { token: scoped.key, body })
      expect(res.status, `${method} ${path}: ${show(res)}`).toBe(403)
      expect(res.body.error).toBe('FULL_ACCESS_REQUIRED')
    }
    const list = await listKeys(human.key)
    // Neither key created nor revoked. (Their order is not the point: created within a millisecond, the
    // fixture's key and this one may tie on created_at.)
    expect(list.body.data.keys.map((k: { name: string }) => k.name).sort()).toEqual(['Default key', 'narrow'])
    expect((await call(app, 'GET', '/api/v1/agents', { token: human.key })).body.data.agents).toEqual([])
  })
})
