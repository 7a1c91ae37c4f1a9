// The routing's webhook events, each committed with its change: a routing replaced or removed is
// link.updated (a dry run none); an A/B test ended (on a read, or by the sweep) is routing.ab_completed
// with the link and its routing, and link.updated with the winner as the link's URL.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { links } from '../../db/schema'
import { createServices } from '../../services'
import { call, show, testApi } from '../../../test/support/api'
import { newAccount, type TestAccount } from '../../../test/support/fixtures'
import { eventsOf, subscribe } from '../webhooks/events-kit.test'
import { subscribers, writeEvents } from '../webhooks/outbox'
import { completeAbTest } from './routing-manage'

let api: Awaited<ReturnType<typeof testApi>>
beforeAll(async () => {
  api = await testApi()
}, 120_000)

const HOUR = 3_600_000
const RULES = [{ id: 'ios', url: 'https://apps.example/ios', when: { device: ['ios'] } }]

async function subscribedPro(events: string[]): Promise<TestAccount> {
  const account = await newAccount(api.deps.db, 'pro')
  await subscribe(api.app, account.key, events)
  return account
}

async function shorten(account: TestAccount, routing?: unknown): Promise<{ alias: string; id: string }> {
  const alias = `rw-${crypto.randomUUID().slice(0, 10)}`
  const made = await call(api.app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: 'https://example.com/home', alias, ...(routing !== undefined && { routing }) } })
  if (made.status !== 200) throw new Error(show(made))
  const [row] = await api.deps.db.select().from(links).where(eq(links.alias, alias))
  return { alias, id: row!.id }
}

/** A link whose A/B test's time has come (its end moved into the past). */
async function endedTest(account: TestAccount) {
  const ab = {
    variants: [
      { url: 'https://example.com/a', weight: 60 },
      { url: 'https://example.com/b', weight: 40 },
    ],
    ends_at: new Date(Date.now() + 2 * HOUR).toISOString(),
    winner_by: 'leads',
  }
  const link = await shorten(account, { rules: RULES, ab })
  const [row] = await api.deps.db.select().from(links).where(eq(links.id, link.id))
  const past = new Date(Date.now() - 1000)
  await api.deps.db
    .update(links)
    .set({ routing: { ...row!.routing!, ab: { ...row!.routing!.ab!, ends_at: past.toISOString() } }, abEndsAt: past })
    .where(eq(links.id, link.id))
  return link
}

describe('routing events', () => {
  test('PUT and DELETE …/routing: link.updated each; a dry run none', async () => {
    const account = await subscribedPro(['link.updated'])
    const { alias } = await shorten(account)
    const path = `/api/v1/links/${alias}/routing`
    expect((await call(api.app, 'PUT', `${path}?dry_run=true`, { token: account.key, body: { rules: RULES } })).status).toBe(200)
    const put = await call(api.app, 'PUT', path, { token: account.key, body: { rules: RULES } })
    expect(put.status, show(put)).toBe(200)
    const removed = await call(api.app, 'DELETE', path, { token: account.key })
    expect(removed.status, show(removed)).toBe(200)
    const events = await eventsOf(api.deps.db, account.id)
    expect(events.map((e) => [e.type, e.data.alias, e.data.full_url])).toEqual([
      ['link.updated', alias, 'https://example.com/home'],
      ['link.updated', alias, 'https://example.com/home'],
    ])
  })

  test('a test ended on a read: routing.ab_completed with the link and its routing, and link.updated with the winner', async () => {
    const account = await subscribedPro(['routing.ab_completed', 'link.updated'])
    const { alias } = await endedTest(account)
    const read = await call(api.app, 'GET', `/api/v1/links/${alias}/routing`, { token: account.key })
    expect(read.status, show(read)).toBe(200)
    expect(read.body.data.ab.status).toBe('completed')
    const completed = await eventsOf(api.deps.db, account.id, 'routing.ab_completed')
    expect(completed).toHaveLength(1)
    expect(completed[0]!.data.routing).toEqual(read.body.data)
    expect(completed[0]!.data.link).toMatchObject({ alias, full_url: 'https://example.com/a' })
    const updated = await eventsOf(api.deps.db, account.id, 'link.updated')
    expect(updated.map((e) => [e.data.alias, e.data.full_url])).toEqual([[alias, 'https://example.com/a']])
  })

  test('a test ended by the sweep (its own services, the outbox wired): routing.ab_completed', async () => {
    const account = await subscribedPro(['routing.ab_completed'])
    const { id, alias } = await endedTest(account)
    const [row] = await api.deps.db.select().from(links).where(eq(links.id, id))
    const services = { ...createServices(api.deps), webhookOutbox: { subscribers, write: writeEvents } }
    expect(await completeAbTest(services, row!)).not.toBeNull()
    const events = await eventsOf(api.deps.db, account.id)
    expect(events.map((e) => [e.type, e.data.link.alias, e.data.routing.ab.winner])).toEqual([['routing.ab_completed', alias, 'a']])
  })
})
