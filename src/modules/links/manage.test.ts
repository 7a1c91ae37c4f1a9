// GET /links, GET/PATCH/DELETE /links/{alias}: own links only, cache written through on every change.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { decodeCachedLink, INVALIDATION_CHANNEL, linkCacheKey } from '../../core/link-cache'
import { links } from '../../db/schema'
import { call, newGuestToken, show, testApi, type CallResult, type TestApp } from '../../../test/support/api'
import { encodeCursor } from './cursor'
import { likeSubstring } from './manage'
import { newAccount, newDomain, type TestAccount } from '../../../test/support/fixtures'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

beforeAll(async () => {
  api = await testApi()
  app = api.app
})

const as = (key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => call(app, method, path, { token: key, body, headers })
const freshAlias = (prefix = 'm') => `${prefix}-${crypto.randomUUID().slice(0, 12)}`
const cached = async (domain: string, alias: string) => decodeCachedLink((await api.adapters.kv.get(linkCacheKey(domain, alias))) ?? '')

async function create(account: TestAccount, body: Record<string, unknown>): Promise<CallResult> {
  const res = await as(account.key, 'POST', '/api/v1/shorten', body)
  if (res.status !== 200) throw new Error(show(res))
  return res
}

async function waitFor(check: () => boolean, ms = 2000): Promise<boolean> {
  const until = Date.now() + ms
  while (Date.now() < until && !check()) await Bun.sleep(10)
  return check()
}

describe('GET /api/v1/links', () => {
  test('newest first; cursor pages cover every link exactly once; offset keeps working', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const made: string[] = []
    for (let i = 0; i < 7; i++) made.push((await create(account, { url: `https://example.com/list/${i}` })).body.data.alias)
    const newestFirst = [...made].reverse()
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const res: CallResult = await as(account.key, 'GET', `/api/v1/links?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
      expect(res.status, show(res)).toBe(200)
      expect(res.body.data.pagination, show(res)).toMatchObject({ total: 7, limit: 3, offset: 0 })
      expect(res.body.meta.account_type, show(res)).toBe('pro')
      seen.push(...res.body.data.links.map((l: { alias: string }) => l.alias))
      cursor = res.body.data.pagination.next_cursor
      pages++
    } while (cursor && pages < 10)
    expect(seen).toEqual(newestFirst)
    expect(pages).toBe(3)
    const byOffset = await as(account.key, 'GET', '/api/v1/links?limit=2&offset=5')
    expect(byOffset.body.data.links.map((l: { alias: string }) => l.alias), show(byOffset)).toEqual(newestFirst.slice(5))
    expect(byOffset.body.data.pagination, show(byOffset)).toEqual({ total: 7, limit: 2, offset: 5, next_cursor: null })
    const defaults = await as(account.key, 'GET', '/api/v1/links')
    expect(defaults.body.data.pagination, show(defaults)).toEqual({ total: 7, limit: 20, offset: 0, next_cursor: null })
    expect(defaults.body.data.links[0], show(defaults)).toMatchObject({ alias: newestFirst[0], has_password: false, clicks: 0, last_clicked_at: null })
  })

  test('links created in one millisecond still page without gaps (the cursor keeps microseconds and the id)', async () => {
    const account = await newAccount(api.deps.db)
    const at = new Date()
    const ids = Array.from({ length: 5 }, (_, i) => `link_same_ms_${crypto.randomUUID().slice(0, 8)}_${i}`)
    await api.deps.db.insert(links).values(ids.map((id) => ({ id, domain: 'sho.rt', alias: freshAlias('ms'), url: 'https://example.com/ms', accountId: account.id, createdAt: at })))
    const seen = new Set<string>()
    let cursor = ''
    for (let page = 0; page < 5; page++) {
      const res = await as(account.key, 'GET', `/api/v1/links?limit=2${cursor}`)
      for (const link of res.body.data.links) seen.add(link.alias)
      if (!res.body.data.pagination.next_cursor) break
      cursor = `&cursor=${res.body.data.pagination.next_cursor}`
    }
    expect(seen.size).toBe(5)
  })

  test('search matches alias or URL substrings case-insensitively, with % and _ taken literally; domain filters', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const host = await newDomain(api.deps.db, account.id)
    const alias = freshAlias('Spring')
    await create(account, { url: 'https://example.com/Summer-Sale', alias })
    await create(account, { url: 'https://example.com/100%25_off' })
    await create(account, { url: 'https://example.com/100-off' })
    await create(account, { url: 'https://example.com/custom', alias: 'c', domain: host })
    const search = async (query: string) => {
      const res = await as(account.key, 'GET', `/api/v1/links?${query}`)
      expect(res.status, show(res)).toBe(200)
      return res.body.data.links.map((l: { full_url: string }) => l.full_url).sort()
    }
    expect(await search('search=spring-')).toEqual(['https://example.com/Summer-Sale'])
    expect(await search('search=summer-SALE')).toEqual(['https://example.com/Summer-Sale'])
    expect(await search(`search=${encodeURIComponent('%25_')}`)).toEqual(['https://example.com/100%25_off'])
    expect(await search('search=_')).toEqual(['https://example.com/100%25_off'])
    expect(await search(`search=${encodeURIComponent("'; drop table links; --")}`)).toEqual([])
    expect(await search(`domain=${host.toUpperCase()}`)).toEqual(['https://example.com/custom'])
    expect((await search('domain=sho.rt')).length).toBe(3)
    const counted = await as(account.key, 'GET', '/api/v1/links?search=100&limit=1')
    expect(counted.body.data.pagination.total, show(counted)).toBe(2)
    expect(likeSubstring('a%b_c\\')).toBe('%a\\%b\\_c\\\\%')
  })

  test('hostile queries are 400 VALIDATION_FAILED naming the parameter, never 500', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    await create(account, { url: 'https://example.com/hostile' })
    // Out-of-range numbers come from Elysia's query coercion without the parameter's name
    // (plugins/errors.ts reports them as "property: …"); the status and code are what clients branch on.
    const bad: [string, string][] = [
      ['limit=0', 'greater or equal to 1'],
      ['limit=101', 'less or equal to 100'],
      ['limit=1000000000000', 'less or equal to 100'],
      ['limit=abc', 'query.limit'],
      ['limit=1.5', 'query.limit'],
      ['limit=', 'query.limit'],
      ['offset=-1', 'greater or equal to 0'],
      ['offset=1e30', 'less or equal to'],
      ['offset=NaN', 'query.offset'],
      ['cursor=%%%', 'query'],
      ['cursor=not-a-cursor', 'query.cursor'],
      [`cursor=${Buffer.from('{"t":"1","i":"x\'; drop"}').toString('base64url')}`, 'query.cursor'],
      [`cursor=${Buffer.from('{"t":"99999999999999999999","i":"x"}').toString('base64url')}`, 'query.cursor'],
      [`cursor=${Buffer.from('[1,2]').toString('base64url')}`, 'query.cursor'],
      [`cursor=${'A'.repeat(300)}`, 'query.cursor'],
      ['search=%00', 'query.search'],
      [`search=${'x'.repeat(201)}`, 'query.search'],
      ['domain=%00', 'query.domain'],
      ['domain=a%20b', 'query.domain'],
    ]
    for (const [query, field] of bad) {
      const res = await as(account.key, 'GET', `/api/v1/links?${query}`)
      expect(res.status, `${query}: ${show(res)}`).toBe(400)
      expect(res.body.error, `${query}: ${show(res)}`).toBe('VALIDATION_FAILED')
      expect(res.body.hint, `${query}: ${show(res)}`).toContain(field)
    }
    const fine = ['offset=1000000000', 'limit=100', 'limit=5&limit=6', 'search=', 'search=%F0%9F%94%97', 'search=%E0%A4%A', 'unknown=1', `cursor=${encodeCursor({ createdUs: '1', id: 'link_x' })}`]
    for (const query of fine) {
      const res = await as(account.key, 'GET', `/api/v1/links?${query}`)
      expect(res.status, `${query}: ${show(res)}`).toBe(200)
    }
  })

  test("security: a guest token is 401; another account's links are never listed", async () => {
    const owner = await newAccount(api.deps.db)
    const stranger = await newAccount(api.deps.db)
    await create(owner, { url: 'https://example.com/private' })
    const guest = await as(await newGuestToken(app), 'GET', '/api/v1/links')
    expect(guest.status, show(guest)).toBe(401)
    expect(guest.body.error, show(guest)).toBe('UNAUTHORIZED')
    expect((await call(app, 'GET', '/api/v1/links')).status).toBe(401)
    const res = await as(stranger.key, 'GET', '/api/v1/links?search=private')
    expect(res.body.data, show(res)).toEqual({ links: [], pagination: { total: 0, limit: 20, offset: 0, next_cursor: null } })
  })
})

describe('GET /api/v1/links/{alias}', () => {
  test('the own link, on its domain', async () => {
    const account = await newAccount(api.deps.db)
    const host = await newDomain(api.deps.db, account.id)
    const alias = freshAlias()
    await create(account, { url: 'https://example.com/one', alias, password: 'pw-1234' })
    await create(account, { url: 'https://example.com/on-custom', alias, domain: host })
    const res = await as(account.key, 'GET', `/api/v1/links/${alias}`)
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data, show(res)).toMatchObject({ alias, full_url: 'https://example.com/one', domain: 'sho.rt', has_password: true })
    expect(res.body.meta.usage.links_this_month, show(res)).toBe(2)
    const custom = await as(account.key, 'GET', `/api/v1/links/${alias}?domain=${host}`)
    expect(custom.body.data, show(custom)).toMatchObject({ full_url: 'https://example.com/on-custom', domain: host, short_url: `https://${host}/${alias}` })
  })

  test("unknown and another account's links are 404 LINK_NOT_FOUND alike; bad input is 400; guest tokens 401", async () => {
    const owner = await newAccount(api.deps.db)
    const stranger = await newAccount(api.deps.db)
    const alias = freshAlias()
    await create(owner, { url: 'https://example.com/mine', alias })
    for (const path of [`/api/v1/links/${alias}`, `/api/v1/links/${freshAlias()}`, `/api/v1/links/${alias}?domain=other.example.com`]) {
      const res = await as(stranger.key, 'GET', path)
      expect(res.status, `${path}: ${show(res)}`).toBe(404)
      expect(res.body.error, show(res)).toBe('LINK_NOT_FOUND')
      expect(res.text, show(res)).not.toContain('example.com/mine')
    }
    for (const path of ['/api/v1/links/bad%20alias', `/api/v1/links/${'a'.repeat(65)}`, '/api/v1/links/%E0%A4%A', `/api/v1/links/${alias}?domain=%00`]) {
      const res = await as(owner.key, 'GET', path)
      expect(res.status, `${path}: ${show(res)}`).toBe(400)
      expect(res.body.error, show(res)).toBe('VALIDATION_FAILED')
    }
    expect((await as(await newGuestToken(app), 'GET', `/api/v1/links/${alias}`)).status).toBe(401)
  })
})

describe('PATCH /api/v1/links/{alias}', () => {
  test('changes url, password, expiry and activation; null clears; the cache follows and the key is announced', async () => {
    const account = await newAccount(api.deps.db)
    const alias = freshAlias()
    await create(account, { url: 'https://example.com/before', alias })
    const messages: string[] = []
    const unsubscribe = await api.adapters.kv.subscribe(INVALIDATION_CHANNEL, (m) => messages.push(m))
    try {
      const key = linkCacheKey('sho.rt', alias)
      const moved = await as(account.key, 'PATCH', `/api/v1/links/${alias}`, { url: 'https://example.com/after', password: 's3cret', expiration: '2099-01-01T00:00:00Z', activated_at: '2098-01-01T00:00:00Z' })
      expect(moved.status, show(moved)).toBe(200)
      expect(moved.body.data, show(moved)).toMatchObject({ alias, full_url: 'https://example.com/after', has_password: true, expires_at: '2099-01-01T00:00:00.000Z' })
      expect(moved.text).not.toContain('s3cret')
      expect(await cached('sho.rt', alias)).toMatchObject({ url: 'https://example.com/after', pw: 1, exp: Date.parse('2099-01-01T00:00:00Z'), act: Date.parse('2098-01-01T00:00:00Z') })
      expect(await waitFor(() => messages.includes(key)), JSON.stringify(messages)).toBe(true)
      const cleared = await as(account.key, 'PATCH', `/api/v1/links/${alias}`, { password: null, expiration: null, activated_at: null })
      expect(cleared.status, show(cleared)).toBe(200)
      expect(cleared.body.data, show(cleared)).toMatchObject({ has_password: false, expires_at: null })
      const record = await cached('sho.rt', alias)
      expect(record, JSON.stringify(record)).toEqual({ v: 1, id: expect.any(String), url: 'https://example.com/after' })
      const [row] = await api.deps.db.select().from(links).where(eq(links.alias, alias))
      expect(row).toMatchObject({ passwordHash: null, expiresAt: null, activatedAt: null })
      const same = await as(account.key, 'PATCH', `/api/v1/links/${alias}`, {})
      expect(same.status, show(same)).toBe(200)
      expect(same.body.data.full_url, show(same)).toBe('https://example.com/after')
    } finally {
      await unsubscribe()
    }
  })

  test('values are checked as on create', async () => {
    const account = await newAccount(api.deps.db)
    const alias = freshAlias()
    await create(account, { url: 'https://example.com/check', alias, expiration: '2099-01-01T00:00:00Z' })
    const cases: [unknown, string, string][] = [
      [{ url: 'javascript:alert(1)' }, 'INVALID_URL', ''],
      [{ url: 'https://sho.rt/x' }, 'URL_POINTS_TO_SHORT_DOMAIN', ''],
      [{ url: null }, 'VALIDATION_FAILED', 'body.url'],
      [{ expiration: '2001-01-01T00:00:00Z' }, 'VALIDATION_FAILED', 'body.expiration: must be in the future'],
      [{ activated_at: '2099-06-01T00:00:00Z' }, 'VALIDATION_FAILED', 'body.activated_at: must be before'],
      [{ expiration: '2098-01-01T00:00:00Z', activated_at: '2098-06-01T00:00:00Z' }, 'VALIDATION_FAILED', 'body.activated_at'],
      [{ password: '' }, 'VALIDATION_FAILED', 'body.password'],
      [{ password: 'x'.repeat(129) }, 'VALIDATION_FAILED', 'body.password'],
      [{ password: 42 }, 'VALIDATION_FAILED', 'body.password'],
      ['[]', 'VALIDATION_FAILED', 'body'],
    ]
    for (const [body, code, hint] of cases) {
      const res = await as(account.key, 'PATCH', `/api/v1/links/${alias}`, body)
      expect(res.status, `${JSON.stringify(body)}: ${show(res)}`).toBe(400)
      expect(res.body.error, show(res)).toBe(code)
      expect(res.body.hint, show(res)).toContain(hint)
    }
    const [row] = await api.deps.db.select().from(links).where(eq(links.alias, alias))
    expect(row).toMatchObject({ url: 'https://example.com/check', passwordHash: null })
  })

  test("security: another account's link is 404 and unchanged; a guest token is 401", async () => {
    const owner = await newAccount(api.deps.db)
    const stranger = await newAccount(api.deps.db)
    const alias = freshAlias()
    await create(owner, { url: 'https://example.com/keep', alias })
    const res = await as(stranger.key, 'PATCH', `/api/v1/links/${alias}`, { url: 'https://evil.example/', password: 'mine now' })
    expect(res.status, show(res)).toBe(404)
    expect(res.body.error, show(res)).toBe('LINK_NOT_FOUND')
    expect((await as(await newGuestToken(app), 'PATCH', `/api/v1/links/${alias}`, { url: 'https://evil.example/' })).status).toBe(401)
    const [row] = await api.deps.db.select().from(links).where(eq(links.alias, alias))
    expect(row).toMatchObject({ url: 'https://example.com/keep', passwordHash: null, accountId: owner.id })
    expect((await cached('sho.rt', alias))?.url).toBe('https://example.com/keep')
  })

  test('concurrent updates leave the cache equal to Postgres (or empty), never stale', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const alias = freshAlias()
    await create(account, { url: 'https://example.com/race/start', alias })
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => as(account.key, 'PATCH', `/api/v1/links/${alias}`, { url: `https://example.com/race/${i}` })),
    )
    expect(results.every((r) => r.status === 200), results.map(show).join('\n')).toBe(true)
    const [row] = await api.deps.db.select().from(links).where(eq(links.alias, alias))
    const record = await cached('sho.rt', alias)
    if (record !== null) expect(record.url).toBe(row!.url)
  })

  test('Idempotency-Key: a retried update replays the first answer', async () => {
    const account = await newAccount(api.deps.db)
    const alias = freshAlias()
    await create(account, { url: 'https://example.com/idem', alias })
    const headers = { 'idempotency-key': crypto.randomUUID() }
    const first = await as(account.key, 'PATCH', `/api/v1/links/${alias}`, { url: 'https://example.com/idem-2' }, headers)
    expect(first.status, show(first)).toBe(200)
    const replay = await as(account.key, 'PATCH', `/api/v1/links/${alias}`, { url: 'https://example.com/idem-2' }, headers)
    expect(replay.headers.get('idempotent-replayed'), show(replay)).toBe('true')
    expect(replay.text).toBe(first.text)
  })
})

describe('DELETE /api/v1/links/{alias}', () => {
  test('deletes the link and its cache entry, announces it, frees the alias; a second delete is 404', async () => {
    const account = await newAccount(api.deps.db)
    const alias = freshAlias()
    await create(account, { url: 'https://example.com/bye', alias })
    const messages: string[] = []
    const unsubscribe = await api.adapters.kv.subscribe(INVALIDATION_CHANNEL, (m) => messages.push(m))
    try {
      const res = await as(account.key, 'DELETE', `/api/v1/links/${alias}`)
      expect(res.status, show(res)).toBe(200)
      expect(res.body, show(res)).toMatchObject({ success: true, message: `Link sho.rt/${alias} deleted.`, meta: { account_type: 'free' } })
      expect(await api.adapters.kv.get(linkCacheKey('sho.rt', alias))).toBeNull()
      expect(await waitFor(() => messages.includes(linkCacheKey('sho.rt', alias))), JSON.stringify(messages)).toBe(true)
      expect((await api.deps.db.select().from(links).where(eq(links.alias, alias))).length).toBe(0)
      const again = await as(account.key, 'DELETE', `/api/v1/links/${alias}`)
      expect(again.status, show(again)).toBe(404)
      expect(again.body.error, show(again)).toBe('LINK_NOT_FOUND')
      expect((await as(account.key, 'GET', `/api/v1/links/${alias}`)).status).toBe(404)
      expect((await as(account.key, 'POST', '/api/v1/shorten', { url: 'https://example.com/reborn', alias })).status).toBe(200)
    } finally {
      await unsubscribe()
    }
  })

  test("security: another account's link is 404 and stays; a guest token is 401; Idempotency-Key replays", async () => {
    const owner = await newAccount(api.deps.db)
    const stranger = await newAccount(api.deps.db)
    const alias = freshAlias()
    await create(owner, { url: 'https://example.com/stay', alias })
    const res = await as(stranger.key, 'DELETE', `/api/v1/links/${alias}`)
    expect(res.status, show(res)).toBe(404)
    expect((await as(await newGuestToken(app), 'DELETE', `/api/v1/links/${alias}`)).status).toBe(401)
    expect((await api.deps.db.select().from(links).where(eq(links.alias, alias))).length).toBe(1)
    expect((await cached('sho.rt', alias))?.url).toBe('https://example.com/stay')
    const headers = { 'idempotency-key': crypto.randomUUID() }
    const first = await as(owner.key, 'DELETE', `/api/v1/links/${alias}`, undefined, headers)
    const replay = await as(owner.key, 'DELETE', `/api/v1/links/${alias}`, undefined, headers)
    expect(first.status, show(first)).toBe(200)
    expect(replay.status, show(replay)).toBe(200)
    expect(replay.headers.get('idempotent-replayed'), show(replay)).toBe('true')
  })
})
