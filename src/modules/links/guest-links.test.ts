// POST /api/v1/shorten with a guest token, the happy paths: the link record, fields a guest may not
// set, the cache written through and announced, a failing cache.
import { beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import type { Kv } from '../../adapters/ports'
import { decodeCachedLink, INVALIDATION_CHANNEL, linkCacheKey } from '../../../core/link-cache'
import { links } from '../../db/schema'
import type { Services } from '../../services'
import { newGuestToken, show, testApi } from '../../../test/support/api'
import { DEFAULT_LINK_TTL_MS } from '../../lib/plans'
import { api, app, setUp, shorten } from '../../../test/support/suites/guest-links'
import { until } from '../../../test/support/wait'

beforeAll(setUp)

describe('POST /api/v1/shorten with a guest token', () => {
  test('creates a link: the link record, 30-day expiry, meta with usage', async () => {
    const token = await newGuestToken(app)
    const before = Date.now()
    const res = await shorten(token, { url: 'https://example.com/some/page?x=1' })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.success, show(res)).toBe(true)
    const link = res.body.data
    expect(link.alias, show(res)).toMatch(/^[A-Za-z0-9]{7}$/)
    expect(link, show(res)).toMatchObject({
      short_url: `https://sho.rt/${link.alias}`,
      full_url: 'https://example.com/some/page?x=1',
      domain: 'sho.rt',
      manage_code: null,
      has_password: false,
      clicks: 0,
      last_clicked_at: null,
    })
    const created = Date.parse(link.created_at)
    expect(created, show(res)).toBeGreaterThanOrEqual(before - 1000)
    expect(Date.parse(link.expires_at) - created, show(res)).toBe(DEFAULT_LINK_TTL_MS)
    expect(res.body.meta, show(res)).toMatchObject({
      account_type: 'guest',
      usage: { links_created: 1, links_remaining: 9, requests_made: 1, requests_remaining: 99 },
      notices: [],
    })
    const [row] = await api.deps.db
      .select()
      .from(links)
      .where(and(eq(links.domain, 'sho.rt'), eq(links.alias, link.alias)))
    expect(row?.id, show(res)).toMatch(/^link_[A-Za-z0-9_-]{22}$/)
    expect(row?.guestId, show(res)).toMatch(/^guest_/)
  })

  test('ignores alias, domain, password, expiration and activated_at, listing each in meta.notices', async () => {
    const token = await newGuestToken(app)
    const res = await shorten(token, {
      url: 'https://example.com/ignored-fields',
      alias: 'my-chosen-alias',
      domain: 'links.example.com',
      password: 'hunter2',
      expiration: '2030-01-01T00:00:00Z',
      activated_at: '2029-01-01T00:00:00Z',
    })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.data.alias, show(res)).not.toBe('my-chosen-alias')
    expect(res.body.data.domain, show(res)).toBe('sho.rt')
    expect(res.body.data.has_password, show(res)).toBe(false)
    expect(Date.parse(res.body.data.expires_at) - Date.parse(res.body.data.created_at), show(res)).toBe(DEFAULT_LINK_TTL_MS)
    const fields = res.body.meta.notices.map((n: { field: string }) => n.field)
    expect(fields, show(res)).toEqual(['alias', 'domain', 'password', 'expiration', 'activated_at'])
    expect(res.body.meta.notices[0].message, show(res)).toContain('ignored for guest tokens')
    const [row] = await api.deps.db.select().from(links).where(eq(links.alias, res.body.data.alias))
    expect(row?.passwordHash, show(res)).toBeNull()
    expect(row?.activatedAt, show(res)).toBeNull()
  })

  test('writes the link through to the cache and publishes its key', async () => {
    const { kv } = api.adapters
    const messages: string[] = []
    const unsubscribe = await kv.subscribe(INVALIDATION_CHANNEL, (m) => messages.push(m))
    try {
      const token = await newGuestToken(app)
      const res = await shorten(token, { url: 'https://example.com/cached' })
      expect(res.status, show(res)).toBe(200)
      const key = linkCacheKey('sho.rt', res.body.data.alias)
      const cached = decodeCachedLink((await kv.get(key)) ?? '')
      const [row] = await api.deps.db.select().from(links).where(eq(links.alias, res.body.data.alias))
      expect(cached, show(res)).toEqual({ v: 1, id: row!.id, url: 'https://example.com/cached', exp: Date.parse(res.body.data.expires_at) })
      await until(
        () => messages.includes(key),
        () => `${key} published: ${JSON.stringify(messages)}`,
      )
    } finally {
      await unsubscribe()
    }
  })

  test('a failing cache does not fail the request: the link is committed and the failure counted', async () => {
    const failing: Kv = {
      ...api.adapters.kv,
      get: () => Promise.reject(new Error('cache down')),
      set: () => Promise.reject(new Error('cache down')),
      publish: () => Promise.reject(new Error('cache down')),
      subscribe: () => Promise.reject(new Error('cache down')),
      del: () => Promise.reject(new Error('cache down')),
      close: async () => {},
    }
    const broken = await testApi({ kv: failing })
    const token = await newGuestToken(broken.app)
    const res = await shorten(token, { url: 'https://example.com/cache-down' }, broken.app)
    expect(res.status, show(res)).toBe(200)
    const services = (broken.app as unknown as { decorator: { services: Services } }).decorator.services
    expect(services.counters.cacheWriteFailures).toBe(1)
    const rows = await api.deps.db.select().from(links).where(eq(links.alias, res.body.data.alias))
    expect(rows.length, show(res)).toBe(1)
  })
})
