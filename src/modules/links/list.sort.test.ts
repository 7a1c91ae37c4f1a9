// GET /api/v1/links?sort=: created_desc (the default), created_asc and clicks_desc, paged by cursor and
// offset; clicks are real rows in the shared chDB, and a clicks page reads ClickHouse once.
import { beforeAll, describe, expect, test } from 'bun:test'
import type { ClickHouseClient } from '@clickhouse/client'
import { links } from '../../db/schema'
import { newId } from '../../lib/ids'
import { call, show, testApi, type CallResult } from '../../../test/support/api'
import { insertTestClicks, testClickHouse } from '../../../test/support/clickhouse'
import { newAccount, type TestAccount } from '../../../test/support/fixtures'
import { api, as, setUp } from '../../../test/support/suites/manage'
import { encodeCursor } from './cursor'

let ch: ClickHouseClient
beforeAll(async () => {
  await setUp()
  ch = await testClickHouse()
})

const aliases = (res: CallResult): string[] => res.body.data.links.map((l: { alias: string }) => l.alias)

/** Links of the account created a minute apart (index 0 the oldest), each with its human clicks, plus bot clicks that must not count. */
async function seed(account: TestAccount, clicks: number[], opts: { bots?: number[]; sameInstant?: boolean; url?: (i: number) => string } = {}) {
  const base = Date.now() - 3_600_000
  const made = clicks.map((_, i) => ({
    id: newId('link'),
    domain: 'sho.rt',
    alias: `s${i}-${crypto.randomUUID().slice(0, 8)}`,
    url: opts.url?.(i) ?? `https://example.com/sorted/${i}`,
    accountId: account.id,
    createdAt: new Date(opts.sameInstant ? base : base + i * 60_000),
  }))
  await api.deps.db.insert(links).values(made)
  for (const [i, link] of made.entries()) {
    const human = Array.from({ length: clicks[i]! }, (_, k) => ({ at: Date.now() - k * 1000 }))
    const bots = Array.from({ length: opts.bots?.[i] ?? 0 }, () => ({ at: Date.now(), is_bot: 1 }))
    if (human.length + bots.length > 0) await insertTestClicks(ch, link.id, [...human, ...bots])
  }
  return made
}

async function allPages(key: string, query: string, startCursor?: string): Promise<string[]> {
  const seen: string[] = []
  let cursor = startCursor ? `&cursor=${startCursor}` : ''
  for (let page = 0; page < 30; page++) {
    const res = await as(key, 'GET', `/api/v1/links?${query}${cursor}`)
    expect(res.status, show(res)).toBe(200)
    seen.push(...aliases(res))
    if (!res.body.data.pagination.next_cursor) return seen
    cursor = `&cursor=${res.body.data.pagination.next_cursor}`
  }
  throw new Error('more than 30 pages')
}

describe('GET /api/v1/links?sort=', () => {
  test('created_desc is the default; created_asc is oldest first, by cursor and by offset', async () => {
    const account = await newAccount(api.deps.db)
    const made = (await seed(account, [0, 0, 0, 0, 0])).map((l) => l.alias)
    expect(await allPages(account.key, 'limit=2')).toEqual([...made].reverse())
    expect(await allPages(account.key, 'limit=2&sort=created_desc')).toEqual([...made].reverse())
    expect(await allPages(account.key, 'limit=2&sort=created_asc')).toEqual(made)
    const offset = await as(account.key, 'GET', '/api/v1/links?sort=created_asc&limit=2&offset=3')
    expect(aliases(offset)).toEqual(made.slice(3))
    expect(offset.body.data.pagination, show(offset)).toEqual({ total: 5, limit: 2, offset: 3, next_cursor: null })
  })

  test('clicks_desc: most human clicks first, ties newest first; cursor and offset pages agree; filters and total apply', async () => {
    const account = await newAccount(api.deps.db)
    const stranger = await newAccount(api.deps.db)
    await seed(stranger, [100])
    const made = await seed(account, [3, 0, 5, 3, 0, 1, 0], { bots: [0, 0, 0, 0, 9, 0, 0], url: (i) => `https://example.com/${i % 2 ? 'odd' : 'even'}/${i}` })
    const expected = [2, 3, 0, 5, 6, 4, 1].map((i) => made[i]!.alias)
    const first = await as(account.key, 'GET', '/api/v1/links?sort=clicks_desc')
    expect(first.status, show(first)).toBe(200)
    expect(aliases(first)).toEqual(expected)
    expect(first.body.data.links.map((l: { clicks: number }) => l.clicks)).toEqual([5, 3, 3, 1, 0, 0, 0])
    expect(first.body.data.pagination, show(first)).toEqual({ total: 7, limit: 20, offset: 0, next_cursor: null })
    for (const limit of [1, 2, 3]) expect(await allPages(account.key, `sort=clicks_desc&limit=${limit}`)).toEqual(expected)
    const byOffset = await as(account.key, 'GET', '/api/v1/links?sort=clicks_desc&limit=3&offset=2')
    expect(aliases(byOffset)).toEqual(expected.slice(2, 5))
    const page1 = await as(account.key, 'GET', '/api/v1/links?sort=clicks_desc&limit=2')
    const cursorAndOffset = await as(account.key, 'GET', `/api/v1/links?sort=clicks_desc&limit=2&offset=1&cursor=${page1.body.data.pagination.next_cursor}`)
    expect(aliases(cursorAndOffset)).toEqual(expected.slice(3, 5))
    expect(cursorAndOffset.body.data.pagination.total).toBe(7)
    // Odd indexes (1, 3, 5) by clicks: 3 (3 clicks), 5 (1), 1 (0).
    const odd = await as(account.key, 'GET', '/api/v1/links?sort=clicks_desc&search=odd&limit=2')
    expect(aliases(odd)).toEqual([3, 5].map((i) => made[i]!.alias))
    expect(odd.body.data.pagination.total, show(odd)).toBe(3)
    expect(await allPages(account.key, 'sort=clicks_desc&search=odd&limit=2')).toEqual([3, 5, 1].map((i) => made[i]!.alias))
  })

  test('clicks_desc pages never repeat a link while clicks arrive, and ties on one instant page by id', async () => {
    const account = await newAccount(api.deps.db)
    const made = await seed(account, [0, 0, 0, 0, 0, 0], { sameInstant: true })
    const page1 = await as(account.key, 'GET', '/api/v1/links?sort=clicks_desc&limit=2')
    // The links just shown get clicks: they rank higher now, above the cursor, so never on a later page.
    for (const link of made.filter((l) => aliases(page1).includes(l.alias))) await insertTestClicks(ch, link.id, [{ at: Date.now() }])
    const rest = await allPages(account.key, 'sort=clicks_desc&limit=2', page1.body.data.pagination.next_cursor)
    const seen = [...aliases(page1), ...rest]
    expect(seen.length).toBe(6)
    expect(new Set(seen)).toEqual(new Set(made.map((l) => l.alias)))
  })

  test('a clicks page reads ClickHouse once; without ClickHouse clicks_desc is 503, the other sorts answer', async () => {
    const account = await newAccount(api.deps.db)
    await seed(account, [2, 0, 1, 4])
    let queries = 0
    const counting = new Proxy(ch, {
      get: (target, prop, receiver) => (prop === 'query' ? (...args: Parameters<ClickHouseClient['query']>) => (queries++, target.query(...args)) : Reflect.get(target, prop, receiver)),
    })
    const local = await testApi({ clickhouse: counting })
    const res = await call(local.app, 'GET', '/api/v1/links?sort=clicks_desc&limit=2', { token: account.key })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data.links.map((l: { clicks: number }) => l.clicks)).toEqual([4, 2])
    expect(queries).toBe(1)

    const down = {
      query: async () => {
        throw new Error('connect ECONNREFUSED')
      },
    } as unknown as ClickHouseClient
    const offline = await testApi({ clickhouse: down })
    const refused = await call(offline.app, 'GET', '/api/v1/links?sort=clicks_desc', { token: account.key })
    expect(refused.status, show(refused)).toBe(503)
    expect(refused.body.error, show(refused)).toBe('SERVICE_UNAVAILABLE')
    expect(refused.body.hint, show(refused)).toContain('sort=clicks_desc')
    const byDate = await call(offline.app, 'GET', '/api/v1/links?sort=created_asc', { token: account.key })
    expect(byDate.status, show(byDate)).toBe(200)
    expect(byDate.body.data.pagination.total).toBe(4)
    expect(byDate.body.meta.notices).toContainEqual(expect.objectContaining({ field: 'clicks' }))
  })

  test('an unknown sort, or a cursor of another sort, is 400 VALIDATION_FAILED', async () => {
    const account = await newAccount(api.deps.db)
    await seed(account, [1, 0, 0])
    const clicksCursor = (await as(account.key, 'GET', '/api/v1/links?sort=clicks_desc&limit=1')).body.data.pagination.next_cursor
    const createdCursor = (await as(account.key, 'GET', '/api/v1/links?limit=1')).body.data.pagination.next_cursor
    const ascCursor = (await as(account.key, 'GET', '/api/v1/links?sort=created_asc&limit=1')).body.data.pagination.next_cursor
    const forged = (fields: object) => Buffer.from(JSON.stringify(fields)).toString('base64url')
    const bad: [string, string][] = [
      ['sort=clicks', 'sort'],
      ['sort=CLICKS_DESC', 'sort'],
      ['sort=', 'sort'],
      ['sort=-created_at', 'sort'],
      ['sort=created_desc&sort=clicks_desc', 'query.sort'],
      [`cursor=${clicksCursor}`, 'query.cursor'],
      [`sort=created_asc&cursor=${createdCursor}`, 'query.cursor'],
      [`sort=clicks_desc&cursor=${ascCursor}`, 'query.cursor'],
      [`sort=clicks_desc&cursor=${forged({ t: '1', i: 'link_x', s: 'clicks_desc' })}`, 'query.cursor'],
      [`sort=clicks_desc&cursor=${forged({ t: '1', i: 'link_x', s: 'clicks_desc', c: -1 })}`, 'query.cursor'],
      [`sort=clicks_desc&cursor=${forged({ t: '1', i: 'link_x', s: 'clicks_desc', c: '1' })}`, 'query.cursor'],
      [`cursor=${forged({ t: '1', i: 'link_x', s: 'random' })}`, 'query.cursor'],
    ]
    for (const [query, field] of bad) {
      const res = await as(account.key, 'GET', `/api/v1/links?${query}`)
      expect(res.status, `${query}: ${show(res)}`).toBe(400)
      expect(res.body.error, `${query}: ${show(res)}`).toBe('VALIDATION_FAILED')
      expect(res.body.hint, `${query}: ${show(res)}`).toContain(field)
    }
    const forgedOk = await as(account.key, 'GET', `/api/v1/links?sort=clicks_desc&cursor=${encodeCursor({ createdUs: '1', id: 'link_x', clicks: 0 }, 'clicks_desc')}`)
    expect(forgedOk.status, show(forgedOk)).toBe(200)
    expect(forgedOk.body.data.links).toEqual([])
  })
})
