// The write-then-check protocol of syncLinkCache: a writer that lost a race never leaves a stale record.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { decodeCachedLink, INVALIDATION_CHANNEL, linkCacheKey } from '../../../core/link-cache'
import { links } from '../../db/schema'
import type { Services } from '../../services'
import { testApi } from '../../../test/support/api'
import { until } from '../../../test/support/wait'
import { recordOf, syncLinkCache, toCachedLink } from './cache'
import { newId } from '../../lib/ids'

let api: Awaited<ReturnType<typeof testApi>>
let services: Pick<Services, 'db' | 'kv' | 'counters'>

beforeAll(async () => {
  api = await testApi()
  services = { db: api.deps.db, kv: api.adapters.kv, counters: { cacheWriteFailures: 0, aliasCollisions: 0, invalidPixels: 0, reportsFiled: 0, linkStates: { flagged: 0, disabled: 0, ok: 0 } } }
})

async function link(url: string) {
  const [row] = await api.deps.db
    .insert(links)
    .values({ id: newId('link'), domain: 'sho.rt', alias: `c-${crypto.randomUUID().slice(0, 12)}`, url })
    .returning()
  return row!
}

describe('syncLinkCache', () => {
  test('a record Postgres still holds stays cached', async () => {
    const row = await link('https://example.com/current')
    await syncLinkCache(services, row, toCachedLink(row), { publish: false })
    expect(decodeCachedLink((await api.adapters.kv.get(linkCacheKey('sho.rt', row.alias))) ?? '')).toEqual(toCachedLink(row))
  })

  test('a stale record written after a newer commit (a refill that lost the race) is deleted and announced', async () => {
    const row = await link('https://example.com/old')
    const stale = toCachedLink(row)
    await api.deps.db.update(links).set({ url: 'https://example.com/new' }).where(eq(links.id, row.id))
    const messages: string[] = []
    const unsubscribe = await api.adapters.kv.subscribe(INVALIDATION_CHANNEL, (m) => messages.push(m))
    try {
      const key = linkCacheKey('sho.rt', row.alias)
      await syncLinkCache(services, row, stale, { publish: false })
      expect(await api.adapters.kv.get(key)).toBeNull()
      await until(
        () => messages.includes(key),
        () => `${key} announced: ${JSON.stringify(messages)}`,
      )
    } finally {
      await unsubscribe()
    }
  })

  test('a record of a deleted link is not left behind; a deletion removes the key', async () => {
    const row = await link('https://example.com/gone')
    const key = linkCacheKey('sho.rt', row.alias)
    await api.deps.db.delete(links).where(eq(links.id, row.id))
    await syncLinkCache(services, row, toCachedLink(row), { publish: false })
    expect(await api.adapters.kv.get(key)).toBeNull()
    await api.adapters.kv.set(key, 'x', 60)
    await syncLinkCache(services, row, null, { publish: true })
    expect(await api.adapters.kv.get(key)).toBeNull()
  })

  test('recordOf: pro follows the plan of the owning account; guest links have none', () => {
    const row = { id: 'link_a', url: 'https://e.com/', expiresAt: null, activatedAt: null, passwordHash: 'h' } as Parameters<typeof recordOf>[0]
    expect(recordOf({ ...row, plan: 'pro' })).toEqual({ v: 1, id: 'link_a', url: 'https://e.com/', pw: 1, pro: 1 })
    expect(recordOf({ ...row, plan: 'free' })).toEqual({ v: 1, id: 'link_a', url: 'https://e.com/', pw: 1 })
    expect(recordOf({ ...row, plan: null })).toEqual({ v: 1, id: 'link_a', url: 'https://e.com/', pw: 1 })
  })
})
