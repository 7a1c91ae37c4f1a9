// Reports: anyone reports a link by its short URL; one open report per reporter and link; 5 an hour per
// address; a guest link reported from REPORTS_TO_FLAG networks is flagged (cache version 3, `st`) and a
// redirector of the release before is told it is not found; an account's link is left to operators.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { LINK_CACHE_VERSION_HEADER, decodeCachedLink, linkCacheKey } from '../../../core/link-cache'
import { links, reports } from '../../db/schema'
import { call, newGuestToken, show, testApi, testConfig, type TestApp } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { setLinkStates } from '../links/state'
import { createServices } from '../../services'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

beforeAll(async () => {
  api = await testApi({ config: testConfig({ REPORTS_TO_FLAG: '3' }) })
  app = api.app
}, 120_000)

/** An address of a /24 no other test uses. */
const freshIp = () => `${Math.floor(Math.random() * 90) + 11}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`

async function guestLink(): Promise<{ alias: string; shortUrl: string; id: string }> {
  const token = await newGuestToken(app)
  const made = await call(app, 'POST', '/api/v1/shorten', { token, body: { url: 'https://example.com/suspicious' } })
  if (made.status !== 200) throw new Error(show(made))
  const [row] = await api.deps.db.select().from(links).where(eq(links.alias, made.body.data.alias))
  return { alias: made.body.data.alias, shortUrl: made.body.data.short_url, id: row!.id }
}

const report = (url: string, ip: string, body: Record<string, unknown> = {}) => call(app, 'POST', '/api/v1/reports', { body: { url, reason: 'phishing', ...body }, ip })
const cached = async (alias: string) => decodeCachedLink((await api.adapters.kv.get(linkCacheKey('sho.rt', alias))) ?? '')

describe('POST /api/v1/reports', () => {
  test('201 with an id; the same reporter again is 200 with that id; nothing about the link leaks', async () => {
    const { shortUrl, id } = await guestLink()
    const ip = freshIp()
    const first = await report(shortUrl, ip, { details: 'asks for my bank password', email: 'me@example.com' })
    expect(first.status, show(first)).toBe(201)
    expect(first.body.data.id).toMatch(/^rep_/)
    const again = await report(shortUrl, ip)
    expect(again.status, show(again)).toBe(200)
    expect(again.body.data.id).toBe(first.body.data.id)
    const rows = await api.deps.db.select().from(reports).where(eq(reports.linkId, id))
    expect(rows).toHaveLength(1)
    expect(JSON.stringify(rows)).not.toContain(ip)
    expect(rows[0]).toMatchObject({ reason: 'phishing', details: 'asks for my bank password', email: 'me@example.com', status: 'open' })
  })

  test('refusals: an unknown reason, a bad e-mail, long details, not a URL (400); an unknown link (404)', async () => {
    const { shortUrl } = await guestLink()
    for (const [body, field] of [
      [{ reason: 'boring' }, 'body.reason'],
      [{ email: 'not-an-address' }, 'body.email'],
      [{ details: 'x'.repeat(2001) }, 'body.details'],
    ] as const) {
      const refused = await report(shortUrl, freshIp(), body)
      expect(refused.status, show(refused)).toBe(400)
      expect(refused.body.hint, show(refused)).toContain(field)
    }
    expect((await report('nonsense', freshIp())).status).toBe(400)
    expect((await report('https://sho.rt/no-such-link-here', freshIp())).status).toBe(404)
  })

  test('5 reports an hour from one address, then 429 with Retry-After', async () => {
    const ip = freshIp()
    for (let i = 0; i < 5; i++) {
      const { shortUrl } = await guestLink()
      expect((await report(shortUrl, ip)).status).toBe(201)
    }
    const { shortUrl } = await guestLink()
    const over = await report(shortUrl, ip)
    expect(over.status, show(over)).toBe(429)
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)
  })
})

describe('flagging a guest link', () => {
  test('reports from 3 distinct networks flag it: version 3 record with st, not found to a version 1 or 2 redirector; two reporters of one network do not', async () => {
    const { alias, shortUrl, id } = await guestLink()
    const net = freshIp().split('.').slice(0, 3).join('.')
    expect((await report(shortUrl, `${net}.1`)).status).toBe(201)
    expect((await report(shortUrl, `${net}.2`)).status).toBe(201)
    expect((await api.deps.db.select().from(links).where(eq(links.id, id)))[0]!.state, 'two reporters of one network').toBe('ok')
    expect((await report(shortUrl, freshIp())).status).toBe(201)
    expect((await api.deps.db.select().from(links).where(eq(links.id, id)))[0]!.state, 'two networks').toBe('ok')
    expect((await report(shortUrl, freshIp())).status).toBe(201)
    const [row] = await api.deps.db.select().from(links).where(eq(links.id, id))
    expect(row!.state).toBe('flagged')
    expect(await cached(alias)).toMatchObject({ v: 3, st: 'flagged' })
    const secret = { 'x-internal-secret': api.deps.config.internalSecret }
    const newer = await call(app, 'GET', `/internal/resolve?domain=sho.rt&alias=${alias}`, { headers: { ...secret, [LINK_CACHE_VERSION_HEADER]: '3' } })
    expect(newer.body, show(newer)).toMatchObject({ v: 3, st: 'flagged' })
    const routingEra = await call(app, 'GET', `/internal/resolve?domain=sho.rt&alias=${alias}`, { headers: { ...secret, [LINK_CACHE_VERSION_HEADER]: '2' } })
    expect(routingEra.status, show(routingEra)).toBe(404)
    const older = await call(app, 'GET', `/internal/resolve?domain=sho.rt&alias=${alias}`, { headers: secret })
    expect(older.status, show(older)).toBe(404)
  })

  test("an account's link is not flagged by reports (operators decide)", async () => {
    const account = await newAccount(api.deps.db)
    const made = await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: 'https://example.com/account-link' } })
    for (let i = 0; i < 4; i++) expect((await report(made.body.data.short_url, freshIp())).status).toBe(201)
    const [row] = await api.deps.db.select().from(links).where(eq(links.alias, made.body.data.alias))
    expect(row!.state).toBe('ok')
  })

  test('a report of a link already disabled is kept closed, out of the queue; one of a link in good standing stays open', async () => {
    const disabled = await guestLink()
    const open = await guestLink()
    await setLinkStates(createServices(api.deps), [disabled.id], 'disabled', 'test')
    const late = await report(disabled.shortUrl, freshIp())
    expect(late.status, show(late)).toBe(201)
    const fresh = await report(open.shortUrl, freshIp())
    expect(fresh.status, show(fresh)).toBe(201)
    const [lateRow] = await api.deps.db.select().from(reports).where(eq(reports.id, late.body.data.id))
    expect(lateRow).toMatchObject({ status: 'closed', resolution: 'already disabled' })
    const [freshRow] = await api.deps.db.select().from(reports).where(eq(reports.id, fresh.body.data.id))
    expect(freshRow).toMatchObject({ status: 'open', resolution: null })
  })
})

describe('link states and the internal endpoints', () => {
  test('disabling writes the record through (st disabled); restoring goes back to version 1', async () => {
    const { alias, id } = await guestLink()
    const services = createServices(api.deps)
    expect(await setLinkStates(services, [id], 'disabled', 'test')).toHaveLength(1)
    expect(await cached(alias)).toMatchObject({ v: 3, st: 'disabled' })
    expect(await setLinkStates(services, [id], 'disabled', 'again')).toHaveLength(0)
    await setLinkStates(services, [id], 'ok', null)
    const record = await cached(alias)
    expect(record).toMatchObject({ v: 1 })
    expect(record!.st).toBeUndefined()
  })

  test('/internal/inspect tells the destination (none for a password link), age, maker and state; /internal/report files a report', async () => {
    const { alias, id } = await guestLink()
    const secret = { 'x-internal-secret': api.deps.config.internalSecret }
    const inspect = await call(app, 'GET', `/internal/inspect?domain=sho.rt&alias=${alias}`, { headers: secret })
    expect(inspect.body, show(inspect)).toMatchObject({ url: 'https://example.com/suspicious', by: 'guest', state: 'ok', created_at: expect.any(String) })
    const pro = await newAccount(api.deps.db, 'pro')
    const protectedLink = await call(app, 'POST', '/api/v1/shorten', { token: pro.key, body: { url: 'https://example.com/secret', password: 'hunter2' } })
    const hidden = await call(app, 'GET', `/internal/inspect?domain=sho.rt&alias=${protectedLink.body.data.alias}`, { headers: secret })
    expect(hidden.body, show(hidden)).toMatchObject({ url: null, by: 'account' })
    expect((await call(app, 'GET', `/internal/inspect?domain=sho.rt&alias=${alias}`)).status, 'without the secret').toBe(401)
    const filed = await call(app, 'POST', '/internal/report', { headers: secret, body: { domain: 'sho.rt', alias, reason: 'spam', details: '', email: '', ip: freshIp() } })
    expect(filed.status, show(filed)).toBe(201)
    expect((await api.deps.db.select().from(reports).where(eq(reports.linkId, id)))[0]!.reason).toBe('spam')
  })
})
