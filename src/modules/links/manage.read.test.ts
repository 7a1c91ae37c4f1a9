// GET /api/v1/links (pages, search, hostile queries) and GET /api/v1/links/{alias}: own links only.
import { beforeAll, describe, expect, test } from 'bun:test'
import { links } from '../../db/schema'
import { call, newGuestToken, show, type CallResult } from '../../../test/support/api'
import { encodeCursor } from './cursor'
import { likeSubstring } from './list'
import { newAccount, newDomain } from '../../../test/support/fixtures'
import { api, app, as, create, freshAlias, setUp } from '../../../test/support/suites/manage'

beforeAll(setUp)

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
    expect(
      byOffset.body.data.links.map((l: { alias: string }) => l.alias),
      show(byOffset),
    ).toEqual(newestFirst.slice(5))
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
      ['limit=5&limit=6', 'query.limit'],
    ]
    for (const [query, field] of bad) {
      const res = await as(account.key, 'GET', `/api/v1/links?${query}`)
      expect(res.status, `${query}: ${show(res)}`).toBe(400)
      expect(res.body.error, `${query}: ${show(res)}`).toBe('VALIDATION_FAILED')
      expect(res.body.hint, `${query}: ${show(res)}`).toContain(field)
    }
    const fine = ['offset=1000000000', 'limit=100', 'search=', 'search=%F0%9F%94%97', 'search=%E0%A4%A', 'unknown=1', `cursor=${encodeCursor({ createdUs: '1', id: 'link_x' })}`]
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
