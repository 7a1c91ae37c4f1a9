// POST, GET and DELETE /api/v1/tags: an account's tags (names, colors, the limit of 20, idempotent
// create); another account's tags are out of reach.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { linkTags, tags } from '../../db/schema'
import { call, newGuestToken, show } from '../../../test/support/api'
import { newAccount, newLink } from '../../../test/support/fixtures'
import { api, app, createTag, DEFAULT_DOMAIN, setUp, tagRow } from '../../../test/support/suites/tags'

beforeAll(setUp)

describe('POST /api/v1/tags', () => {
  test('201 with the tag at top level (spec 2.1); name trimmed, default color, meta with usage', async () => {
    const account = await newAccount(api.deps.db)
    const res = await call(app, 'POST', '/api/v1/tags', { token: account.key, body: { name: '  Spring campaign ' } })
    expect(res.status, show(res)).toBe(201)
    expect(res.body, show(res)).toMatchObject({ success: true, tag: { id: expect.any(Number), name: 'Spring campaign', color: '#6b7280' } })
    expect(Date.parse(res.body.tag.created_at), show(res)).toBeGreaterThan(Date.now() - 60_000)
    expect(res.body.data, show(res)).toBeUndefined()
    // The one account meta (account/meta.ts): the tags beside it, and on Free the way to Pro.
    expect(res.body.meta, show(res)).toMatchObject({ account_type: 'free', usage: { tags: 1, tags_limit: 20, tags_remaining: 19 } })
    expect(res.body.meta.upgrade.url, show(res)).toBe('https://api.sho.rt/api/v1/account/upgrade')
    expect(res.headers.get('x-ratelimit-limit'), show(res)).toBe('30')
    const colored = await call(app, 'POST', '/api/v1/tags', { token: account.key, body: { name: 'blue', color: '#3b82f6' } })
    expect(colored.status, show(colored)).toBe(201)
    expect(colored.body.tag.color, show(colored)).toBe('#3b82f6')
  })

  test('invalid names and colors are 400 VALIDATION_FAILED naming the field', async () => {
    const account = await newAccount(api.deps.db)
    const cases: [unknown, string][] = [
      [{}, 'body.name'],
      [{ name: '' }, 'body.name'],
      [{ name: '    ' }, 'body.name'],
      [{ name: 'x'.repeat(31) }, 'body.name'],
      [{ name: 'tab\there' }, 'body.name'],
      [{ name: 7 }, 'body.name'],
      [{ name: 'ok', color: '#000000' }, 'body.color'],
      [{ name: 'ok', color: 'red' }, 'body.color'],
    ]
    for (const [body, field] of cases) {
      const res = await call(app, 'POST', '/api/v1/tags', { token: account.key, body })
      expect(res.status, `${JSON.stringify(body)}: ${show(res)}`).toBe(400)
      expect(res.body.error, show(res)).toBe('VALIDATION_FAILED')
      expect(res.body.hint, show(res)).toStartWith(field)
    }
    expect((await call(app, 'POST', '/api/v1/tags', { token: account.key, body: '{"name":' })).body.error).toBe('MALFORMED_JSON')
    const thirty = await call(app, 'POST', '/api/v1/tags', { token: account.key, body: { name: 'x'.repeat(30) } })
    expect(thirty.status, show(thirty)).toBe(201)
  })

  test('names are unique per account regardless of case: 409 TAG_EXISTS; another account may reuse the name', async () => {
    const [a, b] = [await newAccount(api.deps.db), await newAccount(api.deps.db)]
    await createTag(a, 'Newsletter')
    for (const name of ['newsletter', 'NEWSLETTER', ' Newsletter ']) {
      const res = await call(app, 'POST', '/api/v1/tags', { token: a.key, body: { name } })
      expect(res.status, show(res)).toBe(409)
      expect(res.body.error, show(res)).toBe('TAG_EXISTS')
    }
    expect((await createTag(b, 'newsletter')).name).toBe('newsletter')
  })

  test('at most 20 tags: the 21st is 409 TAG_LIMIT_REACHED with limit and remaining', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    for (let i = 0; i < 20; i++) await createTag(account, `tag-${i}`)
    const res = await call(app, 'POST', '/api/v1/tags', { token: account.key, body: { name: 'one-too-many' } })
    expect(res.status, show(res)).toBe(409)
    expect(res.body, show(res)).toMatchObject({ success: false, error: 'TAG_LIMIT_REACHED', limit: 20, remaining: 0 })
    // A duplicate name is still reported as such, not as the limit.
    const dup = await call(app, 'POST', '/api/v1/tags', { token: account.key, body: { name: 'TAG-3' } })
    expect(dup.body.error, show(dup)).toBe('TAG_EXISTS')
  })

  test('30 concurrent creates of distinct names leave exactly 20 tags', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => call(app, 'POST', '/api/v1/tags', { token: account.key, body: { name: `burst-${i}` } })))
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 201).length, statuses.join(',')).toBe(20)
    for (const r of results.filter((r) => r.status !== 201)) expect(r.body.error, show(r)).toBe('TAG_LIMIT_REACHED')
    const rows = await api.deps.db.select().from(tags).where(eq(tags.accountId, account.id))
    expect(rows.length).toBe(20)
  }, 30_000)

  test('an Idempotency-Key retry replays the created tag instead of a 409', async () => {
    const account = await newAccount(api.deps.db)
    const headers = { 'idempotency-key': `tag-${crypto.randomUUID()}` }
    const first = await call(app, 'POST', '/api/v1/tags', { token: account.key, body: { name: 'once' }, headers })
    const retry = await call(app, 'POST', '/api/v1/tags', { token: account.key, body: { name: 'once' }, headers })
    expect(first.status, show(first)).toBe(201)
    expect(retry.status, show(retry)).toBe(201)
    expect(retry.body.tag, show(retry)).toEqual(first.body.tag)
    expect(retry.headers.get('idempotent-replayed'), show(retry)).toBe('true')
    expect(await api.deps.db.select().from(tags).where(eq(tags.accountId, account.id))).toHaveLength(1)
  })

  test('security: a guest token, no token or an unknown key is 401; nothing is created', async () => {
    const guest = await newGuestToken(app)
    const name = `sneaky-${crypto.randomUUID().slice(0, 20)}` // a valid name: only the credential is wrong
    for (const token of [guest, undefined, `mk_${'A'.repeat(43)}`]) {
      const res = await call(app, 'POST', '/api/v1/tags', { token, body: { name } })
      expect(res.status, show(res)).toBe(401)
      expect(res.body.error, show(res)).toBe('UNAUTHORIZED')
    }
    const written = await api.deps.db.select({ id: tags.id, accountId: tags.accountId }).from(tags).where(eq(tags.name, name))
    expect(written, 'tags written by the refused calls').toEqual([])
  })
})

describe('GET /api/v1/tags', () => {
  test("lists the account's own tags, oldest first, at top level; never another account's", async () => {
    const [a, b] = [await newAccount(api.deps.db), await newAccount(api.deps.db)]
    const first = await createTag(a, 'first', '#ef4444')
    const second = await createTag(a, 'second')
    await createTag(b, 'not-yours')
    const res = await call(app, 'GET', '/api/v1/tags', { token: a.key })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.success, show(res)).toBe(true)
    expect(
      res.body.tags.map((t: { id: number }) => t.id),
      show(res),
    ).toEqual([first.id, second.id])
    expect(res.body.tags[0], show(res)).toEqual({ id: first.id, name: 'first', color: '#ef4444', created_at: expect.any(String) })
    expect(res.body.meta.usage, show(res)).toEqual({ tags: 2, tags_limit: 20, tags_remaining: 18 })
    const empty = await call(app, 'GET', '/api/v1/tags', { token: (await newAccount(api.deps.db)).key })
    expect(empty.body.tags, show(empty)).toEqual([])
  })

  test('security: a guest token is 401', async () => {
    const res = await call(app, 'GET', '/api/v1/tags', { token: await newGuestToken(app) })
    expect(res.status, show(res)).toBe(401)
  })
})

describe('DELETE /api/v1/tags/{tagId}', () => {
  test('deletes the tag and removes it from all its links', async () => {
    const account = await newAccount(api.deps.db)
    const tag = await createTag(account, 'doomed')
    const keep = await createTag(account, 'kept')
    const l1 = await newLink(api.deps.db, account.id, DEFAULT_DOMAIN)
    const l2 = await newLink(api.deps.db, account.id, DEFAULT_DOMAIN)
    for (const link of [l1, l2]) {
      for (const t of [tag, keep]) {
        const res = await call(app, 'POST', `/api/v1/links/${link.alias}/tags`, { token: account.key, body: { tagId: t.id } })
        expect(res.status, show(res)).toBe(201)
      }
    }
    const res = await call(app, 'DELETE', `/api/v1/tags/${tag.id}`, { token: account.key })
    expect(res.status, show(res)).toBe(200)
    expect(res.body, show(res)).toMatchObject({ success: true, message: expect.stringContaining(String(tag.id)), meta: { account_type: 'free' } })
    expect(await tagRow(tag.id)).toBeUndefined()
    expect(await api.deps.db.select().from(linkTags).where(eq(linkTags.tagId, tag.id))).toEqual([])
    const onLink = await call(app, 'GET', `/api/v1/links/${l1.alias}/tags`, { token: account.key })
    expect(
      onLink.body.tags.map((t: { id: number }) => t.id),
      show(onLink),
    ).toEqual([keep.id])
    const again = await call(app, 'DELETE', `/api/v1/tags/${tag.id}`, { token: account.key })
    expect(again.status, show(again)).toBe(404)
    expect(again.body.error, show(again)).toBe('TAG_NOT_FOUND')
  })

  test('a tag id that is not an integer from 1 to 2^31-1 is 400', async () => {
    const account = await newAccount(api.deps.db)
    for (const id of ['abc', '1.5', '0', '-1', '01', '0x10', '1e3', '2147483648', '99999999999', '%20']) {
      const res = await call(app, 'DELETE', `/api/v1/tags/${id}`, { token: account.key })
      expect(res.status, `${id}: ${show(res)}`).toBe(400)
      expect(res.body.error, `${id}: ${show(res)}`).toBe('VALIDATION_FAILED')
    }
    const missing = await call(app, 'DELETE', '/api/v1/tags/2147483647', { token: account.key })
    expect(missing.status, show(missing)).toBe(404)
  })

  test("security: another account's tag is 404 and stays; a guest token is 401 before the id is looked at", async () => {
    const [owner, other] = [await newAccount(api.deps.db), await newAccount(api.deps.db)]
    const tag = await createTag(owner, 'mine')
    const res = await call(app, 'DELETE', `/api/v1/tags/${tag.id}`, { token: other.key })
    expect(res.status, show(res)).toBe(404)
    expect(res.body.error, show(res)).toBe('TAG_NOT_FOUND')
    expect(await tagRow(tag.id)).toBeDefined()
    const guest = await call(app, 'DELETE', '/api/v1/tags/not-a-number', { token: await newGuestToken(app) })
    expect(guest.status, show(guest)).toBe(401)
  })
})
