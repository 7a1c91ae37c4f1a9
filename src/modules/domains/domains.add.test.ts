// POST and GET /api/v1/domains: adding a custom domain (limits, names taken, stale claims) and listing
// them; the DNS server on loopback is the one of test/support/suites/domains.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { domains } from '../../db/schema'
import { call, newGuestToken, show, testApi, testConfig } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { PENDING_CLAIM_TTL_MS } from './service'
import { addDomain, api, app, dns, domainRow, setUp, tearDown, uniqueHost } from '../../../test/support/suites/domains'

beforeAll(setUp)
afterAll(tearDown)

describe('POST /api/v1/domains', () => {
  test('201: the domain, unverified, with the TXT record to create; listed by GET with total and usage', async () => {
    const account = await newAccount(api.deps.db)
    const hostname = uniqueHost()
    const res = await call(app, 'POST', '/api/v1/domains', { token: account.key, body: { hostname: `  ${hostname.toUpperCase()}. ` } })
    expect(res.status, show(res)).toBe(201)
    const { data, meta } = res.body
    expect(data, show(res)).toEqual({
      hostname,
      verified: false,
      verification: { type: 'TXT', name: `_linkservice.${hostname}`, value: expect.stringMatching(/^link-service-verification=[A-Za-z0-9_-]{32}$/) },
      created_at: expect.any(String),
      verified_at: null,
      root_url: null,
      record_missing_since: null,
    })
    expect(meta, show(res)).toMatchObject({ account_type: 'free', usage: { domains: 1, domains_limit: 1, domains_remaining: 0 } })
    expect(meta.hint, show(res)).toContain(data.verification.value)
    expect(meta.upgrade.url, show(res)).toBe('https://api.sho.rt/api/v1/account/upgrade')

    const list = await call(app, 'GET', '/api/v1/domains', { token: account.key })
    expect(list.status, show(list)).toBe(200)
    expect(list.body, show(list)).toMatchObject({ success: true, data: { domains: [data], total: 1 }, meta: { account_type: 'free' } })
    const empty = await call(app, 'GET', '/api/v1/domains', { token: (await newAccount(api.deps.db)).key })
    expect(empty.body.data, show(empty)).toEqual({ domains: [], total: 0 })
  })

  test('international names are stored as punycode', async () => {
    const account = await newAccount(api.deps.db)
    const label = crypto.randomUUID().slice(0, 6)
    const added = await addDomain(account, `bücher-${label}.example`)
    expect(added.hostname).toBe(new URL(`http://bücher-${label}.example`).hostname)
    expect(added.hostname).toStartWith('xn--')
  })

  test('invalid and reserved host names are 400', async () => {
    const account = await newAccount(api.deps.db)
    const cases: [unknown, string][] = [
      [{ hostname: '127.0.0.1' }, 'INVALID_DOMAIN'],
      [{ hostname: 'links.example.com:8443' }, 'INVALID_DOMAIN'],
      [{ hostname: 'https://links.example.com/' }, 'INVALID_DOMAIN'],
      [{ hostname: 'localhost' }, 'INVALID_DOMAIN'],
      [{ hostname: 'sho.rt' }, 'DOMAIN_RESERVED'],
      [{ hostname: 'promo.SHO.RT' }, 'DOMAIN_RESERVED'],
      [{ hostname: 'api.sho.rt' }, 'DOMAIN_RESERVED'],
      [{ hostname: '' }, 'VALIDATION_FAILED'],
      [{}, 'VALIDATION_FAILED'],
      [{ hostname: 'x'.repeat(301) }, 'VALIDATION_FAILED'],
    ]
    for (const [body, code] of cases) {
      const res = await call(app, 'POST', '/api/v1/domains', { token: account.key, body })
      expect(res.status, `${JSON.stringify(body)}: ${show(res)}`).toBe(400)
      expect(res.body.error, `${JSON.stringify(body)}: ${show(res)}`).toBe(code)
    }
    expect((await call(app, 'GET', '/api/v1/domains', { token: account.key })).body.data.total).toBe(0)
  })

  test('Free has 1 domain, Pro 10: beyond is 403 DOMAIN_LIMIT_REACHED (with upgrade_url on Free)', async () => {
    const free = await newAccount(api.deps.db)
    await addDomain(free, uniqueHost())
    const refused = await call(app, 'POST', '/api/v1/domains', { token: free.key, body: { hostname: uniqueHost() } })
    expect(refused.status, show(refused)).toBe(403)
    expect(refused.body, show(refused)).toMatchObject({ error: 'DOMAIN_LIMIT_REACHED', limit: 1, remaining: 0, upgrade_url: 'https://api.sho.rt/api/v1/account/upgrade' })

    const pro = await newAccount(api.deps.db, 'pro')
    const results = await Promise.all(Array.from({ length: 14 }, () => call(app, 'POST', '/api/v1/domains', { token: pro.key, body: { hostname: uniqueHost('pro') } })))
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 201).length, statuses.join(',')).toBe(10)
    for (const r of results.filter((r) => r.status !== 201)) {
      expect(r.body, show(r)).toMatchObject({ error: 'DOMAIN_LIMIT_REACHED', limit: 10, remaining: 0 })
      expect(r.body.upgrade_url, show(r)).toBeUndefined()
    }
    expect(await api.deps.db.select().from(domains).where(eq(domains.accountId, pro.id))).toHaveLength(10)
  }, 30_000)

  test('a name already registered is 409 DOMAIN_TAKEN without saying by whom; a stale unverified claim is taken over', async () => {
    const [squatter, owner] = [await newAccount(api.deps.db), await newAccount(api.deps.db)]
    const hostname = uniqueHost('claimed')
    await addDomain(squatter, hostname)
    const mine = await call(app, 'POST', '/api/v1/domains', { token: squatter.key, body: { hostname } })
    expect(mine.status, show(mine)).toBe(409)
    expect(mine.body.error, show(mine)).toBe('DOMAIN_TAKEN')
    const taken = await call(app, 'POST', '/api/v1/domains', { token: owner.key, body: { hostname } })
    expect(taken.status, show(taken)).toBe(409)
    expect(taken.body.error, show(taken)).toBe('DOMAIN_TAKEN')
    expect(taken.text, show(taken)).not.toContain(squatter.id)
    expect(taken.text.toLowerCase(), show(taken)).not.toContain(`${squatter.id.toLowerCase()}@`)

    // 72 hours later the unverified claim no longer holds the name.
    const later = await testApi({ config: testConfig({ DNS_SERVERS: dns.server }), now: () => Date.now() + PENDING_CLAIM_TTL_MS + 60_000 })
    const takeover = await call(later.app, 'POST', '/api/v1/domains', { token: owner.key, body: { hostname } })
    expect(takeover.status, show(takeover)).toBe(201)
    expect((await domainRow(hostname))?.accountId).toBe(owner.id)
    const gone = await call(app, 'GET', '/api/v1/domains', { token: squatter.key })
    expect(gone.body.data.total, show(gone)).toBe(0)
  })

  test('a verified domain is never taken over', async () => {
    const [holder, other] = [await newAccount(api.deps.db), await newAccount(api.deps.db)]
    const hostname = uniqueHost('held')
    const added = await addDomain(holder, hostname)
    dns.setTxt(added.verification.name, [added.verification.value])
    expect((await call(app, 'POST', `/api/v1/domains/${hostname}/verify`, { token: holder.key })).status).toBe(200)
    const later = await testApi({ config: testConfig({ DNS_SERVERS: dns.server }), now: () => Date.now() + 365 * 86_400_000 })
    const res = await call(later.app, 'POST', '/api/v1/domains', { token: other.key, body: { hostname } })
    expect(res.status, show(res)).toBe(409)
    expect((await domainRow(hostname))?.accountId).toBe(holder.id)
  })

  test('security: guest tokens and missing tokens are 401 on every domain route', async () => {
    const guest = await newGuestToken(app)
    const routes: [string, string, unknown][] = [
      ['GET', '/api/v1/domains', undefined],
      ['POST', '/api/v1/domains', { hostname: uniqueHost() }],
      ['POST', '/api/v1/domains/links.example.com/verify', undefined],
      ['DELETE', '/api/v1/domains/links.example.com', undefined],
    ]
    for (const [method, path, body] of routes) {
      for (const token of [guest, undefined]) {
        const res = await call(app, method, path, { token, body })
        expect(res.status, `${method} ${path}: ${show(res)}`).toBe(401)
        expect(res.body.error, show(res)).toBe('UNAUTHORIZED')
      }
    }
  })
})
