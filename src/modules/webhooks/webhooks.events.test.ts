// The events of link changes, end to end: made through REST (one link, bulk), and through MCP tools
// (which run the REST routes), each change commits its event, which a receiver gets signed, with the link
// as the API returns it (no click counts, no password). An endpoint gets only the types it subscribed
// to, and an account without one writes no event at all.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { webhookEvents } from '../../db/schema'
import { call, show, type TestApp } from '../../../test/support/api'
import { agentToken, newAccount } from '../../../test/support/fixtures'
import { callTool, inProcessClient, showResult } from '../../../test/support/mcp'
import { newWebhook, startReceiver, testDispatcher, verified, webhookApi, type Receiver } from '../../../test/support/webhooks'

let api: Awaited<ReturnType<typeof webhookApi>>
let app: TestApp
const receivers: Receiver[] = []

beforeAll(async () => {
  api = await webhookApi()
  app = api.app
})
afterAll(() => {
  for (const receiver of receivers) receiver.stop()
})

/** An account with one endpoint for `events`, its receiver, and a way to send what is due to it. */
async function subscribed(events: string[]) {
  const human = await newAccount(api.deps.db)
  const receiver = startReceiver()
  receivers.push(receiver)
  const webhook = await newWebhook(app, human.key, receiver.url, events)
  const dispatcher = testDispatcher(api.deps.db, api.deps.config, { only: [webhook.id] })
  /** Sends what is due; every event received so far, verified. */
  const received = async () => {
    await dispatcher.runDue()
    return receiver.received.map((got) => verified(webhook.secret, got))
  }
  return { human, receiver, webhook, received }
}

const newAlias = () => `wh-${crypto.randomUUID().slice(0, 10)}`

describe('link events through REST', () => {
  test('shorten, update and delete one link: link.created, link.updated, link.deleted, each with the link record', async () => {
    const { human, received } = await subscribed(['link.created', 'link.updated', 'link.deleted'])
    const alias = newAlias()
    // Sent after each change: two deliveries to one endpoint may arrive in either order.
    const created = await call(app, 'POST', '/api/v1/shorten', { token: human.key, body: { url: 'https://example.com/one', alias, password: 'hunter22' } })
    expect(created.status, show(created)).toBe(200)
    await received()
    const updated = await call(app, 'PATCH', `/api/v1/links/${alias}`, { token: human.key, body: { url: 'https://example.com/two' } })
    expect(updated.status, show(updated)).toBe(200)
    await received()
    const deleted = await call(app, 'DELETE', `/api/v1/links/${alias}`, { token: human.key })
    expect(deleted.status, show(deleted)).toBe(200)

    const events = await received()
    expect(events.map((event) => event.type)).toEqual(['link.created', 'link.updated', 'link.deleted'])
    const { clicks: _c, last_clicked_at: _l, ...record } = created.body.data
    expect(events[0]!.data).toEqual(record)
    expect(events[1]!.data).toMatchObject({ alias, full_url: 'https://example.com/two', has_password: true })
    expect(events[2]!.data).toMatchObject({ alias, full_url: 'https://example.com/two' })
    for (const event of events) {
      expect(event.id).toMatch(/^evt_/)
      expect(JSON.stringify(event)).not.toContain('hunter22')
      expect(Object.keys(event.data)).not.toContain('clicks')
    }
  })

  test('bulk: one link.created for each link made, none for the items refused', async () => {
    const { human, received } = await subscribed(['link.created'])
    const aliases = [newAlias(), newAlias()]
    const bulk = await call(app, 'POST', '/api/v1/links/bulk', {
      token: human.key,
      body: { links: [{ url: 'https://example.com/b1', alias: aliases[0] }, { url: 'not a url' }, { url: 'https://example.com/b2', alias: aliases[1] }] },
    })
    expect(bulk.body.data.summary, show(bulk)).toEqual({ total: 3, succeeded: 2, failed: 1 })
    // One transaction's events, sent together: in either order.
    const events = (await received()).sort((a, b) => aliases.indexOf(String(a.data.alias)) - aliases.indexOf(String(b.data.alias)))
    expect(events.map((event) => [event.type, event.data.alias])).toEqual([
      ['link.created', aliases[0]],
      ['link.created', aliases[1]],
    ])
    expect(new Set(events.map((event) => event.id)).size).toBe(2)
  })

  test('a dry run writes no event; an endpoint gets only the types it subscribed to', async () => {
    const { human, received } = await subscribed(['link.deleted'])
    const alias = newAlias()
    const dry = await call(app, 'POST', '/api/v1/shorten?dry_run=true', { token: human.key, body: { url: 'https://example.com/dry', alias } })
    expect(dry.status, show(dry)).toBe(200)
    expect((await call(app, 'POST', '/api/v1/shorten', { token: human.key, body: { url: 'https://example.com/real', alias } })).status).toBe(200)
    expect((await call(app, 'PATCH', `/api/v1/links/${alias}`, { token: human.key, body: { url: 'https://example.com/moved' } })).status).toBe(200)
    expect((await call(app, 'DELETE', `/api/v1/links/${alias}?dry_run=true`, { token: human.key })).status).toBe(200)
    expect((await call(app, 'DELETE', `/api/v1/links/${alias}`, { token: human.key })).status).toBe(200)
    const events = await received()
    expect(events.map((event) => [event.type, event.data.alias])).toEqual([['link.deleted', alias]])
  })

  test('an account without a webhook writes no event row; nor does one whose endpoint is disabled', async () => {
    const plain = await newAccount(api.deps.db)
    const { human, webhook } = await subscribed(['*'])
    expect((await call(app, 'PATCH', `/api/v1/webhooks/${webhook.id}`, { token: human.key, body: { status: 'disabled' } })).status).toBe(200)
    for (const account of [plain, human]) {
      const alias = newAlias()
      expect((await call(app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: 'https://example.com/quiet', alias } })).status).toBe(200)
      expect((await call(app, 'PATCH', `/api/v1/links/${alias}`, { token: account.key, body: { url: 'https://example.com/quieter' } })).status).toBe(200)
      expect((await call(app, 'DELETE', `/api/v1/links/${alias}`, { token: account.key })).status).toBe(200)
      const rows = await api.deps.db.select({ id: webhookEvents.id }).from(webhookEvents).where(eq(webhookEvents.accountId, account.id))
      expect(rows, account.id).toEqual([])
    }
  })
})

describe('link events through MCP', () => {
  test('create_link, update_link and delete_link produce the same events as their REST routes', async () => {
    const { human, received } = await subscribed(['*'])
    const { token } = await agentToken(app, human, ['links:read', 'links:write', 'links:delete'], { require_approval: [] })
    const client = await inProcessClient(app, token)
    const alias = newAlias()
    try {
      for (const [tool, args] of [
        ['create_link', { url: 'https://example.com/mcp', alias }],
        ['update_link', { alias, url: 'https://example.com/mcp-2' }],
        ['delete_link', { alias }],
      ] as [string, Record<string, unknown>][]) {
        const result = await callTool(client, tool, args)
        expect(result.isError, `${tool}: ${showResult(result)}`).toBeFalsy()
        await received()
      }
    } finally {
      await client.close()
    }
    const events = await received()
    expect(events.map((event) => [event.type, event.data.alias, event.data.full_url])).toEqual([
      ['link.created', alias, 'https://example.com/mcp'],
      ['link.updated', alias, 'https://example.com/mcp-2'],
      ['link.deleted', alias, 'https://example.com/mcp-2'],
    ])
  })
})
