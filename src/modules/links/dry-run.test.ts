// ?dry_run=true on shorten, bulk, update and delete: the full validation and the record that would
// result, meta.dry_run, and no write anywhere: no row, no cache entry, no quota used, no idempotency
// record. For API keys and Agent tokens alike (an Agent's held operation is previewed, not held).
import { beforeAll, describe, expect, test } from 'bun:test'
import { count, eq } from 'drizzle-orm'
import { links } from '../../db/schema'
import { linkCacheKey } from '../../../core/link-cache'
import { call, show, testApi, type TestApp } from '../../../test/support/api'
import { newAccount, newLink, type TestAccount } from '../../../test/support/fixtures'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

beforeAll(async () => {
  api = await testApi()
  app = api.app
})

async function linkCount(accountId: string): Promise<number> {
  const [row] = await api.deps.db.select({ n: count() }).from(links).where(eq(links.accountId, accountId))
  return Number(row?.n ?? 0)
}

async function fresh(): Promise<TestAccount> {
  return newAccount(api.deps.db, 'pro')
}

describe('dry_run', () => {
  test('shorten: the link it would create (alias, expiry), meta.dry_run; nothing stored, nothing cached, no quota used, the key stays free', async () => {
    const human = await fresh()
    const key = crypto.randomUUID()
    const preview = await call(app, 'POST', '/api/v1/shorten?dry_run=true', {
      token: human.key,
      body: { url: 'https://example.com/preview', alias: `preview-${key.slice(0, 8)}` },
      headers: { 'idempotency-key': key },
    })
    expect(preview.status, show(preview)).toBe(200)
    expect(preview.body.meta.dry_run).toBe(true)
    expect(preview.body.data).toMatchObject({ alias: `preview-${key.slice(0, 8)}`, full_url: 'https://example.com/preview', domain: 'sho.rt' })
    expect(preview.body.meta.usage.links_this_month, show(preview)).toBe(1)
    expect(await linkCount(human.id)).toBe(0)
    expect(await api.deps.kv.get(linkCacheKey('sho.rt', `preview-${key.slice(0, 8)}`))).toBeNull()
    const status = await call(app, 'GET', '/api/v1/account/status', { token: human.key })
    expect(status.body.data.usage.links_this_month, show(status)).toBe(0)
    // The same key now creates for real: nothing was stored under it.
    const real = await call(app, 'POST', '/api/v1/shorten', { token: human.key, body: { url: 'https://example.com/other' }, headers: { 'idempotency-key': key } })
    expect(real.status, show(real)).toBe(200)
    expect(real.headers.get('idempotent-replayed')).toBeNull()
    expect(await linkCount(human.id)).toBe(1)
  })

  test('shorten: validation is the real one (a taken alias is 409, a bad url 400)', async () => {
    const human = await fresh()
    const taken = await newLink(api.deps.db, human.id, 'sho.rt')
    const clash = await call(app, 'POST', '/api/v1/shorten?dry_run=true', { token: human.key, body: { url: 'https://example.com/x', alias: taken.alias } })
    expect(clash.status, show(clash)).toBe(409)
    const bad = await call(app, 'POST', '/api/v1/shorten?dry_run=true', { token: human.key, body: { url: 'ftp://example.com/x' } })
    expect(bad.status, show(bad)).toBe(400)
    const odd = await call(app, 'POST', '/api/v1/shorten?dry_run=maybe', { token: human.key, body: { url: 'https://example.com/x' } })
    expect(odd.status, show(odd)).toBe(400)
  })

  test('bulk: each item previewed, nothing stored', async () => {
    const human = await fresh()
    const res = await call(app, 'POST', '/api/v1/links/bulk?dry_run=true', { token: human.key, body: { links: [{ url: 'https://example.com/a' }, { url: 'nope' }] } })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data.summary).toEqual({ total: 2, succeeded: 1, failed: 1 })
    expect(res.body.meta.dry_run).toBe(true)
    expect(await linkCount(human.id)).toBe(0)
  })

  test('update: the link as it would be; the stored one and its cache unchanged', async () => {
    const human = await fresh()
    const created = await call(app, 'POST', '/api/v1/shorten', { token: human.key, body: { url: 'https://example.com/before' } })
    const alias = created.body.data.alias
    const cachedBefore = await api.deps.kv.get(linkCacheKey('sho.rt', alias))
    const preview = await call(app, 'PATCH', `/api/v1/links/${alias}?dry_run=true`, { token: human.key, body: { url: 'https://example.com/after' } })
    expect(preview.status, show(preview)).toBe(200)
    expect(preview.body.data.full_url).toBe('https://example.com/after')
    expect(preview.body.meta.dry_run).toBe(true)
    const stored = await call(app, 'GET', `/api/v1/links/${alias}`, { token: human.key })
    expect(stored.body.data.full_url, show(stored)).toBe('https://example.com/before')
    expect(await api.deps.kv.get(linkCacheKey('sho.rt', alias))).toBe(cachedBefore)
  })

  test("delete: says what it would delete; the link stays (another account's link is 404 as for real)", async () => {
    const human = await fresh()
    const link = await newLink(api.deps.db, human.id, 'sho.rt')
    const preview = await call(app, 'DELETE', `/api/v1/links/${link.alias}?dry_run=true`, { token: human.key })
    expect(preview.status, show(preview)).toBe(200)
    expect(preview.body.meta.dry_run).toBe(true)
    expect(preview.body.message).toContain('would be deleted')
    expect((await call(app, 'GET', `/api/v1/links/${link.alias}`, { token: human.key })).status).toBe(200)
    const other = await fresh()
    const foreign = await call(app, 'DELETE', `/api/v1/links/${link.alias}?dry_run=true`, { token: other.key })
    expect(foreign.status, show(foreign)).toBe(404)
  })

  test("an Agent's held operation (links.delete) is previewed with dry_run, not held, and nothing changes", async () => {
    const human = await fresh()
    const agent = await call(app, 'POST', '/api/v1/agents', { token: human.key, body: { name: 'previewer', scopes: ['links:delete', 'links:read'] } })
    const token = (await call(app, 'POST', `/api/v1/agents/${agent.body.data.id}/tokens`, { token: human.key, body: {} })).body.data.token
    const link = await newLink(api.deps.db, human.id, 'sho.rt')
    const preview = await call(app, 'DELETE', `/api/v1/links/${link.alias}?dry_run=true`, { token })
    expect(preview.status, show(preview)).toBe(200)
    expect(preview.body.meta.dry_run).toBe(true)
    expect((await call(app, 'GET', `/api/v1/links/${link.alias}`, { token: human.key })).status).toBe(200)
    const approvals = await call(app, 'GET', '/api/v1/agent/approvals', { token: human.key })
    expect(approvals.body.data.approvals, show(approvals)).toEqual([])
    const held = await call(app, 'DELETE', `/api/v1/links/${link.alias}`, { token })
    expect(held.status, show(held)).toBe(202)
  })

  test('a guest token cannot preview (400)', async () => {
    const guest = (await call(app, 'POST', '/api/v1/guest/token')).body.data.guest_token
    const res = await call(app, 'POST', '/api/v1/shorten?dry_run=true', { token: guest, body: { url: 'https://example.com/g' } })
    expect(res.status, show(res)).toBe(400)
  })
})
