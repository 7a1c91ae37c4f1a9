// Links as operators find them (an alias, a host with its subdomains, a URL prefix, a short URL; every
// account's and every guest's) and act on them: flag, disable, restore — the state in Postgres and in the
// cached record every redirector reads, the reports closed, the audit row.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { decodeCachedLink, linkCacheKey } from '../../../core/link-cache'
import { links, reports } from '../../db/schema'
import { adminKit, call, insertLink, show, type Kit } from './admin-kit.test'

let kit: Kit
beforeAll(async () => {
  kit = await adminKit()
}, 120_000)
afterAll(() => kit.close())

const admin = (method: string, path: string, body?: unknown) => call(kit.api.app, method, `/api/v1/admin${path}`, { token: kit.operator.adminKey, body })
const search = async (q: string) => {
  const res = await admin('GET', `/links?q=${encodeURIComponent(q)}&limit=100`)
  expect(res.status, show(res)).toBe(200)
  return res.body.data.links as { id: string; [key: string]: unknown }[]
}
const ids = (items: { id: string }[]) => items.map((item) => item.id).sort()
const unique = () => `h${crypto.randomUUID().slice(0, 8)}`

describe('GET /api/v1/admin/links?q=', () => {
  test("a host: its links and its subdomains' of every account and of guests, never a parent, a sibling or a look-alike", async () => {
    const host = `${unique()}.example`
    const owner = await kit.account()
    const exact = await insertLink(kit, null, `https://${host}/login`)
    const sub = await insertLink(kit, owner.id, `https://deep.www.${host}:8443/x?y=1`)
    const dotted = await insertLink(kit, null, `https://${host}./trailing-dot`)
    const others = [
      await insertLink(kit, null, `https://not${host}/`),
      await insertLink(kit, null, `https://${host}.evil.com/`),
      await insertLink(kit, null, `https://example/`),
      await insertLink(kit, null, `https://other.example/${host}`),
    ]
    for (const q of [host, host.toUpperCase(), `${host}.`]) {
      const found = await search(q)
      expect(ids(found), q).toEqual(ids([exact, sub, dotted]))
      expect(ids(found).some((id) => others.some((o) => o.id === id))).toBe(false)
    }
    const item = (await search(host)).find((l) => l.id === sub.id)
    expect(item).toEqual({ id: sub.id, alias: sub.alias, domain: 'sho.rt', url: sub.url, account_id: owner.id, state: 'ok', state_reason: null, open_reports: 0, created_at: expect.any(String) })
  })

  test('a name without a dot matches that host only, not its "subdomains"', async () => {
    const label = unique()
    const bare = await insertLink(kit, null, `http://${label}/`)
    await insertLink(kit, null, `http://www.${label}/`)
    expect(ids(await search(label))).toEqual(ids([bare]))
  })

  test('an alias exactly (not a prefix of one); a URL prefix on its host; the link at a short URL', async () => {
    const host = `${unique()}.example`
    const a = await insertLink(kit, null, `https://${host}/promo/spring?utm=1`)
    const b = await insertLink(kit, null, `https://${host}/promo/summer`)
    const c = await insertLink(kit, null, `https://${host}/about`)
    await insertLink(kit, null, `http://${host}/promo/plain-http`)
    expect(ids(await search(a.alias))).toEqual([a.id])
    expect(await search(a.alias.slice(0, -1))).toEqual([])
    expect(ids(await search(`https://${host}/promo/`))).toEqual(ids([a, b]))
    expect(ids(await search(`https://${host.toUpperCase()}/promo/`))).toEqual(ids([a, b]))
    expect(ids(await search(`https://sho.rt/${c.alias}`))).toEqual([c.id])
  })

  test('pages of `limit`, newest first, with next_cursor until the last page; no q lists every link', async () => {
    const host = `${unique()}.example`
    const made = []
    for (let i = 0; i < 5; i++) made.push(await insertLink(kit, null, `https://${host}/${i}`, { createdAt: new Date(Date.now() + i) }))
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const res = await admin('GET', `/links?q=${host}&limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      expect(res.status, show(res)).toBe(200)
      seen.push(...res.body.data.links.map((l: { id: string }) => l.id))
      cursor = res.body.data.next_cursor
      pages++
    } while (cursor !== null)
    expect(pages).toBe(3)
    expect(seen).toEqual(made.map((l) => l.id).reverse())
    const all = await admin('GET', '/links?limit=3')
    expect(all.status, show(all)).toBe(200)
    expect(all.body.data.links).toHaveLength(3)
    expect(all.body.data.next_cursor).not.toBeNull()
  })

  test('an item counts the open reports of its link, and only those', async () => {
    const link = await insertLink(kit, null, `https://${unique()}.example/`)
    const other = await insertLink(kit, null, `https://${unique()}.example/`)
    for (const alias of [link.alias, link.alias, other.alias]) {
      const filed = await call(kit.api.app, 'POST', '/api/v1/reports', { body: { url: `https://sho.rt/${alias}`, reason: 'spam' } })
      expect(filed.status, show(filed)).toBe(201)
    }
    expect((await search(link.alias))[0]).toMatchObject({ id: link.id, open_reports: 2 })
  })
})

describe('POST /api/v1/admin/links/{id}/{flag|disable|restore}', () => {
  const cached = async (alias: string) => decodeCachedLink((await kit.api.adapters.kv.get(linkCacheKey('sho.rt', alias))) ?? '')

  test('each action sets the state and its reason in Postgres and in the cached record, closes the reports, and is audited', async () => {
    const link = await insertLink(kit, null, `https://${unique()}.example/`)
    const filed = await call(kit.api.app, 'POST', '/api/v1/reports', { body: { url: `https://sho.rt/${link.alias}`, reason: 'malware' } })
    expect(filed.status, show(filed)).toBe(201)
    for (const [action, state, st] of [
      ['flag', 'flagged', 'flagged'],
      ['disable', 'disabled', 'disabled'],
      ['restore', 'ok', undefined],
    ] as const) {
      const reason = `${action}: ticket 42`
      const res = await admin('POST', `/links/${link.id}/${action}`, { reason })
      expect(res.status, `${action}: ${show(res)}`).toBe(200)
      expect(res.body.data.link).toMatchObject({ id: link.id, state, state_reason: state === 'ok' ? null : reason, open_reports: 0 })
      const [row] = await kit.api.deps.db.select().from(links).where(eq(links.id, link.id))
      expect({ state: row!.state, reason: row!.stateReason }, action).toEqual({ state, reason: state === 'ok' ? null : reason })
      expect((await cached(link.alias))?.st, action).toBe(st)
      const actions = (await admin('GET', '/actions?limit=10')).body.data.actions
      expect(
        actions.find((a: { action: string; target: string }) => a.target === link.id && a.action === `link.${action}`),
        action,
      ).toMatchObject({ reason, operator_id: kit.operator.id })
    }
    const [report] = await kit.api.deps.db.select().from(reports).where(eq(reports.id, filed.body.data.id))
    expect({ status: report!.status, resolution: report!.resolution }).toEqual({ status: 'closed', resolution: 'flag' })
  })

  test('without a reason the state still says an operator did it; the same action twice takes the newer reason', async () => {
    const link = await insertLink(kit, null, `https://${unique()}.example/`)
    const bare = await call(kit.api.app, 'POST', `/api/v1/admin/links/${link.id}/disable`, { token: kit.operator.adminKey })
    expect(bare.status, show(bare)).toBe(200)
    expect(bare.body.data.link.state_reason).toBe('disabled by an operator')
    const again = await admin('POST', `/links/${link.id}/disable`, { reason: 'confirmed with the host' })
    expect(again.body.data.link).toMatchObject({ state: 'disabled', state_reason: 'confirmed with the host' })
  })

  test('an unknown or malformed link id is 404 LINK_NOT_FOUND; an unknown action 400', async () => {
    for (const id of ['link_AAAAAAAAAAAAAAAAAAAAAA', 'nope']) {
      const res = await admin('POST', `/links/${id}/disable`)
      expect(res.status, show(res)).toBe(404)
      expect(res.body.error).toBe('LINK_NOT_FOUND')
    }
    const link = await insertLink(kit, null, `https://${unique()}.example/`)
    const res = await admin('POST', `/links/${link.id}/delete`)
    expect(res.status, show(res)).toBe(400)
    expect(res.body.error).toBe('VALIDATION_FAILED')
  })
})
