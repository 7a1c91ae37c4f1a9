// Host bans: banning stores the host (normalised) and disables every stored link that leads there — its
// destination, a routing rule or an A/B variant, the host or any subdomain — closing their reports and
// announcing the ban; unbanning removes it and leaves those links disabled.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, inArray } from 'drizzle-orm'
import { decodeCachedLink, linkCacheKey } from '../../../core/link-cache'
import { bannedHosts, links, reports, type LinkRouting } from '../../db/schema'
import { adminKit, call, insertLink, show, type Kit } from './admin-kit.test'
import { SUSPENSION_MARKS } from '../links/state'

let kit: Kit
beforeAll(async () => {
  kit = await adminKit()
}, 120_000)
afterAll(() => kit.close())

const admin = (method: string, path: string, body?: unknown) => call(kit.api.app, method, `/api/v1/admin${path}`, { token: kit.operator.adminKey, body })
const unique = () => `b${crypto.randomUUID().slice(0, 8)}`
const stateOf = async (ids: string[]) => {
  const rows = await kit.api.deps.db.select().from(links).where(inArray(links.id, ids))
  return Object.fromEntries(rows.map((row) => [row.id, row.state]))
}

function routing(rules: string[], variants: string[] = []): LinkRouting {
  return {
    rules: rules.map((url, i) => ({ id: `r${i + 1}`, url, when: { country: ['DE'] } })),
    ab: variants.length
      ? {
          variants: variants.map((url, i) => ({ id: String.fromCharCode(97 + i), url, weight: 100 / variants.length })),
          sticky: true,
          ends_at: null,
          winner_by: null,
          status: 'running',
          winner: null,
          completed_at: null,
          started_at: '2026-11-01T00:00:00.000Z',
        }
      : null,
  }
}

describe('POST /api/v1/admin/hosts', () => {
  test('disables every link leading to the host or a subdomain, by destination, routing rule or A/B variant, and nothing else', async () => {
    const host = `${unique()}.example`
    const owner = await kit.account()
    const hit = [
      await insertLink(kit, null, `https://${host}/login`),
      await insertLink(kit, owner.id, `http://mail.${host}:8080/x`),
      await insertLink(kit, null, `https://${host}./dot`),
      await insertLink(kit, owner.id, 'https://fine.example/', { routing: routing(['https://fine.example/de', `https://www.${host}/de`]) }),
      await insertLink(kit, owner.id, 'https://fine.example/ab', { routing: routing([], ['https://fine.example/a', `https://${host.toUpperCase()}/b`]) }),
    ]
    const miss = [
      await insertLink(kit, null, `https://x${host}/`),
      await insertLink(kit, null, `https://${host}.other.com/`),
      await insertLink(kit, null, `https://other.example/?next=https://${host}/`),
      await insertLink(kit, owner.id, 'https://fine.example/r', { routing: routing(['https://fine.example/de'], ['https://fine.example/a', `https://other.example/${host}`]) }),
    ]
    const report = await call(kit.api.app, 'POST', '/api/v1/reports', { body: { url: `https://sho.rt/${hit[0]!.alias}`, reason: 'phishing' } })
    expect(report.status, show(report)).toBe(201)

    const res = await admin('POST', '/hosts', { host: `${host.toUpperCase()}.`, reason: 'phishing kit' })
    expect(res.status, show(res)).toBe(201)
    expect(res.body.data).toEqual({ host: { host, reason: 'phishing kit', banned_by: kit.operator.id, created_at: expect.any(String) }, links_disabled: hit.length })
    const states = await stateOf([...hit, ...miss].map((l) => l.id))
    expect(hit.map((l) => states[l.id])).toEqual(hit.map(() => 'disabled'))
    expect(miss.map((l) => states[l.id])).toEqual(miss.map(() => 'ok'))
    for (const link of hit) expect(decodeCachedLink((await kit.api.adapters.kv.get(linkCacheKey('sho.rt', link.alias))) ?? '')?.st, link.url).toBe('disabled')
    const [closed] = await kit.api.deps.db.select().from(reports).where(eq(reports.id, report.body.data.id))
    expect(closed!.resolution).toBe('disable')
    const [row] = await kit.api.deps.db.select().from(bannedHosts).where(eq(bannedHosts.host, host))
    expect(row).toMatchObject({ host, reason: 'phishing kit', bannedBy: kit.operator.id })
    const audit = (await admin('GET', '/actions?limit=10')).body.data.actions
    expect(audit.find((a: { target: string }) => a.target === host)).toMatchObject({ action: 'host.ban', reason: 'phishing kit' })
  })

  test("a ban replaces a suspension's mark on a link already disabled, so restoring the account leaves it disabled", async () => {
    const host = `${unique()}.example`
    const owner = await kit.account()
    const marked = await insertLink(kit, owner.id, `https://${host}/`, { state: 'disabled', stateReason: SUSPENSION_MARKS.ok })
    const res = await admin('POST', '/hosts', { host })
    expect(res.status, show(res)).toBe(201)
    expect(res.body.data.links_disabled).toBe(0)
    const [row] = await kit.api.deps.db.select().from(links).where(eq(links.id, marked.id))
    expect({ state: row!.state, reason: row!.stateReason }).toEqual({ state: 'disabled', reason: `host banned: ${host}` })
  })

  test('a name without a dot is banned alone, not its "subdomains"; an IP address bans that address', async () => {
    const label = unique()
    const bare = await insertLink(kit, null, `http://${label}/`)
    const below = await insertLink(kit, null, `http://intranet.${label}/`)
    expect((await admin('POST', '/hosts', { host: label })).status).toBe(201)
    expect(await stateOf([bare.id, below.id])).toEqual({ [bare.id]: 'disabled', [below.id]: 'ok' })
    const ip = `203.0.113.${Math.floor(Math.random() * 250) + 1}`
    const exact = await insertLink(kit, null, `http://${ip}/x`)
    const ban = await admin('POST', '/hosts', { host: ip })
    expect([201, 200], show(ban)).toContain(ban.status)
    expect(await stateOf([exact.id])).toEqual({ [exact.id]: 'disabled' })
  })

  test('banning again answers 200 and keeps the first ban as it was', async () => {
    const host = `${unique()}.example`
    const first = await admin('POST', '/hosts', { host, reason: 'first' })
    expect(first.status, show(first)).toBe(201)
    const again = await admin('POST', '/hosts', { host, reason: 'second' })
    expect(again.status, show(again)).toBe(200)
    expect(again.body.data.host).toEqual(first.body.data.host)
    expect(again.body.data.host.reason).toBe('first')
  })

  test('not a host (a URL, a path, spaces, a port, blank) is 400 VALIDATION_FAILED and bans nothing', async () => {
    const host = `${unique()}.example`
    const before = await kit.api.deps.db.select().from(bannedHosts)
    for (const text of [`https://${host}/`, `${host}/path`, `${host} x`, ' ', `${host}:8080`]) {
      const res = await admin('POST', '/hosts', { host: text })
      expect(res.status, `${text}: ${show(res)}`).toBe(400)
      expect(res.body.error).toBe('VALIDATION_FAILED')
    }
    expect(await kit.api.deps.db.select().from(bannedHosts)).toEqual(before)
  })
})

describe('GET and DELETE /api/v1/admin/hosts', () => {
  test('listed newest first; unbanning removes the ban, keeps its links disabled, is audited; a host not banned is 404 HOST_NOT_BANNED', async () => {
    const host = `${unique()}.example`
    const link = await insertLink(kit, null, `https://${host}/`)
    expect((await admin('POST', '/hosts', { host })).status).toBe(201)
    const listed = await admin('GET', '/hosts?limit=1')
    expect(listed.status, show(listed)).toBe(200)
    expect(listed.body.data.hosts.map((h: { host: string }) => h.host)).toEqual([host])
    expect(listed.body.data.next_cursor).not.toBeNull()
    const unbanned = await admin('DELETE', `/hosts/${host.toUpperCase()}`, { reason: 'the site was cleaned' })
    expect(unbanned.status, show(unbanned)).toBe(200)
    expect(unbanned.body.data.host.host).toBe(host)
    expect(await kit.api.deps.db.select().from(bannedHosts).where(eq(bannedHosts.host, host))).toEqual([])
    expect(await stateOf([link.id])).toEqual({ [link.id]: 'disabled' })
    const audit = (await admin('GET', '/actions?limit=10')).body.data.actions
    expect(audit.find((a: { target: string; action: string }) => a.target === host && a.action === 'host.unban')).toMatchObject({ reason: 'the site was cleaned' })
    const again = await admin('DELETE', `/hosts/${host}`)
    expect(again.status, show(again)).toBe(404)
    expect(again.body.error).toBe('HOST_NOT_BANNED')
  })
})
