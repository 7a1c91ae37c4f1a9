// GET /tls/ask?domain=, Caddy's on-demand TLS question: 200 for the default short domain and verified
// custom domains (whatever the case, port or trailing dot), 404 for everything else; answers cached
// briefly and dropped at once when a domain changes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { DOMAIN_CHANNEL } from '../../../core/link-cache'
import { domains } from '../../db/schema'
import { call, show, testApi, testConfig, type TestApp } from '../../../test/support/api'
import { newAccount, newDomain } from '../../../test/support/fixtures'
import { until } from '../../../test/support/wait'
import { addDomain, api, app, dns, setUp, tearDown, uniqueHost } from '../../../test/support/suites/domains'
import type { Kv } from '../../adapters/ports'
import { announce } from './service'
import { ANSWER_TTL_MS, askedHost, servedHosts } from './tls-ask'

beforeAll(setUp)
afterAll(tearDown)

const ask = (domain: string, target: TestApp = app) => call(target, 'GET', `/tls/ask?domain=${encodeURIComponent(domain)}`)

describe('GET /tls/ask', () => {
  test("200 for a verified custom domain and for the service's own hosts, in any case, with a port or a trailing dot", async () => {
    const account = await newAccount(api.deps.db)
    const added = await addDomain(account, uniqueHost('tls'))
    dns.setTxt(added.verification.name, [added.verification.value])
    const verified = await call(app, 'POST', `/api/v1/domains/${added.hostname}/verify`, { token: account.key })
    expect(verified.status, show(verified)).toBe(200)

    for (const spelling of [added.hostname, added.hostname.toUpperCase(), `${added.hostname}.`, `${added.hostname}:443`]) {
      const res = await ask(spelling)
      expect(res.status, `${spelling}: ${show(res)}`).toBe(200)
      expect(res.body, `${spelling}: ${show(res)}`).toEqual({ success: true, data: { domain: added.hostname } })
      expect(res.headers.get('cache-control')).toBe('no-store')
    }
    // The suite's SHORT_DOMAIN is sho.rt (and its short URL https://sho.rt), its API https://api.sho.rt.
    for (const [spelling, served] of [
      ['sho.rt', 'sho.rt'],
      ['SHO.RT.', 'sho.rt'],
      ['sho.rt:8443', 'sho.rt'],
      ['api.sho.rt', 'api.sho.rt'],
    ]) {
      const res = await ask(spelling!)
      expect(res.status, `${spelling}: ${show(res)}`).toBe(200)
      expect(res.body.data.domain, show(res)).toBe(served)
    }
  })

  test('404 DOMAIN_NOT_FOUND for an unverified, a removed or an unknown host, an IP literal and a malformed value', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const pending = await addDomain(account, uniqueHost('pending'))
    const removed = await newDomain(api.deps.db, account.id)
    expect((await ask(removed)).status, 'verified before its removal').toBe(200)
    const deleted = await call(app, 'DELETE', `/api/v1/domains/${removed}`, { token: account.key })
    expect(deleted.status, show(deleted)).toBe(200)
    const verified = await newDomain(api.deps.db, account.id)

    const refused = [
      pending.hostname,
      removed,
      uniqueHost('unknown'),
      `www.${verified}`,
      'www.sho.rt',
      '127.0.0.1',
      '127.0.0.1:443',
      '[::1]',
      '::1',
      '[::1]:443',
      '0x7f.1',
      '',
      ' ',
      'not a host',
      'https://sho.rt/',
      'links.example.com/path',
      'localhost',
      `${'x'.repeat(300)}.example.com`,
    ]
    for (const domain of refused) {
      const res = await ask(domain)
      expect(res.status, `${JSON.stringify(domain)}: ${show(res)}`).toBe(404)
      expect(res.body, `${JSON.stringify(domain)}: ${show(res)}`).toMatchObject({ success: false, error: 'DOMAIN_NOT_FOUND', hint: expect.any(String), meta: {} })
    }
  })

  test('400 VALIDATION_FAILED without the domain parameter', async () => {
    const res = await call(app, 'GET', '/tls/ask')
    expect(res.status, show(res)).toBe(400)
    expect(res.body.error, show(res)).toBe('VALIDATION_FAILED')
  })

  test('security: an unverified claim gets the very answer an unknown name gets; a credential changes nothing', async () => {
    const [owner, other] = [await newAccount(api.deps.db), await newAccount(api.deps.db)]
    const claimed = await addDomain(owner, uniqueHost('claimed'))
    const unknown = uniqueHost('nobody')
    const claimedAnswer = await ask(claimed.hostname)
    const unknownAnswer = await ask(unknown)
    expect(claimedAnswer.status, show(claimedAnswer)).toBe(404)
    expect(claimedAnswer.text, 'nothing tells a claimed name from an unknown one').toBe(unknownAnswer.text)
    // The owner's own key does not make a pending domain served, nor another account's key a verified one unserved.
    const withKey = await call(app, 'GET', `/tls/ask?domain=${claimed.hostname}`, { token: owner.key })
    expect(withKey.status, show(withKey)).toBe(404)
    const verified = await newDomain(api.deps.db, owner.id)
    const foreignKey = await call(app, 'GET', `/tls/ask?domain=${verified}`, { token: other.key })
    expect(foreignKey.status, show(foreignKey)).toBe(200)
  })

  test('an IP address as SHORT_DOMAIN is still refused: certificates are for names', async () => {
    const byAddress = (await testApi({ config: testConfig({ SHORT_DOMAIN: '127.0.0.1:8080', SHORT_BASE_URL: 'http://127.0.0.1:8080' }) })).app
    const res = await ask('127.0.0.1', byAddress)
    expect(res.status, show(res)).toBe(404)
    const named = (await testApi({ config: testConfig({ SHORT_DOMAIN: 'go.example.net', SHORT_BASE_URL: 'https://go.example.net', PUBLIC_API_URL: 'https://links.example.net' }) })).app
    expect((await ask('go.example.net', named)).status).toBe(200)
    expect((await ask('links.example.net', named)).status).toBe(200)
    expect((await ask('sho.rt', named)).status, "another instance's short domain").toBe(404)
  })
})

describe('servedHosts: the answers behind /tls/ask', () => {
  test('an answer is reused until it expires; a change announced by another process drops it at once', async () => {
    let clock = Date.now()
    const hosts = servedHosts({ ...api.deps, now: () => clock })
    await hosts.ready
    const account = await newAccount(api.deps.db, 'pro')
    const host = await newDomain(api.deps.db, account.id)
    expect(await hosts.served(host)).toBe(host)

    // Removed behind its back (no announcement): the cached answer stands until its TTL is over.
    await api.deps.db.delete(domains).where(eq(domains.hostname, host))
    expect(await hosts.served(host), 'cached').toBe(host)
    clock += ANSWER_TTL_MS + 1
    expect(await hosts.served(host), 'expired').toBeNull()

    // A change announced by another process arrives through pub/sub and drops the answer at once.
    const other = await newDomain(api.deps.db, account.id)
    expect(await hosts.served(other)).toBe(other)
    await api.deps.db.delete(domains).where(eq(domains.hostname, other))
    expect(await hosts.served(other), 'cached until the announcement').toBe(other)
    await api.adapters.kv.publish(DOMAIN_CHANNEL, other)
    await until(async () => (await hosts.served(other)) === null, 'the answer dropped on the announcement')
  })

  test('a change made in this process drops the answer before it is published (pub/sub may come later)', async () => {
    const real = api.adapters.kv
    // A store whose publish reaches nobody: only the local drop can clear the answer.
    const silent: Kv = {
      get: (key) => real.get(key),
      set: (key, value, ttl) => real.set(key, value, ttl),
      del: (key) => real.del(key),
      subscribe: (channel, onMessage, onReset) => real.subscribe(channel, onMessage, onReset),
      publish: async () => {},
      close: async () => {},
    }
    const hosts = servedHosts({ ...api.deps, kv: silent, now: Date.now })
    await hosts.ready
    const account = await newAccount(api.deps.db)
    const host = await newDomain(api.deps.db, account.id)
    expect(await hosts.served(host)).toBe(host)
    await api.deps.db.delete(domains).where(eq(domains.hostname, host))
    expect(await hosts.served(host), 'cached').toBe(host)
    await announce({ kv: silent, counters: { cacheWriteFailures: 0, aliasCollisions: 0, invalidPixels: 0, reportsFiled: 0, linkStates: { flagged: 0, disabled: 0, ok: 0 } } }, host)
    expect(await hosts.served(host), 'dropped by the announcement in this process').toBeNull()
  })

  test('concurrent asks for one name share one lookup', async () => {
    const account = await newAccount(api.deps.db)
    const host = await newDomain(api.deps.db, account.id)
    let queries = 0
    const counted = new Proxy(api.deps.db, {
      get(target, key, receiver) {
        if (key === 'select') queries++
        return Reflect.get(target, key, receiver)
      },
    })
    const shared = servedHosts({ ...api.deps, db: counted, now: Date.now })
    await shared.ready
    const answers = await Promise.all(Array.from({ length: 20 }, () => shared.served(host)))
    expect(answers).toEqual(Array(20).fill(host))
    expect(queries, 'one query for 20 concurrent asks').toBe(1)
  })
})

describe('askedHost', () => {
  test('drops a port, the case and trailing dots; refuses IP literals and nothing', () => {
    expect(askedHost(' Links.Example.COM.:443 ')).toBe('links.example.com')
    expect(askedHost('links.example.com')).toBe('links.example.com')
    for (const literal of ['10.0.0.1', '10.0.0.1:80', '::1', '[::1]', '[2001:db8::1]:443', '', ':443']) expect(askedHost(literal), literal).toBeNull()
  })
})
