// DELETE /api/v1/domains/{hostname}: the domain goes with its links and their cache records, and the
// redirectors are told; another account's domain is untouched.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { DOMAIN_CHANNEL, INVALIDATION_CHANNEL, linkCacheKey } from '../../../core/link-cache'
import { links } from '../../db/schema'
import { call, show } from '../../../test/support/api'
import { newAccount, newLink } from '../../../test/support/fixtures'
import { until } from '../../../test/support/wait'
import { addDomain, api, app, dns, domainRow, published, setUp, tearDown, uniqueHost } from '../../../test/support/suites/domains'

beforeAll(setUp)
afterAll(tearDown)

describe('DELETE /api/v1/domains/{hostname}', () => {
  test('removes the domain and its links, drops their cache records and tells redirectors', async () => {
    const account = await newAccount(api.deps.db)
    const added = await addDomain(account, uniqueHost('bye'))
    dns.setTxt(added.verification.name, [added.verification.value])
    expect((await call(app, 'POST', `/api/v1/domains/${added.hostname}/verify`, { token: account.key })).status).toBe(200)
    const onDomain = [await newLink(api.deps.db, account.id, added.hostname, 'a'), await newLink(api.deps.db, account.id, added.hostname, 'b')]
    const elsewhere = await newLink(api.deps.db, account.id, 'sho.rt')
    for (const link of onDomain) await api.adapters.kv.set(linkCacheKey(link.domain, link.alias), '{"v":1}', 60)
    const before = published.length

    const res = await call(app, 'DELETE', `/api/v1/domains/${added.hostname}`, { token: account.key })
    expect(res.status, show(res)).toBe(200)
    expect(res.body, show(res)).toMatchObject({
      success: true,
      message: `Domain ${added.hostname} removed with its 2 links.`,
      data: { links_deleted: 2 },
      meta: { account_type: 'free', usage: { domains: 0, domains_limit: 1, domains_remaining: 1 } },
    })
    expect(Object.keys(res.body.data)).toEqual(['links_deleted'])
    expect(await domainRow(added.hostname)).toBeUndefined()
    expect(await api.deps.db.select().from(links).where(eq(links.domain, added.hostname))).toEqual([])
    expect(await api.deps.db.select().from(links).where(eq(links.id, elsewhere.id))).toHaveLength(1)
    for (const link of onDomain) expect(await api.adapters.kv.get(linkCacheKey(link.domain, link.alias))).toBeNull()
    await until(() => published.slice(before).some((p) => p.channel === DOMAIN_CHANNEL && p.message === added.hostname), 'the removal announced')
    await until(() => published.slice(before).filter((p) => p.channel === INVALIDATION_CHANNEL && p.message.startsWith(`link:${added.hostname}:`)).length === 2, 'both links of the domain invalidated')

    const again = await call(app, 'DELETE', `/api/v1/domains/${added.hostname}`, { token: account.key })
    expect(again.status, show(again)).toBe(404)
    expect(again.body.error, show(again)).toBe('DOMAIN_NOT_FOUND')
    // The slot is free again.
    await addDomain(account, uniqueHost())
  })

  test("security: another account's domain is 404 and keeps its links", async () => {
    const [owner, other] = [await newAccount(api.deps.db), await newAccount(api.deps.db)]
    const added = await addDomain(owner, uniqueHost('keep'))
    const link = await newLink(api.deps.db, owner.id, added.hostname, 'k')
    const res = await call(app, 'DELETE', `/api/v1/domains/${added.hostname}`, { token: other.key })
    expect(res.status, show(res)).toBe(404)
    expect(res.body.error, show(res)).toBe('DOMAIN_NOT_FOUND')
    expect(await domainRow(added.hostname)).toBeDefined()
    expect(await api.deps.db.select().from(links).where(eq(links.id, link.id))).toHaveLength(1)
  })
})
