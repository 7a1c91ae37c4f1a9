// clicks and last_clicked_at on link records (get, list, update), and how links and stats answer while
// ClickHouse is down or hanging.
import { beforeAll, describe, expect, test } from 'bun:test'
import type { ClickHouseClient } from '@clickhouse/client'
import { call, show, testApi } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { ANSWER_DEADLINE_MS, within } from '../../../test/support/wait'
import { CLICK_COUNTS_BUDGET_MS } from '../links/clicks'
import { api, ch, createLink, DAY, insertClicks, setUp } from '../../../test/support/suites/stats'

beforeAll(setUp, 60_000) // the engines start in-process: seconds, more on a busy machine

describe('clicks and last_clicked_at on link records', () => {
  test('get, list and update carry all-time human clicks; a list costs one ClickHouse query', async () => {
    let queries = 0
    const counting = new Proxy(ch, {
      get(target, prop, receiver) {
        if (prop === 'query') return (...args: Parameters<ClickHouseClient['query']>) => (queries++, target.query(...args))
        return Reflect.get(target, prop, receiver)
      },
    })
    const local = await testApi({ clickhouse: counting })
    const account = await newAccount(api.deps.db)
    const a = await createLink(local.app, account)
    const b = await createLink(local.app, account)
    await createLink(local.app, account)
    await insertClicks(a.id, [{}, { msAgo: 100 * DAY }, { is_bot: 1 }])
    await insertClicks(b.id, [{ msAgo: DAY }])

    const got = await call(local.app, 'GET', `/api/v1/links/${a.alias}`, { token: account.key })
    expect(got.status, show(got)).toBe(200)
    expect(got.body.data.clicks).toBe(2)
    expect(Date.now() - Date.parse(got.body.data.last_clicked_at)).toBeLessThan(60_000)
    expect(got.body.meta.notices).toEqual([])

    queries = 0
    const list = await call(local.app, 'GET', '/api/v1/links?limit=10', { token: account.key })
    expect(list.status, show(list)).toBe(200)
    expect(queries).toBe(1)
    const byAlias = Object.fromEntries(list.body.data.links.map((l: { alias: string }) => [l.alias, l]))
    expect(byAlias[a.alias]).toMatchObject({ clicks: 2 })
    expect(byAlias[b.alias]).toMatchObject({ clicks: 1 })
    expect(Object.values(byAlias).filter((l) => (l as { clicks: number }).clicks === 0).length).toBe(1)

    const patched = await call(local.app, 'PATCH', `/api/v1/links/${b.alias}`, { token: account.key, body: { url: 'https://example.com/new' } })
    expect(patched.status, show(patched)).toBe(200)
    expect(patched.body.data).toMatchObject({ full_url: 'https://example.com/new', clicks: 1 })
    expect(typeof patched.body.data.last_clicked_at).toBe('string')
  })

  test('ClickHouse down: links still answer without counts and with a notice; stats 503; Free 403 keeps its shape', async () => {
    const down = {
      query: async () => {
        throw new Error('connect ECONNREFUSED')
      },
    } as unknown as ClickHouseClient
    const local = await testApi({ clickhouse: down })
    const free = await newAccount(api.deps.db)
    const link = await createLink(local.app, free)
    const got = await call(local.app, 'GET', `/api/v1/links/${link.alias}`, { token: free.key })
    expect(got.status, show(got)).toBe(200)
    expect(got.body.data.clicks).toBeUndefined()
    expect(got.body.data.last_clicked_at).toBeUndefined()
    expect(got.body.meta.notices).toContainEqual(expect.objectContaining({ field: 'clicks' }))
    const list = await call(local.app, 'GET', '/api/v1/links', { token: free.key })
    expect(list.status, show(list)).toBe(200)
    expect(list.body.data.links[0].clicks).toBeUndefined()
    expect(list.body.meta.notices.length).toBe(1)
    const freeStats = await call(local.app, 'GET', `/api/v1/links/${link.alias}/stats`, { token: free.key })
    expect(freeStats.status, show(freeStats)).toBe(403)
    expect(freeStats.body.data).toMatchObject({ alias: link.alias, total_clicks: null })

    const pro = await newAccount(api.deps.db, 'pro')
    const proLink = await createLink(local.app, pro)
    const proStats = await call(local.app, 'GET', `/api/v1/links/${proLink.alias}/stats`, { token: pro.key })
    expect(proStats.status, show(proStats)).toBe(503)
    expect(proStats.body.error).toBe('STATS_UNAVAILABLE')
  })

  test('ClickHouse hanging: a link answers within the click-count budget', async () => {
    const hanging = { query: () => new Promise(() => {}) } as unknown as ClickHouseClient
    const local = await testApi({ clickhouse: hanging })
    const account = await newAccount(api.deps.db)
    const link = await createLink(local.app, account)
    // ClickHouse never answers: without the budget the request would never end.
    const got = await within(call(local.app, 'GET', `/api/v1/links/${link.alias}`, { token: account.key }), 'a link while ClickHouse hangs', CLICK_COUNTS_BUDGET_MS + ANSWER_DEADLINE_MS)
    expect(got.status, show(got)).toBe(200)
    expect(got.body.data.clicks).toBeUndefined()
  })
})
