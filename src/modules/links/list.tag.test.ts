// GET /api/v1/links?tag=: only the links carrying one of the account's tags, combined with search, domain,
// offset and the cursor; another account's tag and unknown tags are 404 TAG_NOT_FOUND like on the tag routes.
import { beforeAll, describe, expect, test } from 'bun:test'
import { show, type CallResult } from '../../../test/support/api'
import { newAccount, newDomain, newLink } from '../../../test/support/fixtures'
import { api, as, setUp } from '../../../test/support/suites/manage'

beforeAll(setUp)

const aliases = (res: CallResult): string[] => res.body.data.links.map((l: { alias: string }) => l.alias)

async function newTag(key: string, name: string): Promise<number> {
  const res = await as(key, 'POST', '/api/v1/tags', { name })
  if (res.status !== 201) throw new Error(show(res))
  return res.body.tag.id
}

async function tagLink(key: string, tagId: number, alias: string, domain?: string) {
  const res = await as(key, 'POST', `/api/v1/links/${alias}/tags`, { tagId, ...(domain && { domain }) })
  if (res.status !== 201) throw new Error(show(res))
}

/** Every page of a list, by cursor, as aliases. */
async function allPages(key: string, query: string): Promise<string[]> {
  const seen: string[] = []
  let cursor = ''
  for (let page = 0; page < 20; page++) {
    const res = await as(key, 'GET', `/api/v1/links?${query}${cursor}`)
    expect(res.status, show(res)).toBe(200)
    seen.push(...aliases(res))
    if (!res.body.data.pagination.next_cursor) return seen
    cursor = `&cursor=${res.body.data.pagination.next_cursor}`
  }
  throw new Error('more than 20 pages')
}

describe('GET /api/v1/links?tag=', () => {
  test('only the tagged links, with a total of them; combines with search, domain, offset and the cursor', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const host = await newDomain(api.deps.db, account.id)
    const vip = await newTag(account.key, 'vip')
    const other = await newTag(account.key, 'other')
    const made = []
    for (let i = 0; i < 6; i++) made.push(await newLink(api.deps.db, account.id, 'sho.rt', `tg-${i}-${crypto.randomUUID().slice(0, 8)}`, `https://example.com/${i % 2 ? 'odd' : 'even'}/${i}`))
    const custom = await newLink(api.deps.db, account.id, host, 'c', 'https://example.com/odd/custom')
    for (const link of [made[0]!, made[1]!, made[3]!, made[5]!]) await tagLink(account.key, vip, link.alias)
    await tagLink(account.key, vip, custom.alias, host)
    await tagLink(account.key, other, made[2]!.alias)
    // Newest first; created in order, so the list is the reverse (custom is the newest).
    const tagged = [custom.alias, made[5]!.alias, made[3]!.alias, made[1]!.alias, made[0]!.alias]

    const all = await as(account.key, 'GET', `/api/v1/links?tag=${vip}`)
    expect(all.status, show(all)).toBe(200)
    expect(aliases(all)).toEqual(tagged)
    expect(all.body.data.pagination, show(all)).toEqual({ total: 5, limit: 20, offset: 0, next_cursor: null })
    expect(await allPages(account.key, `tag=${vip}&limit=2`)).toEqual(tagged)

    const offset = await as(account.key, 'GET', `/api/v1/links?tag=${vip}&limit=2&offset=1`)
    expect(aliases(offset)).toEqual(tagged.slice(1, 3))
    expect(offset.body.data.pagination.total, show(offset)).toBe(5)
    const first = await as(account.key, 'GET', `/api/v1/links?tag=${vip}&limit=2`)
    const afterCursor = await as(account.key, 'GET', `/api/v1/links?tag=${vip}&limit=2&offset=1&cursor=${first.body.data.pagination.next_cursor}`)
    expect(aliases(afterCursor), show(afterCursor)).toEqual(tagged.slice(3, 5))

    const searched = await as(account.key, 'GET', `/api/v1/links?tag=${vip}&search=odd`)
    expect(aliases(searched)).toEqual([custom.alias, made[5]!.alias, made[3]!.alias, made[1]!.alias])
    expect(searched.body.data.pagination.total, show(searched)).toBe(4)
    const onDomain = await as(account.key, 'GET', `/api/v1/links?tag=${vip}&domain=${host}`)
    expect(aliases(onDomain)).toEqual([custom.alias])
    expect(onDomain.body.data.pagination.total, show(onDomain)).toBe(1)
    const everything = await as(account.key, 'GET', `/api/v1/links?tag=${vip}&domain=sho.rt&search=even&sort=created_asc`)
    expect(aliases(everything)).toEqual([made[0]!.alias])
    expect(everything.body.data.pagination.total, show(everything)).toBe(1)

    const otherTag = await as(account.key, 'GET', `/api/v1/links?tag=${other}`)
    expect(aliases(otherTag)).toEqual([made[2]!.alias])
    const unused = await newTag(account.key, 'unused')
    const none = await as(account.key, 'GET', `/api/v1/links?tag=${unused}`)
    expect(none.status, show(none)).toBe(200)
    expect(none.body.data.pagination, show(none)).toEqual({ total: 0, limit: 20, offset: 0, next_cursor: null })
    // Deleting the tag takes it off every link: the filter then names no tag of the account.
    expect((await as(account.key, 'DELETE', `/api/v1/tags/${other}`)).status).toBe(200)
    expect((await as(account.key, 'GET', `/api/v1/links?tag=${other}`)).body.error).toBe('TAG_NOT_FOUND')
  })

  test("security: another account's tag is 404 TAG_NOT_FOUND like an unknown one, and lists nothing of its owner", async () => {
    const owner = await newAccount(api.deps.db)
    const stranger = await newAccount(api.deps.db)
    const secret = await newTag(owner.key, 'secret')
    const link = await newLink(api.deps.db, owner.id, 'sho.rt')
    await tagLink(owner.key, secret, link.alias)
    // The stranger's own link, tagged with its own tag: the owner's tag id must not reach it either.
    const mine = await newTag(stranger.key, 'mine')
    const strangers = await newLink(api.deps.db, stranger.id, 'sho.rt')
    await tagLink(stranger.key, mine, strangers.alias)
    for (const tag of [secret, 2_147_483_647]) {
      for (const extra of ['', '&sort=clicks_desc', '&search=t-', `&cursor=${'A'.repeat(8)}`]) {
        const res = await as(stranger.key, 'GET', `/api/v1/links?tag=${tag}${extra}`)
        // A bad cursor is refused before the tag is looked at; otherwise the tag is not found.
        const expected = extra.startsWith('&cursor') ? [400, 'VALIDATION_FAILED'] : [404, 'TAG_NOT_FOUND']
        expect([res.status, res.body.error], `${tag}${extra}: ${show(res)}`).toEqual(expected)
        expect(res.text).not.toContain(link.alias)
      }
    }
    const own = await as(stranger.key, 'GET', `/api/v1/links?tag=${mine}`)
    expect(aliases(own), show(own)).toEqual([strangers.alias])
  })

  test('a tag that is not an integer from 1 to 2^31-1, or given twice, is 400 VALIDATION_FAILED', async () => {
    const account = await newAccount(api.deps.db)
    const tag = await newTag(account.key, 'x')
    for (const query of ['tag=0', 'tag=-1', 'tag=abc', 'tag=1.5', 'tag=', 'tag=2147483648', 'tag=1e40', `tag=${tag}&tag=${tag}`]) {
      const res = await as(account.key, 'GET', `/api/v1/links?${query}`)
      expect(res.status, `${query}: ${show(res)}`).toBe(400)
      expect(res.body.error, `${query}: ${show(res)}`).toBe('VALIDATION_FAILED')
    }
  })
})
