// PATCH /api/v1/domains/{hostname}: where a custom domain's root (`/`) leads. Set, listed, handed to
// redirectors through /internal/domains and announced; cleared with null; refused when it is not a web
// address or would lead back to a host served here; another account's domain is not found; an Agent
// needs domains:write, and its change waits for a human like every other domain change.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DOMAIN_CHANNEL } from '../../../core/link-cache'
import { call, show, TEST_INTERNAL_SECRET } from '../../../test/support/api'
import { agentToken, newAccount, newDomain } from '../../../test/support/fixtures'
import { until } from '../../../test/support/wait'
import { api, app, domainRow, published, setUp, tearDown } from '../../../test/support/suites/domains'

beforeAll(setUp)
afterAll(tearDown)

const internalDomains = async () => (await call(app, 'GET', '/internal/domains', { headers: { 'x-internal-secret': TEST_INTERNAL_SECRET } })).body

describe('PATCH /api/v1/domains/{hostname}', () => {
  test('sets the root URL (normalised), lists it, hands it to redirectors and announces it; null clears it', async () => {
    const account = await newAccount(api.deps.db)
    const hostname = await newDomain(api.deps.db, account.id)
    const before = published.length
    const set = await call(app, 'PATCH', `/api/v1/domains/${hostname.toUpperCase()}`, { token: account.key, body: { root_url: '  https://Example.com/welcome?from=short ' } })
    expect(set.status, show(set)).toBe(200)
    expect(set.body.data, show(set)).toMatchObject({ hostname, verified: true, root_url: 'https://example.com/welcome?from=short' })
    expect(set.body.meta.usage, show(set)).toMatchObject({ domains: 1 })
    await until(() => published.slice(before).some((p) => p.channel === DOMAIN_CHANNEL && p.message === hostname), 'the change announced')
    expect((await internalDomains()).root_urls[hostname]).toBe('https://example.com/welcome?from=short')
    const listed = await call(app, 'GET', '/api/v1/domains', { token: account.key })
    expect(listed.body.data.domains[0].root_url, show(listed)).toBe('https://example.com/welcome?from=short')

    const cleared = await call(app, 'PATCH', `/api/v1/domains/${hostname}`, { token: account.key, body: { root_url: null } })
    expect(cleared.status, show(cleared)).toBe(200)
    expect(cleared.body.data.root_url, show(cleared)).toBeNull()
    const after = await internalDomains()
    expect(after.domains).toContain(hostname)
    expect(after.root_urls[hostname]).toBeUndefined()
  })

  test('an unverified domain keeps its root URL for when it is verified; redirectors do not see it yet', async () => {
    const account = await newAccount(api.deps.db)
    const hostname = await newDomain(api.deps.db, account.id, { verified: false })
    const res = await call(app, 'PATCH', `/api/v1/domains/${hostname}`, { token: account.key, body: { root_url: 'https://example.com/' } })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data, show(res)).toMatchObject({ verified: false, root_url: 'https://example.com/' })
    expect((await internalDomains()).root_urls[hostname]).toBeUndefined()
  })

  test('bad input: a clear 400 with the field named, and the stored root URL unchanged', async () => {
    const account = await newAccount(api.deps.db)
    const hostname = await newDomain(api.deps.db, account.id)
    const other = await newDomain(api.deps.db, (await newAccount(api.deps.db)).id)
    await call(app, 'PATCH', `/api/v1/domains/${hostname}`, { token: account.key, body: { root_url: 'https://example.com/kept' } })
    const cases: [unknown, string][] = [
      [{ root_url: 'not a url' }, 'INVALID_URL'],
      [{ root_url: 'javascript:alert(1)' }, 'INVALID_URL'],
      [{ root_url: `https://example.com/${'a'.repeat(2100)}` }, 'VALIDATION_FAILED'],
      [{ root_url: `https://${hostname}/` }, 'DESTINATION_LOOPS'],
      [{ root_url: `https://${other}/x` }, 'DESTINATION_LOOPS'],
      [{ root_url: 'http://sho.rt/abcd' }, 'DESTINATION_LOOPS'],
      [{ root_url: 'http://127.0.0.1:3000/' }, 'DESTINATION_LOOPS'],
      [{ root_url: 42 }, 'VALIDATION_FAILED'],
      [{}, 'VALIDATION_FAILED'],
    ]
    for (const [body, code] of cases) {
      const res = await call(app, 'PATCH', `/api/v1/domains/${hostname}`, { token: account.key, body })
      expect(res.status, `${JSON.stringify(body).slice(0, 80)}: ${show(res)}`).toBe(400)
      expect(res.body.error, show(res)).toBe(code)
      if (code !== 'VALIDATION_FAILED') expect(res.body.hint, show(res)).toStartWith('root_url ')
    }
    expect((await domainRow(hostname))?.rootUrl).toBe('https://example.com/kept')
  })

  test("security: another account's domain is 404 and unchanged; a guest token is refused", async () => {
    const [owner, other] = [await newAccount(api.deps.db), await newAccount(api.deps.db)]
    const hostname = await newDomain(api.deps.db, owner.id)
    const res = await call(app, 'PATCH', `/api/v1/domains/${hostname}`, { token: other.key, body: { root_url: 'https://evil.example.net/' } })
    expect(res.status, show(res)).toBe(404)
    expect(res.body.error, show(res)).toBe('DOMAIN_NOT_FOUND')
    expect((await domainRow(hostname))?.rootUrl).toBeNull()
    const guest = (await call(app, 'POST', '/api/v1/guest/token')).body.data.guest_token as string
    const asGuest = await call(app, 'PATCH', `/api/v1/domains/${hostname}`, { token: guest, body: { root_url: 'https://evil.example.net/' } })
    expect([401, 403], show(asGuest)).toContain(asGuest.status)
    expect((await domainRow(hostname))?.rootUrl).toBeNull()
  })

  test('an Agent: domains:read is not enough; with domains:write the change waits for a human (dry_run refused, not ignored)', async () => {
    const human = await newAccount(api.deps.db)
    const hostname = await newDomain(api.deps.db, human.id)
    const reader = await agentToken(app, human, ['domains:read'])
    const read = await call(app, 'PATCH', `/api/v1/domains/${hostname}`, { token: reader.token, body: { root_url: 'https://example.com/' } })
    expect(read.status, show(read)).toBe(403)
    expect(read.body.error, show(read)).toBe('INSUFFICIENT_SCOPE')

    const writer = await agentToken(app, human, ['domains:write'])
    const dry = await call(app, 'PATCH', `/api/v1/domains/${hostname}?dry_run=true`, { token: writer.token, body: { root_url: 'https://example.com/' } })
    expect(dry.status, show(dry)).toBe(400)
    const held = await call(app, 'PATCH', `/api/v1/domains/${hostname}`, { token: writer.token, body: { root_url: 'https://example.com/agent' } })
    expect(held.status, show(held)).toBe(202)
    expect(held.body.data.approval, show(held)).toBeDefined()
    expect((await domainRow(hostname))?.rootUrl).toBeNull()
  })
})
