// link.disabled from every path that disables a link: an operator's action, a host ban, a block list
// takedown and an account's suspension. The event goes to the link's account, committed with the change;
// a guest link has no account and no event; a flag or a restore sends none.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { like } from 'drizzle-orm'
import { webhookEvents } from '../../db/schema'
import { createServices } from '../../services'
import { takeDownListed } from '../abuse/takedown'
import { adminKit, call, insertLink, show, type Kit } from '../admin/admin-kit.test'
import { eventsOf, subscribe } from './events-kit.test'
import { subscribers, writeEvents } from './outbox'

let kit: Kit
beforeAll(async () => {
  kit = await adminKit()
}, 120_000)
afterAll(() => kit.close())

const admin = (method: string, path: string, body?: unknown) => call(kit.api.app, method, `/api/v1/admin${path}`, { token: kit.operator.adminKey, body })
const run = () => crypto.randomUUID().slice(0, 8)

async function subscribedOwner(events = ['link.disabled']) {
  const owner = await kit.account()
  await subscribe(kit.api.app, owner.key, events)
  return owner
}

describe('link.disabled', () => {
  test("an operator's disable: one event with the link record, to the link's account", async () => {
    const owner = await subscribedOwner()
    const link = await insertLink(kit, owner.id, 'https://disable-me.example/page')
    expect((await admin('POST', `/links/${link.id}/flag`)).status).toBe(200)
    const res = await admin('POST', `/links/${link.id}/disable`, { reason: 'phishing' })
    expect(res.status, show(res)).toBe(200)
    const events = await eventsOf(kit.api.deps.db, owner.id)
    expect(
      events.map((e) => e.type),
      JSON.stringify(events),
    ).toEqual(['link.disabled'])
    expect(events[0]!.data).toEqual({
      short_url: `${kit.api.deps.config.shortBaseUrl}/${link.alias}`,
      alias: link.alias,
      full_url: link.url,
      domain: 'sho.rt',
      manage_code: null,
      created_at: expect.any(String),
      expires_at: null,
      has_password: false,
    })
    // Disabled again: no change, no second event.
    expect((await admin('POST', `/links/${link.id}/disable`, { reason: 'again' })).status).toBe(200)
    expect(await eventsOf(kit.api.deps.db, owner.id)).toHaveLength(1)
  })

  test('a guest link has no account: disabling it writes no event', async () => {
    const link = await insertLink(kit, null, 'https://guest-disabled.example/x')
    expect((await admin('POST', `/links/${link.id}/disable`)).status).toBe(200)
    const rows = await kit.api.deps.db
      .select({ id: webhookEvents.id })
      .from(webhookEvents)
      .where(like(webhookEvents.body, `%${link.alias}%`))
    expect(rows).toEqual([])
  })

  test('a host ban: one event per link of the account on that host; an endpoint without the type gets none', async () => {
    const owner = await subscribedOwner()
    const other = await subscribedOwner(['link.updated'])
    const host = `banned-${run()}.example`
    const links = [await insertLink(kit, owner.id, `https://${host}/a`), await insertLink(kit, owner.id, `https://www.${host}/b`)]
    const unsubscribed = await insertLink(kit, other.id, `https://${host}/c`)
    const res = await admin('POST', '/hosts', { host })
    expect(res.status, show(res)).toBe(201)
    expect(res.body.data.links_disabled).toBe(3)
    const events = await eventsOf(kit.api.deps.db, owner.id, 'link.disabled')
    expect(events.map((e) => e.data.alias).sort()).toEqual(links.map((l) => l.alias).sort())
    expect(await eventsOf(kit.api.deps.db, other.id), unsubscribed.alias).toEqual([])
  })

  test('a block list takedown: one event per link it disables', async () => {
    const owner = await subscribedOwner()
    const host = `listed-${run()}.example`
    const link = await insertLink(kit, owner.id, `https://${host}/login`)
    const services = { ...createServices(kit.api.deps), webhookOutbox: { subscribers, write: writeEvents } }
    const listed = (href: string) => new URL(href).hostname === host
    expect(await takeDownListed(services, { kind: 'added', source: 'test', hosts: [host], prefixes: [] }, listed)).toBe(1)
    const events = await eventsOf(kit.api.deps.db, owner.id)
    expect(events.map((e) => [e.type, e.data.alias])).toEqual([['link.disabled', link.alias]])
  })

  test("an account's suspension: one event per link it disables; the restore sends none", async () => {
    const owner = await subscribedOwner()
    const made = [await insertLink(kit, owner.id, 'https://suspended.example/1'), await insertLink(kit, owner.id, 'https://suspended.example/2', { state: 'flagged', stateReason: 'reported' })]
    const suspended = await admin('POST', `/accounts/${owner.id}/suspend`)
    expect(suspended.status, show(suspended)).toBe(200)
    expect(suspended.body.data.links_changed).toBe(2)
    const events = await eventsOf(kit.api.deps.db, owner.id)
    expect(events.map((e) => [e.type, e.data.alias]).sort()).toEqual(made.map((l) => ['link.disabled', l.alias]).sort())
    const restored = await admin('POST', `/accounts/${owner.id}/restore`)
    expect(restored.body.data.links_changed, show(restored)).toBe(2)
    expect(await eventsOf(kit.api.deps.db, owner.id)).toHaveLength(2)
  })
})
