// The tags of a link: GET, POST and DELETE /api/v1/links/{alias}/tags (on the default or a custom
// domain), concurrent assignment, bad input, and other accounts' links and tags.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { linkTags } from '../../db/schema'
import { call, newGuestToken, show } from '../../../test/support/api'
import { newAccount, newLink } from '../../../test/support/fixtures'
import { api, app, createTag, DEFAULT_DOMAIN, setUp } from '../../../test/support/suites/tags'

beforeAll(setUp)

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
    const results = await Promise.all(Array.from({ length: 8 }, () => call(app, 'POST', `/api/v1/links/${link.alias}/tags`, { token: account.key, body: { tagId: tag.id } })))
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

  test("security: another account's link or tag is 404 and nothing changes; guest tokens are 401", async () => {
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
    expect(
      still.body.tags.map((t: { id: number }) => t.id),
      show(still),
    ).toEqual([ownerTag.id])
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
