// POST /api/v1/domains/{hostname}/verify against a real DNS server on loopback (dns2), whose TXT records
// the tests set: missing, wrong and right records, failing and silent DNS, another account's domain.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DOMAIN_CHANNEL } from '../../../core/link-cache'
import { call, show } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { until, within } from '../../../test/support/wait'
import { addDomain, api, app, dns, domainRow, published, setUp, tearDown, uniqueHost } from '../../../test/support/suites/domains'

beforeAll(setUp)
afterAll(tearDown)

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
    await until(() => published.slice(before).some((p) => p.channel === DOMAIN_CHANNEL && p.message === hostname), 'the verified domain announced')

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
    // The suite's lookup budget is 0.4 s; a silent server would otherwise hold the request for as long
    // as c-ares' own retries last (far past the deadline).
    const timedOut = await within(call(app, 'POST', `/api/v1/domains/${slow.hostname}/verify`, { token: account.key }), 'verify with silent DNS')
    expect(timedOut.status, show(timedOut)).toBe(503)
    expect(timedOut.body.error, show(timedOut)).toBe('SERVICE_UNAVAILABLE')
    expect(timedOut.headers.get('retry-after'), show(timedOut)).toBe('5')
    expect((await domainRow(slow.hostname))?.verifiedAt).toBeNull()
  })

  test("security: another account's domain is 404 even with its record in DNS, and stays unverified", async () => {
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
