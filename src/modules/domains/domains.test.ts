// The domains endpoints against a real DNS server on loopback (dns2), whose TXT records the tests set.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { DOMAIN_CHANNEL, INVALIDATION_CHANNEL, linkCacheKey } from '../../core/link-cache'
import { domains, links } from '../../db/schema'
import { startTestDnsServer, type TestDnsServer } from '../../../test/support/dns'
import { call, newGuestToken, show, testApi, testConfig, TEST_INTERNAL_SECRET, type TestApp } from '../../../test/support/api'
import { newAccount, newLink, type TestAccount } from '../../../test/support/fixtures'
import { PENDING_CLAIM_TTL_MS } from './service'

let dns: TestDnsServer
let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
const published: { channel: string; message: string }[] = []
const unsubscribe: (() => Promise<void>)[] = []

beforeAll(async () => {
  dns = await startTestDnsServer()
  api = await testApi({ config: testConfig({ DNS_SERVERS: dns.server, DNS_TIMEOUT_MS: '400' }) })
  app = api.app
  for (const channel of [DOMAIN_CHANNEL, INVALIDATION_CHANNEL]) {
    unsubscribe.push(await api.adapters.kv.subscribe(channel, (message) => published.push({ channel, message })))
  }
})

afterAll(async () => {
  for (const stop of unsubscribe) await stop()
  await dns.close()
})

/** A host name no other test (or earlier run against the same Postgres) has used. */
const uniqueHost = (label = 'links') => `${label}-${crypto.randomUUID().slice(0, 8)}.example.com`

async function addDomain(account: TestAccount, hostname: string, target: TestApp = app) {
  const res = await call(target, 'POST', '/api/v1/domains', { token: account.key, body: { hostname } })
  if (res.status !== 201) throw new Error(`add domain: ${show(res)}`)
  return res.body.data as { hostname: string; verification: { type: string; name: string; value: string } }
}

async function domainRow(hostname: string) {
  const [row] = await api.deps.db.select().from(domains).where(eq(domains.hostname, hostname))
  return row
}

async function eventually(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const started = Date.now()
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`not true within ${timeoutMs} ms`)
    await Bun.sleep(10)
  }
}

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
    const results = await Promise.all(
      Array.from({ length: 14 }, () => call(app, 'POST', '/api/v1/domains', { token: pro.key, body: { hostname: uniqueHost('pro') } })),
    )
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

describe('POST /api/v1/domains/{hostname}/verify', () => {
  test('400 DOMAIN_NOT_VERIFIED shows what to create; with the record in DNS: 200 verified, announced to redirectors', async () => {
    const account = await newAccount(api.deps.db)
    const hostname = uniqueHost('verify')
    const added = await addDomain(account, hostname)
    const path = `/api/v1/domains/${hostname}/verify`

    const missing = await call(app, 'POST', path, { token: account.key })
    expect(missing.status, show(missing)).toBe(400)
    expect(missing.body.error, show(missing)).toBe('DOMAIN_NOT_VERIFIED')
    expect(missing.body.hint, show(missing)).toContain(`_linkservice.${hostname}`)
    expect(missing.body.hint, show(missing)).toContain(added.verification.value)
    expect(missing.body.data, show(missing)).toEqual({ expected: added.verification, found: [] })

    dns.setTxt(added.verification.name, ['google-site-verification=abc', 'link-service-verification=wrong'])
    const wrong = await call(app, 'POST', path, { token: account.key })
    expect(wrong.status, show(wrong)).toBe(400)
    expect(wrong.body.hint, show(wrong)).toContain('none with that value')
    expect(wrong.body.data.found.sort(), show(wrong)).toEqual(['google-site-verification=abc', 'link-service-verification=wrong'])

    dns.setTxt(added.verification.name, ['google-site-verification=abc', added.verification.value])
    const before = published.length
    const ok = await call(app, 'POST', `/api/v1/domains/${hostname.toUpperCase()}/verify`, { token: account.key })
    expect(ok.status, show(ok)).toBe(200)
    const verifiedAt: string = ok.body.data.verified_at
    expect(Date.parse(verifiedAt), show(ok)).toBeGreaterThan(Date.now() - 60_000)
    expect(ok.body.data, show(ok)).toMatchObject({ hostname, verified: true })
    expect(ok.body.meta.account_type, show(ok)).toBe('free')
    await eventually(() => published.slice(before).some((p) => p.channel === DOMAIN_CHANNEL && p.message === hostname))

    // Verified stays verified, without another lookup.
    const asked = dns.questions.length
    dns.setTxt(added.verification.name, null)
    const again = await call(app, 'POST', path, { token: account.key })
    expect(again.status, show(again)).toBe(200)
    expect(again.body.data.verified_at, show(again)).toBe(verifiedAt)
    expect(dns.questions.length).toBe(asked)
    const listed = await call(app, 'GET', '/api/v1/domains', { token: account.key })
    expect(listed.body.data.domains[0].verified, show(listed)).toBe(true)
  })

  test('a failing DNS server of the domain is 400 with its error; a DNS lookup that times out is 503', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const broken = await addDomain(account, uniqueHost('servfail'))
    dns.fail(broken.verification.name, 'servfail')
    const res = await call(app, 'POST', `/api/v1/domains/${broken.hostname}/verify`, { token: account.key })
    expect(res.status, show(res)).toBe(400)
    expect(res.body, show(res)).toMatchObject({ error: 'DOMAIN_NOT_VERIFIED', data: { dns_error: 'ESERVFAIL' } })

    const slow = await addDomain(account, uniqueHost('slow'))
    dns.fail(slow.verification.name, 'silent')
    const started = performance.now()
    const timedOut = await call(app, 'POST', `/api/v1/domains/${slow.hostname}/verify`, { token: account.key })
    expect(timedOut.status, show(timedOut)).toBe(503)
    expect(timedOut.body.error, show(timedOut)).toBe('SERVICE_UNAVAILABLE')
    expect(timedOut.headers.get('retry-after'), show(timedOut)).toBe('5')
    expect(performance.now() - started).toBeLessThan(2000)
    expect((await domainRow(slow.hostname))?.verifiedAt).toBeNull()
  })

  test('security: another account\'s domain is 404 even with its record in DNS, and stays unverified', async () => {
    const [owner, other] = [await newAccount(api.deps.db), await newAccount(api.deps.db)]
    const added = await addDomain(owner, uniqueHost('foreign'))
    dns.setTxt(added.verification.name, [added.verification.value])
    const res = await call(app, 'POST', `/api/v1/domains/${added.hostname}/verify`, { token: other.key })
    expect(res.status, show(res)).toBe(404)
    expect(res.body.error, show(res)).toBe('DOMAIN_NOT_FOUND')
    expect((await domainRow(added.hostname))?.verifiedAt).toBeNull()
    const unknown = await call(app, 'POST', `/api/v1/domains/${uniqueHost()}/verify`, { token: other.key })
    expect(unknown.status, show(unknown)).toBe(404)
    const invalid = await call(app, 'POST', '/api/v1/domains/127.0.0.1/verify', { token: other.key })
    expect(invalid.body.error, show(invalid)).toBe('INVALID_DOMAIN')
  })
})

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
    await eventually(() => published.slice(before).some((p) => p.channel === DOMAIN_CHANNEL && p.message === added.hostname))
    await eventually(() => published.slice(before).filter((p) => p.channel === INVALIDATION_CHANNEL && p.message.startsWith(`link:${added.hostname}:`)).length === 2)

    const again = await call(app, 'DELETE', `/api/v1/domains/${added.hostname}`, { token: account.key })
    expect(again.status, show(again)).toBe(404)
    expect(again.body.error, show(again)).toBe('DOMAIN_NOT_FOUND')
    // The slot is free again.
    await addDomain(account, uniqueHost())
  })

  test('security: another account\'s domain is 404 and keeps its links', async () => {
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

describe('GET /internal/domains', () => {
  test('lists verified domains only, for the redirector; needs the internal secret', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const verified = await addDomain(account, uniqueHost('listed'))
    const pending = await addDomain(account, uniqueHost('pending'))
    dns.setTxt(verified.verification.name, [verified.verification.value])
    expect((await call(app, 'POST', `/api/v1/domains/${verified.hostname}/verify`, { token: account.key })).status).toBe(200)
    const res = await call(app, 'GET', '/internal/domains', { headers: { 'x-internal-secret': TEST_INTERNAL_SECRET } })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.domains, show(res)).toContain(verified.hostname)
    expect(res.body.domains, show(res)).not.toContain(pending.hostname)
    expect(res.headers.get('cache-control'), show(res)).toBe('no-store')
    for (const headers of [{}, { 'x-internal-secret': 'wrong' }, { authorization: `Bearer ${account.key}` }] as Record<string, string>[]) {
      const refused = await call(app, 'GET', '/internal/domains', { headers })
      expect(refused.status, show(refused)).toBe(401)
      expect(refused.text, show(refused)).not.toContain(verified.hostname)
    }
  })

  test('is not in the public OpenAPI document; the domain and tag routes are, with examples and error responses', async () => {
    const doc = (await call(app, 'GET', '/swagger/json')).body
    expect(Object.keys(doc.paths).filter((p: string) => p.startsWith('/internal'))).toEqual([])
    const routes: [string, string, string][] = [
      ['get', '/api/v1/domains', '200'],
      ['post', '/api/v1/domains', '201'],
      ['post', '/api/v1/domains/{hostname}/verify', '200'],
      ['delete', '/api/v1/domains/{hostname}', '200'],
      ['get', '/api/v1/tags', '200'],
      ['post', '/api/v1/tags', '201'],
      ['delete', '/api/v1/tags/{tagId}', '200'],
      ['get', '/api/v1/links/{alias}/tags', '200'],
      ['post', '/api/v1/links/{alias}/tags', '201'],
      ['delete', '/api/v1/links/{alias}/tags/{tagId}', '200'],
    ]
    const schemaOf = (ref: string) => doc.components.schemas[ref.split('/').pop()!]
    for (const [method, path, ok] of routes) {
      const op = doc.paths[path]?.[method]
      const where = `${method} ${path}`
      expect(op, where).toBeDefined()
      expect(op.tags?.length, where).toBeGreaterThan(0)
      expect(typeof op.summary, where).toBe('string')
      expect(op.security, where).toEqual([{ bearerAuth: [] }])
      for (const status of ['401', '429']) expect(op.responses[status].content['application/json'].schema.$ref, `${where} ${status}`).toBe('#/components/schemas/ErrorResponse')
      expect(schemaOf(op.responses[ok].content['application/json'].schema.$ref).examples.length, where).toBeGreaterThan(0)
      if (method === 'post' && !path.endsWith('/verify')) {
        expect(schemaOf(op.requestBody.content['application/json'].schema.$ref).examples.length, `${where} body`).toBeGreaterThan(0)
        expect(op.responses['400'], where).toBeDefined()
      }
    }
    expect(doc.components.schemas.ErrorResponse.properties.error.enum).toEqual(expect.arrayContaining(['DOMAIN_NOT_VERIFIED', 'DOMAIN_LIMIT_REACHED', 'TAG_LIMIT_REACHED']))
  })
})
