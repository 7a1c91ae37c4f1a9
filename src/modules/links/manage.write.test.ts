// PATCH and DELETE /api/v1/links/{alias}: own links only, the cache written through on every change and
// the key announced; Idempotency-Key replays.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { INVALIDATION_CHANNEL, linkCacheKey } from '../../../core/link-cache'
import { links } from '../../db/schema'
import { newGuestToken, show } from '../../../test/support/api'
import { newAccount } from '../../../test/support/fixtures'
import { api, app, as, cached, create, freshAlias, setUp } from '../../../test/support/suites/manage'
import { until } from '../../../test/support/wait'

beforeAll(setUp)

describe('PATCH /api/v1/links/{alias}', () => {
  test('changes url, password, expiry and activation; null clears; the cache follows and the key is announced', async () => {
    const account = await newAccount(api.deps.db)
    const alias = freshAlias()
    await create(account, { url: 'https://example.com/before', alias })
    const messages: string[] = []
    const unsubscribe = await api.adapters.kv.subscribe(INVALIDATION_CHANNEL, (m) => messages.push(m))
    try {
      const key = linkCacheKey('sho.rt', alias)
      const moved = await as(account.key, 'PATCH', `/api/v1/links/${alias}`, {
        url: 'https://example.com/after',
        password: 's3cret',
        expiration: '2099-01-01T00:00:00Z',
        activated_at: '2098-01-01T00:00:00Z',
      })
      expect(moved.status, show(moved)).toBe(200)
      expect(moved.body.data, show(moved)).toMatchObject({ alias, full_url: 'https://example.com/after', has_password: true, expires_at: '2099-01-01T00:00:00.000Z' })
      expect(moved.text).not.toContain('s3cret')
      expect(await cached('sho.rt', alias)).toMatchObject({ url: 'https://example.com/after', pw: 1, exp: Date.parse('2099-01-01T00:00:00Z'), act: Date.parse('2098-01-01T00:00:00Z') })
      await until(
        () => messages.includes(key),
        () => `${key} published: ${JSON.stringify(messages)}`,
      )
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
      [{ url: 'https://sho.rt/x' }, 'DESTINATION_LOOPS', ''],
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
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => as(account.key, 'PATCH', `/api/v1/links/${alias}`, { url: `https://example.com/race/${i}` })))
    expect(
      results.every((r) => r.status === 200),
      results.map(show).join('\n'),
    ).toBe(true)
    const [row] = await api.deps.db.select().from(links).where(eq(links.alias, alias))
    const record = await cached('sho.rt', alias)
    // Empty is allowed (the next redirect refills it from Postgres); a URL other than the stored one is not.
    expect([null, row!.url], `cached ${JSON.stringify(record)}, stored ${row!.url}`).toContain(record?.url ?? null)
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
      await until(
        () => messages.includes(linkCacheKey('sho.rt', alias)),
        () => `${alias} published: ${JSON.stringify(messages)}`,
      )
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
