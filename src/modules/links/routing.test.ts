// GET, PUT and DELETE /api/v1/links/{alias}/routing, and routing on shorten and bulk: Pro only, ids
// assigned and kept, every refusal naming the rule and the field, dry_run writing nothing, the cache
// carrying the compiled routing, another account's link out of reach.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { links } from '../../db/schema'
import { newGuestToken, show } from '../../../test/support/api'
import { agentToken, newAccount, type TestAccount } from '../../../test/support/fixtures'
import { api, app, as, cached, create, freshAlias, setUp } from '../../../test/support/suites/manage'

beforeAll(setUp)

const IOS_RULE = { url: 'https://apps.apple.com/app/id1', when: { device: ['ios'] } }
const AB = {
  variants: [
    { url: 'https://example.com/a', weight: 50 },
    { url: 'https://example.com/b', weight: 50 },
  ],
}
const routingOf = (account: TestAccount, alias: string) => as(account.key, 'GET', `/api/v1/links/${alias}/routing`)
const putRouting = (account: TestAccount, alias: string, body: unknown, query = '') => as(account.key, 'PUT', `/api/v1/links/${alias}/routing${query}`, body)

async function proLink(): Promise<{ account: TestAccount; alias: string }> {
  const account = await newAccount(api.deps.db, 'pro')
  const alias = freshAlias('rt')
  await create(account, { url: 'https://example.com/home', alias })
  return { account, alias }
}

describe('PUT and GET /api/v1/links/{alias}/routing', () => {
  test('a link without routing: rules [] and ab null', async () => {
    const { account, alias } = await proLink()
    const read = await routingOf(account, alias)
    expect(read.status, show(read)).toBe(200)
    expect(read.body.data).toEqual({ rules: [], ab: null })
  })

  test('ids assigned (r1, r2 skipping a given one; a, b) and kept; the answer is what GET reads; the cache carries it', async () => {
    const { account, alias } = await proLink()
    const put = await putRouting(account, alias, {
      rules: [IOS_RULE, { id: 'r1x', url: 'https://example.com/de', when: { country: ['DE'], language: ['de'] } }, { url: 'https://example.com/q', when: { query: { ref: null, 'utm source': 'ü' } } }],
      ab: { ...AB, ends_at: new Date(Date.now() + 86_400_000).toISOString(), winner_by: 'leads' },
    })
    expect(put.status, show(put)).toBe(200)
    expect(put.body.data.rules.map((r: { id: string }) => r.id)).toEqual(['r1', 'r1x', 'r2'])
    expect(put.body.data.ab).toMatchObject({
      variants: [
        { id: 'a', weight: 50 },
        { id: 'b', weight: 50 },
      ],
      sticky: true,
      status: 'running',
      winner: null,
      winner_by: 'leads',
    })
    const read = await routingOf(account, alias)
    expect(read.body.data, show(read)).toEqual(put.body.data)
    const record = await cached('sho.rt', alias)
    expect(record, JSON.stringify(record)).toMatchObject({
      v: 2,
      url: 'https://example.com/home',
      r: {
        rules: [
          { id: 'r1', url: 'https://apps.apple.com/app/id1', device: ['ios'] },
          { id: 'r1x', country: ['DE'], language: ['de'] },
          {
            id: 'r2',
            query: [
              ['ref', null],
              ['utm source', 'ü'],
            ],
          },
        ],
        ab: { sticky: true, variants: [{ id: 'a' }, { id: 'b' }] },
      },
    })
    const [row] = await api.deps.db.select().from(links).where(eq(links.alias, alias))
    expect(row!.abEndsAt?.toISOString()).toBe(put.body.data.ab.ends_at)
  })

  test('DELETE removes it: the cache goes back to version 1 with no routing', async () => {
    const { account, alias } = await proLink()
    expect((await putRouting(account, alias, { rules: [IOS_RULE] })).status).toBe(200)
    const removed = await as(account.key, 'DELETE', `/api/v1/links/${alias}/routing`)
    expect(removed.status, show(removed)).toBe(200)
    expect((await routingOf(account, alias)).body.data).toEqual({ rules: [], ab: null })
    const record = await cached('sho.rt', alias)
    expect(record, JSON.stringify(record)).toMatchObject({ v: 1, url: 'https://example.com/home' })
    expect(record!.r, JSON.stringify(record)).toBeUndefined()
  })

  test('dry_run checks and answers the routing, writing nothing; a refusal is the same as without it', async () => {
    const { account, alias } = await proLink()
    const preview = await putRouting(account, alias, { rules: [IOS_RULE] }, '?dry_run=true')
    expect(preview.status, show(preview)).toBe(200)
    expect(preview.body.meta.dry_run).toBe(true)
    expect(preview.body.data.rules[0].id).toBe('r1')
    expect((await routingOf(account, alias)).body.data).toEqual({ rules: [], ab: null })
    const [row] = await api.deps.db.select().from(links).where(eq(links.alias, alias))
    expect(row!.routing).toBeNull()
    const refused = await putRouting(account, alias, { rules: [{ url: 'https://x.example/', when: { device: ['fridge'] } }] }, '?dry_run=true')
    expect(refused.status, show(refused)).toBe(400)
  })

  test('a completed test sent back as read stays completed; the same running variants keep their start', async () => {
    const { account, alias } = await proLink()
    const first = await putRouting(account, alias, { ab: AB })
    const [before] = await api.deps.db.select().from(links).where(eq(links.alias, alias))
    const again = await putRouting(account, alias, { ab: { ...first.body.data.ab, sticky: false } })
    expect(again.status, show(again)).toBe(200)
    const [after] = await api.deps.db.select().from(links).where(eq(links.alias, alias))
    expect(after!.routing!.ab!.started_at).toBe(before!.routing!.ab!.started_at)
    expect(after!.routing!.ab!.sticky).toBe(false)
    const completed = { ...after!.routing!, ab: { ...after!.routing!.ab!, status: 'completed' as const, winner: 'b', completed_at: new Date().toISOString() } }
    await api.deps.db.update(links).set({ routing: completed, abEndsAt: null }).where(eq(links.alias, alias))
    const read = await routingOf(account, alias)
    const back = await putRouting(account, alias, { rules: [IOS_RULE], ab: read.body.data.ab })
    expect(back.status, show(back)).toBe(200)
    expect(back.body.data.ab).toMatchObject({ status: 'completed', winner: 'b' })
    expect((await cached('sho.rt', alias))?.r?.ab, 'a completed test splits no traffic').toBeUndefined()
  })
})

describe('every refusal names the rule and the field', () => {
  const cases: [string, unknown, string][] = [
    ['unknown condition', { rules: [{ url: 'https://a.example/', when: { devices: ['ios'] } }] }, 'body.rules.0.when.devices'],
    ['no condition', { rules: [{ url: 'https://a.example/', when: {} }] }, 'body.rules.0.when'],
    ['unknown device', { rules: [IOS_RULE, { url: 'https://a.example/', when: { device: ['ios', 'fridge'] } }] }, 'body.rules.1.when.device.1'],
    ['unknown country', { rules: [{ url: 'https://a.example/', when: { country: ['XX'] } }] }, 'body.rules.0.when.country.0'],
    ['lower-case country', { rules: [{ url: 'https://a.example/', when: { country: ['de'] } }] }, 'body.rules.0.when.country'],
    ['bad language', { rules: [{ url: 'https://a.example/', when: { language: ['en_US'] } }] }, 'body.rules.0.when.language'],
    ['bad block', { rules: [{ url: 'https://a.example/', when: { ip: ['10.0.0.0/33'] } }] }, 'body.rules.0.when.ip.0'],
    ['empty list', { rules: [{ url: 'https://a.example/', when: { device: [] } }] }, 'body.rules.0.when.device'],
    ['51 values', { rules: [{ url: 'https://a.example/', when: { ip: Array.from({ length: 51 }, (_, i) => `10.0.0.${i}`) } }] }, 'body.rules.0.when.ip'],
    ['before not after after', { rules: [{ url: 'https://a.example/', when: { after: '2030-01-02T00:00:00Z', before: '2030-01-01T00:00:00Z' } }] }, 'body.rules.0.when.before'],
    ['not a date', { rules: [{ url: 'https://a.example/', when: { after: 'tomorrow' } }] }, 'body.rules.0.when.after'],
    [
      'duplicate id',
      {
        rules: [
          { ...IOS_RULE, id: 'x' },
          { ...IOS_RULE, id: 'x' },
        ],
      },
      'body.rules.1.id',
    ],
    ['bad id', { rules: [{ ...IOS_RULE, id: 'a b' }] }, 'body.rules.0.id'],
    ['21 rules', { rules: Array.from({ length: 21 }, () => IOS_RULE) }, 'body.rules'],
    ['rule destination', { rules: [{ url: 'javascript:alert(1)', when: { device: ['ios'] } }] }, 'body.rules.0.url'],
    ['rule loops back', { rules: [{ url: 'https://sho.rt/x', when: { device: ['ios'] } }] }, 'body.rules.0.url'],
    ['one variant', { ab: { variants: [{ url: 'https://a.example/', weight: 100 }] } }, 'body.ab.variants'],
    [
      'weights 60+50',
      {
        ab: {
          variants: [
            { url: 'https://a.example/', weight: 60 },
            { url: 'https://b.example/', weight: 50 },
          ],
        },
      },
      'body.ab.variants',
    ],
    [
      'weight 0',
      {
        ab: {
          variants: [
            { url: 'https://a.example/', weight: 0 },
            { url: 'https://b.example/', weight: 100 },
          ],
        },
      },
      'body.ab.variants.0.weight',
    ],
    [
      'variant destination',
      {
        ab: {
          variants: [
            { url: 'https://a.example/', weight: 50 },
            { url: 'ftp://b.example/', weight: 50 },
          ],
        },
      },
      'body.ab.variants.1.url',
    ],
    ['ends_at in the past', { ab: { ...AB, ends_at: '2001-01-01T00:00:00Z', winner_by: 'leads' } }, 'body.ab.ends_at'],
    ['ends_at past a year', { ab: { ...AB, ends_at: new Date(Date.now() + 400 * 86_400_000).toISOString(), winner_by: 'leads' } }, 'body.ab.ends_at'],
    ['ends_at without winner_by', { ab: { ...AB, ends_at: new Date(Date.now() + 86_400_000).toISOString() } }, 'body.ab.winner_by'],
    ['winner_by without ends_at', { ab: { ...AB, winner_by: 'sales' } }, 'body.ab.ends_at'],
    ['a new test sent as completed', { ab: { ...AB, status: 'completed' } }, 'body.ab.status'],
    ['unknown field', { rules: [], extra: 1 }, 'body.extra'],
  ]

  test.each(cases)('%s', async (_, body, field) => {
    const { account, alias } = await proLink()
    const refused = await putRouting(account, alias, body)
    expect(refused.status, show(refused)).toBe(400)
    expect(refused.body.hint, show(refused)).toContain(field)
    expect((await routingOf(account, alias)).body.data, 'nothing stored').toEqual({ rules: [], ab: null })
  })
})

describe('who may route', () => {
  test('a Free account: 403 PRO_REQUIRED with upgrade_url, on GET, PUT, DELETE and shorten', async () => {
    const account = await newAccount(api.deps.db, 'free')
    const alias = freshAlias('rt')
    await create(account, { url: 'https://example.com/free', alias })
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { rules: [IOS_RULE] }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await as(account.key, method, `/api/v1/links/${alias}/routing`, body)
      expect(refused.status, `${method}: ${show(refused)}`).toBe(403)
      expect(refused.body, show(refused)).toMatchObject({ error: 'PRO_REQUIRED', upgrade_url: expect.stringContaining('/api/v1/account/upgrade') })
    }
    const shorten = await as(account.key, 'POST', '/api/v1/shorten', { url: 'https://example.com/x', routing: { rules: [IOS_RULE] } })
    expect(shorten.status, show(shorten)).toBe(403)
    expect(shorten.body.error).toBe('PRO_REQUIRED')
  })

  test("another account's link is 404 on every verb and stays as it was", async () => {
    const { account, alias } = await proLink()
    expect((await putRouting(account, alias, { rules: [IOS_RULE] })).status).toBe(200)
    const other = await newAccount(api.deps.db, 'pro')
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { rules: [] }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await as(other.key, method, `/api/v1/links/${alias}/routing`, body)
      expect(refused.status, `${method}: ${show(refused)}`).toBe(404)
      expect(refused.body.error).toBe('LINK_NOT_FOUND')
    }
    expect((await routingOf(account, alias)).body.data.rules).toHaveLength(1)
  })

  test('a guest: routing on shorten is ignored and named in meta.notices', async () => {
    const guest = await newGuestToken(app)
    const made = await as(guest, 'POST', '/api/v1/shorten', { url: 'https://example.com/guest', routing: { rules: [IOS_RULE] } })
    expect(made.status, show(made)).toBe(200)
    expect(made.body.meta.notices.map((n: { field: string }) => n.field)).toContain('routing')
    const [row] = await api.deps.db.select().from(links).where(eq(links.alias, made.body.data.alias))
    expect(row!.routing).toBeNull()
  })

  test('an Agent: links:read reads, links:write is needed to change (403 INSUFFICIENT_SCOPE)', async () => {
    const { account, alias } = await proLink()
    const reader = await agentToken(app, account, ['links:read'])
    expect((await as(reader.token, 'GET', `/api/v1/links/${alias}/routing`)).status).toBe(200)
    const refused = await as(reader.token, 'PUT', `/api/v1/links/${alias}/routing`, { rules: [IOS_RULE] })
    expect(refused.status, show(refused)).toBe(403)
    expect(refused.body.error).toBe('INSUFFICIENT_SCOPE')
    const writer = await agentToken(app, account, ['links:write'])
    const put = await as(writer.token, 'PUT', `/api/v1/links/${alias}/routing`, { rules: [IOS_RULE] })
    expect(put.status, show(put)).toBe(200)
  })

  test('an Agent whose policy holds links.routing gets 202 with an approval; nothing changes yet', async () => {
    const { account, alias } = await proLink()
    const held = await agentToken(app, account, ['links:write'], { require_approval: ['links.routing'] })
    const answer = await as(held.token, 'PUT', `/api/v1/links/${alias}/routing`, { rules: [IOS_RULE] })
    expect(answer.status, show(answer)).toBe(202)
    expect(answer.body.data.approval.operation).toBe('links.routing')
    expect((await routingOf(account, alias)).body.data.rules).toEqual([])
  })
})

describe('an Agent whose policy holds links.routing', () => {
  test('cannot set routing unseen through a create (shorten or bulk): 400 naming the field, nothing created', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const held = await agentToken(app, account, ['links:write', 'links:read'], { require_approval: ['links.routing'] })
    const alias = freshAlias('rt')
    const shorten = await as(held.token, 'POST', '/api/v1/shorten', { url: 'https://example.com/x', alias, routing: { rules: [IOS_RULE] } })
    expect(shorten.status, show(shorten)).toBe(400)
    expect(shorten.body.hint).toContain('body.routing')
    expect((await as(account.key, 'GET', `/api/v1/links/${alias}`)).status).toBe(404)
    const bulk = await as(held.token, 'POST', '/api/v1/links/bulk', { links: [{ url: 'https://example.com/y' }, { url: 'https://example.com/z', routing: { rules: [IOS_RULE] } }] })
    expect(bulk.status, show(bulk)).toBe(400)
    expect(bulk.body.hint).toContain('links[1].routing')
    // Without routing the same Agent creates links as before.
    expect((await as(held.token, 'POST', '/api/v1/shorten', { url: 'https://example.com/x' })).status).toBe(200)
  })
})

describe('routing on shorten and bulk', () => {
  test('shorten with routing stores it and caches version 2; an invalid routing refuses the link', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const alias = freshAlias('rt')
    const made = await as(account.key, 'POST', '/api/v1/shorten', { url: 'https://example.com/s', alias, routing: { rules: [IOS_RULE], ab: AB } })
    expect(made.status, show(made)).toBe(200)
    expect((await routingOf(account, alias)).body.data.rules[0].id).toBe('r1')
    expect((await cached('sho.rt', alias))?.v).toBe(2)
    const bad = await as(account.key, 'POST', '/api/v1/shorten', {
      url: 'https://example.com/s',
      alias: freshAlias('rt'),
      routing: { rules: [{ url: 'https://a.example/', when: { country: ['XX'] } }] },
    })
    expect(bad.status, show(bad)).toBe(400)
    expect(bad.body.hint).toContain('body.routing.rules.0.when.country.0')
  })

  test('bulk: each item routed or refused alone, the refusal naming the item', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const [a, b] = [freshAlias('rt'), freshAlias('rt')]
    const bulk = await as(account.key, 'POST', '/api/v1/links/bulk', {
      links: [
        { url: 'https://example.com/1', alias: a, routing: { rules: [IOS_RULE] } },
        {
          url: 'https://example.com/2',
          alias: b,
          routing: {
            ab: {
              variants: [
                { url: 'https://a.example/', weight: 10 },
                { url: 'https://b.example/', weight: 10 },
              ],
            },
          },
        },
      ],
    })
    expect(bulk.status, show(bulk)).toBe(200)
    expect(bulk.body.data.results[0].success, show(bulk)).toBe(true)
    expect(bulk.body.data.results[1]).toMatchObject({ success: false, error: 'VALIDATION_FAILED', hint: expect.stringContaining('links[1].routing.ab.variants') })
    expect((await routingOf(account, a)).body.data.rules).toHaveLength(1)
  })
})
