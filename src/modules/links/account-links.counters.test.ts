// account_link_months, the per-month link counters Postgres keeps with triggers on links: equal to a
// count of the links, month by month, after every path that adds, removes or moves one (creates, bulk
// with refused items, deletes, a domain's deletion, a guest's links claimed, an account's deletion), and
// untouched by dry runs. What the API reads from them: the quota, meta.usage and the list's total.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, sql } from 'drizzle-orm'
import { accountLinkMonths, accounts, links } from '../../db/schema'
import { call, newGuestToken, show, type CallResult } from '../../../test/support/api'
import { newAccount, newDomain, newLink, type TestAccount } from '../../../test/support/fixtures'
import { latestCode, uniqueEmail } from '../../../test/support/signup'
import { api, app, register, setUp, sink, tearDown, verify } from '../../../test/support/suites/registration'
import { monthWindow } from '../account/meta'
import { newId } from '../../lib/ids'

beforeAll(setUp)
afterAll(tearDown)

const thisMonth = () => monthWindow(Date.now()).start
/** An instant of last month (one second before this month began). */
const lastMonth = () => new Date(thisMonth().getTime() - 1000)
const monthOf = (at: Date) => `${at.toISOString().slice(0, 7)}-01`

const shorten = (key: string, body: unknown, query = '') => call(app, 'POST', `/api/v1/shorten${query}`, { token: key, body })
const bulk = (key: string, items: unknown[], query = '') => call(app, 'POST', `/api/v1/links/bulk${query}`, { token: key, body: { links: items } })
const remove = (key: string, alias: string, query = '') => call(app, 'DELETE', `/api/v1/links/${alias}${query}`, { token: key })
const freshAlias = () => `c-${crypto.randomUUID().slice(0, 12)}`

/** `count` links of the account straight in the database (one multi-row insert), created at `createdAt`. */
async function fill(accountId: string, count: number, createdAt = new Date()): Promise<string[]> {
  const rows = Array.from({ length: count }, () => ({ id: newId('link'), domain: 'sho.rt', alias: freshAlias(), url: 'https://example.com/fill', accountId, createdAt }))
  await api.deps.db.insert(links).values(rows)
  return rows.map((row) => row.alias)
}

/** The counters (months at 0 left out) and the links counted month by month here, independently of the triggers. */
async function countersAndLinks(accountId: string) {
  const counted = await api.deps.db.select().from(accountLinkMonths).where(eq(accountLinkMonths.accountId, accountId))
  const rows = await api.deps.db.select({ createdAt: links.createdAt }).from(links).where(eq(links.accountId, accountId))
  const actual: Record<string, number> = {}
  for (const { createdAt } of rows) actual[monthOf(createdAt)] = (actual[monthOf(createdAt)] ?? 0) + 1
  const counters = Object.fromEntries(counted.filter((row) => row.links !== 0).map((row) => [row.month, row.links]))
  return { counters, actual, negative: counted.filter((row) => row.links < 0) }
}

async function expectCountersExact(accountId: string, expected: Record<string, number>) {
  const { counters, actual, negative } = await countersAndLinks(accountId)
  expect(actual, 'the links themselves').toEqual(expected)
  expect(counters, 'the counters against the links').toEqual(actual)
  expect(negative, 'no counter below zero').toEqual([])
}

async function usage(key: string): Promise<number> {
  const status = await call(app, 'GET', '/api/v1/account/status', { token: key })
  expect(status.status, show(status)).toBe(200)
  return status.body.data.usage.links_this_month
}

async function listTotal(key: string, query = ''): Promise<number> {
  const list = await call(app, 'GET', `/api/v1/links?limit=1${query}`, { token: key })
  expect(list.status, show(list)).toBe(200)
  return list.body.data.pagination.total
}

const outcomes = (res: CallResult) => res.body.data.results.map((r: { success: boolean; error?: string }) => (r.success ? 'ok' : r.error))

describe('account_link_months equals the links, month by month', () => {
  test('creates, a bulk with items refused for quota and alias, deletes: counters, usage and the list total agree', async () => {
    const account = await newAccount(api.deps.db)
    const now = monthOf(new Date())
    const before = monthOf(lastMonth())
    const old = await fill(account.id, 5, lastMonth())
    await fill(account.id, 990)
    const taken = freshAlias()
    const one = await shorten(account.key, { url: 'https://example.com/one', alias: taken })
    expect(one.status, show(one)).toBe(200)
    await expectCountersExact(account.id, { [now]: 991, [before]: 5 })

    const items = [{ url: 'https://example.com/taken', alias: taken }, ...Array.from({ length: 11 }, (_, i) => ({ url: `https://example.com/b/${i}` }))]
    const res = await bulk(account.key, items)
    expect(res.status, show(res)).toBe(200)
    expect(outcomes(res), show(res)).toEqual(['ALIAS_TAKEN', ...Array(9).fill('ok'), 'LINK_QUOTA_EXCEEDED', 'LINK_QUOTA_EXCEEDED'])
    expect(res.body.meta.usage.links_this_month, show(res)).toBe(1000)
    await expectCountersExact(account.id, { [now]: 1000, [before]: 5 })

    for (const alias of [taken, old[0]!]) {
      const gone = await remove(account.key, alias)
      expect(gone.status, show(gone)).toBe(200)
    }
    await expectCountersExact(account.id, { [now]: 999, [before]: 4 })
    expect(await usage(account.key)).toBe(999)
    expect(await listTotal(account.key)).toBe(1003)
    expect(await listTotal(account.key, '&search=example.com%2Fb%2F')).toBe(9)
    expect(await listTotal(account.key, '&domain=sho.rt')).toBe(1003)
  })

  test('dry runs of shorten, bulk and delete count nothing', async () => {
    const account = await newAccount(api.deps.db, 'pro')
    const [kept] = await fill(account.id, 1)
    const previews = [
      await shorten(account.key, { url: 'https://example.com/dry' }, '?dry_run=true'),
      await bulk(account.key, [{ url: 'https://example.com/dry/1' }, { url: 'https://example.com/dry/2' }], '?dry_run=true'),
      await remove(account.key, kept!, '?dry_run=true'),
    ]
    for (const preview of previews) expect(preview.body.meta.dry_run, show(preview)).toBe(true)
    await expectCountersExact(account.id, { [monthOf(new Date())]: 1 })
    expect(await usage(account.key)).toBe(1)
  })

  test("a guest's claimed links count in the month each was created", async () => {
    const guest = await newGuestToken(app)
    const aliases: string[] = []
    for (const path of ['a', 'b']) {
      const made = await shorten(guest, { url: `https://example.com/guest/${path}` })
      expect(made.status, show(made)).toBe(200)
      aliases.push(made.body.data.alias)
    }
    // A guest link is never counted (no account), whatever its creation time.
    await api.deps.db
      .update(links)
      .set({ createdAt: lastMonth() })
      .where(and(eq(links.alias, aliases[0]!), eq(links.domain, 'sho.rt')))
    const email = uniqueEmail('counted')
    expect((await register(guest, email)).status).toBe(200)
    const verified = await verify(guest, email, latestCode(sink, email))
    expect(verified.status, show(verified)).toBe(200)
    const [account] = await api.deps.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.email, email))
    await expectCountersExact(account!.id, { [monthOf(new Date())]: 1, [monthOf(lastMonth())]: 1 })
    expect(await usage(verified.body.data.api_key)).toBe(1)
    expect(await listTotal(verified.body.data.api_key)).toBe(2)
  })

  test('a link moved to another account or another month is counted where it is now', async () => {
    const [from, to] = [await newAccount(api.deps.db), await newAccount(api.deps.db)]
    const link = await newLink(api.deps.db, from.id, 'sho.rt')
    await api.deps.db.update(links).set({ accountId: to.id }).where(eq(links.id, link.id))
    await expectCountersExact(from.id, {})
    await expectCountersExact(to.id, { [monthOf(new Date())]: 1 })
    await api.deps.db.update(links).set({ createdAt: lastMonth() }).where(eq(links.id, link.id))
    await expectCountersExact(to.id, { [monthOf(lastMonth())]: 1 })
  })

  test("deleting a custom domain takes its links off the account's counters", async () => {
    const account = await newAccount(api.deps.db)
    const host = await newDomain(api.deps.db, account.id)
    await newLink(api.deps.db, account.id, host, 'x')
    await newLink(api.deps.db, account.id, host, 'y')
    await newLink(api.deps.db, account.id, 'sho.rt')
    const res = await call(app, 'DELETE', `/api/v1/domains/${host}`, { token: account.key })
    expect(res.status, show(res)).toBe(200)
    await expectCountersExact(account.id, { [monthOf(new Date())]: 1 })
  })
})

describe("an account's deletion", () => {
  async function withLinks(): Promise<TestAccount> {
    const account = await newAccount(api.deps.db)
    await fill(account.id, 3)
    await fill(account.id, 2, lastMonth())
    return account
  }

  async function expectNothingLeft(accountId: string) {
    expect(await api.deps.db.select().from(accountLinkMonths).where(eq(accountLinkMonths.accountId, accountId))).toEqual([])
    expect(await api.deps.db.select().from(links).where(eq(links.accountId, accountId))).toEqual([])
  }

  test('deletes its links and its counters, without an error', async () => {
    const account = await withLinks()
    await api.deps.db.delete(accounts).where(eq(accounts.id, account.id))
    await expectNothingLeft(account.id)
  })

  test("succeeds when the counters' cascade runs before the links' (the links' trigger finds nothing to subtract)", async () => {
    const account = await withLinks()
    await api.deps.db.transaction(async (tx) => {
      await tx.delete(accountLinkMonths).where(eq(accountLinkMonths.accountId, account.id))
      await tx.delete(accounts).where(eq(accounts.id, account.id))
    })
    await expectNothingLeft(account.id)
  })
})

describe('the quota read from the counters (attacks)', () => {
  test('a deleted link of this month gives its quota back exactly once; one of last month gives none', async () => {
    const account = await newAccount(api.deps.db)
    const [older] = await fill(account.id, 1, lastMonth())
    const filled = await fill(account.id, 1000)
    expect((await shorten(account.key, { url: 'https://example.com/full' })).status).toBe(429)
    expect((await remove(account.key, older!)).status).toBe(200)
    expect((await shorten(account.key, { url: 'https://example.com/still-full' })).status).toBe(429)

    expect((await remove(account.key, filled[0]!)).status).toBe(200)
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => shorten(account.key, { url: `https://example.com/again/${i}` })))
    const statuses = results.map((r) => r.status).sort()
    expect(statuses, results.map(show).join('\n')).toEqual([200, 429, 429, 429, 429])
    await expectCountersExact(account.id, { [monthOf(new Date())]: 1000 })
  })

  test('creates racing deletes never pass the quota and leave the counters exact', async () => {
    const account = await newAccount(api.deps.db)
    const filled = await fill(account.id, 1000)
    const deletes = filled.slice(0, 3).map((alias) => remove(account.key, alias))
    const creates = Array.from({ length: 10 }, (_, i) => shorten(account.key, { url: `https://example.com/race/${i}` }))
    const [deleted, created] = [await Promise.all(deletes), await Promise.all(creates)]
    for (const res of deleted) expect(res.status, show(res)).toBe(200)
    const made = created.filter((r) => r.status === 200).length
    expect(made, created.map(show).join('\n')).toBeLessThanOrEqual(3)
    expect(created.filter((r) => r.status === 429).length, created.map(show).join('\n')).toBe(10 - made)
    await expectCountersExact(account.id, { [monthOf(new Date())]: 997 + made })
    // Whatever the race left free is free now, and no more.
    const rest = await Promise.all(Array.from({ length: 5 }, (_, i) => shorten(account.key, { url: `https://example.com/rest/${i}` })))
    expect(rest.filter((r) => r.status === 200).length, rest.map(show).join('\n')).toBe(3 - made)
    await expectCountersExact(account.id, { [monthOf(new Date())]: 1000 })
    expect(await usage(account.key)).toBe(1000)
  })
})

test('the counters are read, not the links: a counter changed by hand shows in usage and the total', async () => {
  const account = await newAccount(api.deps.db)
  await fill(account.id, 2)
  await api.deps.db
    .update(accountLinkMonths)
    .set({ links: sql`${accountLinkMonths.links} + 40` })
    .where(and(eq(accountLinkMonths.accountId, account.id), eq(accountLinkMonths.month, monthOf(new Date()))))
  expect(await usage(account.key)).toBe(42)
  expect(await listTotal(account.key)).toBe(42)
  expect(await listTotal(account.key, '&domain=sho.rt'), 'a filtered total still counts the links').toBe(2)
})
