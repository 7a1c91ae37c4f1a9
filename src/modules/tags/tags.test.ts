import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { linkTags, tags } from '../../db/schema'
import { call, newGuestToken, show, testApi, type TestApp } from '../../../test/support/api'
import { newAccount, newLink, type TestAccount } from '../../../test/support/fixtures'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp

beforeAll(async () => {
  api = await testApi()
  app = api.app
})

const DEFAULT_DOMAIN = 'sho.rt'

async function createTag(account: TestAccount, name: string, color?: string) {
  const res = await call(app, 'POST', '/api/v1/tags', { token: account.key, body: color === undefined ? { name } : { name, color } })
  if (res.status !== 201) throw new Error(`create tag: ${show(res)}`)
  return res.body.tag as { id: number; name: string; color: string }
}

async function tagRow(id: number) {
  const [row] = await api.deps.db.select().from(tags).where(eq(tags.id, id))
  return row
}

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
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => call(app, 'POST', '/api/v1/tags', { token: account.key, body: { name: `burst-${i}` } })),
    )
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
    for (const token of [guest, undefined, 'mk_' + 'A'.repeat(43)]) {
      const res = await call(app, 'POST', '/api/v1/tags', { token, body: { name: 'sneaky' } })
      expect(res.status, show(res)).toBe(401)
      expect(res.body.error, show(res)).toBe('UNAUTHORIZED')
    }
  })
})

describe('GET /api/v1/tags', () => {
  test('lists the account\'s own tags, oldest first, at top level; never another account\'s', async () => {
    const [a, b] = [await newAccount(api.deps.db), await newAccount(api.deps.db)]
    const first = await createTag(a, 'first', '#ef4444')
    const second = await createTag(a, 'second')
    await createTag(b, 'not-yours')
    const res = await call(app, 'GET', '/api/v1/tags', { token: a.key })
    expect(res.status, show(res)).toBe(200)
    expect(res.body.success, show(res)).toBe(true)
    expect(res.body.tags.map((t: { id: number }) => t.id), show(res)).toEqual([first.id, second.id])
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
    expect(onLink.body.tags.map((t: { id: number }) => t.id), show(onLink)).toEqual([keep.id])
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

  test('security: another account\'s tag is 404 and stays; a guest token is 401 before the id is looked at', async () => {
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

describe('tags of a link', () => {
  test('assign 201, again 200, list, remove 200, remove again 200; on a custom domain with ?domain or body.domain', async () => {
    const account = await newAccount(api.deps.db)
    const tag = await createTag(account, 'vip')
    // Tests never truncate: a host of its own keeps the alias free across runs against one Postgres.
    const host = `go-${crypto.randomUUID().slice(0, 8)}.example.com`
    const link = await newLink(api.deps.db, account.id, host, 'x')
    const path = `/api/v1/links/${link.alias}/tags`
    const first = await call(app, 'POST', path, { token: account.key, body: { tagId: tag.id, domain: host.toUpperCase() } })
    expect(first.status, show(first)).toBe(201)
    expect(first.body, show(first)).toMatchObject({ success: true, message: `Tag ${tag.id} assigned to ${host}/x.`, meta: { account_type: 'free' } })
    const again = await call(app, 'POST', `${path}?domain=${host}`, { token: account.key, body: { tagId: tag.id } })
    expect(again.status, show(again)).toBe(200)
    expect(again.body.message, show(again)).toContain('already')
    const listed = await call(app, 'GET', `${path}?domain=${host}`, { token: account.key })
    expect(listed.status, show(listed)).toBe(200)
    expect(listed.body, show(listed)).toMatchObject({ success: true, tags: [{ id: tag.id, name: 'vip', color: '#6b7280' }], meta: { account_type: 'free' } })
    // Without a domain the default domain is meant, where this alias does not exist.
    const wrongDomain = await call(app, 'GET', path, { token: account.key })
    expect(wrongDomain.status, show(wrongDomain)).toBe(404)
    expect(wrongDomain.body.error, show(wrongDomain)).toBe('LINK_NOT_FOUND')
    const removed = await call(app, 'DELETE', `${path}/${tag.id}?domain=${host}`, { token: account.key })
    expect(removed.status, show(removed)).toBe(200)
    expect(removed.body.message, show(removed)).toBe(`Tag ${tag.id} removed from ${host}/x.`)
    const twice = await call(app, 'DELETE', `${path}/${tag.id}?domain=${host}`, { token: account.key })
    expect(twice.status, show(twice)).toBe(200)
    expect(twice.body.message, show(twice)).toContain('was not assigned')
    expect((await call(app, 'GET', `${path}?domain=${host}`, { token: account.key })).body.tags).toEqual([])
  })

  test('concurrent assignments of one tag: exactly one 201, the rest 200', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const tag = await createTag(account, 'race')
    const link = await newLink(api.deps.db, account.id, DEFAULT_DOMAIN)
    const results = await Promise.all(
      Array.from({ length: 8 }, () => call(app, 'POST', `/api/v1/links/${link.alias}/tags`, { token: account.key, body: { tagId: tag.id } })),
    )
    expect(results.map((r) => r.status).sort(), results.map(show).join('\n')).toEqual([200, 200, 200, 200, 200, 200, 200, 201])
  })

  test('unknown link, unknown tag and bad input', async () => {
    const account = await newAccount(api.deps.db)
    const tag = await createTag(account, 'lonely')
    const link = await newLink(api.deps.db, account.id, DEFAULT_DOMAIN)
    const noLink = await call(app, 'POST', '/api/v1/links/nope-nope/tags', { token: account.key, body: { tagId: tag.id } })
    expect(noLink.status, show(noLink)).toBe(404)
    expect(noLink.body.error, show(noLink)).toBe('LINK_NOT_FOUND')
    const noTag = await call(app, 'POST', `/api/v1/links/${link.alias}/tags`, { token: account.key, body: { tagId: 2147483647 } })
    expect(noTag.status, show(noTag)).toBe(404)
    expect(noTag.body.error, show(noTag)).toBe('TAG_NOT_FOUND')
    const removeUnknown = await call(app, 'DELETE', `/api/v1/links/${link.alias}/tags/2147483647`, { token: account.key })
    expect(removeUnknown.body.error, show(removeUnknown)).toBe('TAG_NOT_FOUND')
    const bad: [string, string, unknown][] = [
      ['POST', `/api/v1/links/${link.alias}/tags`, {}],
      ['POST', `/api/v1/links/${link.alias}/tags`, { tagId: 0 }],
      ['POST', `/api/v1/links/${link.alias}/tags`, { tagId: 1.5 }],
      ['POST', `/api/v1/links/${link.alias}/tags`, { tagId: '1' }],
      ['POST', `/api/v1/links/${link.alias}/tags`, { tagId: 2147483648 }],
      ['POST', `/api/v1/links/${link.alias}/tags?domain=a.example.com`, { tagId: tag.id, domain: 'b.example.com' }],
      ['POST', '/api/v1/links/bad%20alias/tags', { tagId: tag.id }],
      ['GET', `/api/v1/links/${link.alias}/tags?domain=not%20a%20domain`, undefined],
      ['DELETE', `/api/v1/links/${link.alias}/tags/abc`, undefined],
    ]
    for (const [method, path, body] of bad) {
      const res = await call(app, method, path, { token: account.key, body })
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}: ${show(res)}`).toBe(400)
      expect(res.body.error, show(res)).toBe('VALIDATION_FAILED')
    }
  })

  test('security: another account\'s link or tag is 404 and nothing changes; guest tokens are 401', async () => {
    const [owner, other] = [await newAccount(api.deps.db), await newAccount(api.deps.db)]
    const ownerTag = await createTag(owner, 'owner-tag')
    const otherTag = await createTag(other, 'other-tag')
    const ownerLink = await newLink(api.deps.db, owner.id, DEFAULT_DOMAIN)
    const otherLink = await newLink(api.deps.db, other.id, DEFAULT_DOMAIN)
    const assigned = await call(app, 'POST', `/api/v1/links/${ownerLink.alias}/tags`, { token: owner.key, body: { tagId: ownerTag.id } })
    expect(assigned.status, show(assigned)).toBe(201)

    const attempts: [string, string, unknown, string][] = [
      ['GET', `/api/v1/links/${ownerLink.alias}/tags`, undefined, 'LINK_NOT_FOUND'],
      ['POST', `/api/v1/links/${ownerLink.alias}/tags`, { tagId: otherTag.id }, 'LINK_NOT_FOUND'],
      ['POST', `/api/v1/links/${otherLink.alias}/tags`, { tagId: ownerTag.id }, 'TAG_NOT_FOUND'],
      ['DELETE', `/api/v1/links/${ownerLink.alias}/tags/${ownerTag.id}`, undefined, 'LINK_NOT_FOUND'],
      ['DELETE', `/api/v1/links/${otherLink.alias}/tags/${ownerTag.id}`, undefined, 'TAG_NOT_FOUND'],
    ]
    for (const [method, path, body, code] of attempts) {
      const res = await call(app, method, path, { token: other.key, body })
      expect(res.status, `${method} ${path}: ${show(res)}`).toBe(404)
      expect(res.body.error, `${method} ${path}: ${show(res)}`).toBe(code)
      expect(res.text, show(res)).not.toContain('owner-tag')
    }
    const still = await call(app, 'GET', `/api/v1/links/${ownerLink.alias}/tags`, { token: owner.key })
    expect(still.body.tags.map((t: { id: number }) => t.id), show(still)).toEqual([ownerTag.id])
    expect(await api.deps.db.select().from(linkTags).where(eq(linkTags.tagId, ownerTag.id))).toHaveLength(1)

    // A guest-made link (no account) is nobody's to tag.
    const guestLink = await newLink(api.deps.db, null, DEFAULT_DOMAIN)
    const orphan = await call(app, 'POST', `/api/v1/links/${guestLink.alias}/tags`, { token: owner.key, body: { tagId: ownerTag.id } })
    expect(orphan.status, show(orphan)).toBe(404)

    const guest = await newGuestToken(app)
    for (const [method, path] of [
      ['GET', `/api/v1/links/${ownerLink.alias}/tags`],
      ['POST', `/api/v1/links/${ownerLink.alias}/tags`],
      ['DELETE', `/api/v1/links/${ownerLink.alias}/tags/${ownerTag.id}`],
    ] as const) {
      const res = await call(app, method, path, { token: guest, body: method === 'POST' ? { tagId: ownerTag.id } : undefined })
      expect(res.status, `${method} ${path}: ${show(res)}`).toBe(401)
    }
    expect(await api.deps.db.select().from(linkTags).where(eq(linkTags.tagId, ownerTag.id))).toHaveLength(1)
  })
})
