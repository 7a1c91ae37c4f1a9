// The management routes (index.ts): each one's happy case with an API key, the refusals of a bad body or
// URL, the limit of 10, and the security cases: another account's webhook is 404 on every route, a key
// restricted to other scopes is 403 INSUFFICIENT_SCOPE (an Agent's token too: webhooks.agents.test.ts), the
// session's writes need their CSRF token. No secret is shown but at creation and rotation.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { webhooks } from '../../db/schema'
import { call, show, TEST_IP_HEADER, testApi, testConfig, type TestApp } from '../../../test/support/api'
import { newAccount, type TestAccount } from '../../../test/support/fixtures'
import { Browser, inputValue, signInByMail } from '../../../test/support/signin'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'
import { newWebhook } from '../../../test/support/webhooks'
import { MAX_WEBHOOKS } from './model'

let api: Awaited<ReturnType<typeof testApi>>
let app: TestApp
let sink: SmtpSink
const URL_A = 'https://hooks.example.com/a'

beforeAll(async () => {
  sink = await startSmtpSink()
  api = await testApi({ config: testConfig({ SMTP_URL: sink.url }) })
  app = api.app
})
afterAll(() => sink.close())

async function keyWith(human: TestAccount, scopes: string[] | null): Promise<string> {
  const res = await call(app, 'POST', '/api/v1/account/keys', { token: human.key, body: { name: 'webhooks test', scopes } })
  if (res.status !== 201) throw new Error(show(res))
  return res.body.data.key
}

describe('managing webhooks with an API key', () => {
  test('create shows the secret once; get and list never; patch, rotate, test, deliveries, redeliver, delete', async () => {
    const human = await newAccount(api.deps.db)
    const created = await call(app, 'POST', '/api/v1/webhooks', { token: human.key, body: { url: URL_A, events: ['link.created', 'link.deleted', 'link.created'], description: ' CRM ' } })
    expect(created.status, show(created)).toBe(201)
    expect(created.headers.get('cache-control')).toBe('no-store')
    const { secret, ...view } = created.body.data
    expect(secret, show(created)).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(view).toMatchObject({ url: URL_A, events: ['link.created', 'link.deleted'], description: 'CRM', status: 'active' })
    expect(view.id).toMatch(/^wh_/)
    // Sealed at rest: the database holds no copy of the secret in clear.
    const [row] = await api.deps.db.select().from(webhooks).where(eq(webhooks.id, view.id))
    expect(JSON.stringify(row)).not.toContain(secret.slice('whsec_'.length))

    const one = await call(app, 'GET', `/api/v1/webhooks/${view.id}`, { token: human.key })
    expect(one.status, show(one)).toBe(200)
    expect(one.body.data).toEqual(view)
    const list = await call(app, 'GET', '/api/v1/webhooks', { token: human.key })
    expect(list.body.data, show(list)).toEqual({ webhooks: [view] })
    expect(list.text).not.toContain('whsec_')

    const patched = await call(app, 'PATCH', `/api/v1/webhooks/${view.id}`, { token: human.key, body: { events: ['*'], description: null, url: 'https://hooks.example.com/b' } })
    expect(patched.status, show(patched)).toBe(200)
    expect(patched.body.data).toMatchObject({ events: ['*'], description: null, url: 'https://hooks.example.com/b' })

    const rotated = await call(app, 'POST', `/api/v1/webhooks/${view.id}/rotate-secret`, { token: human.key })
    expect(rotated.status, show(rotated)).toBe(200)
    expect(Object.keys(rotated.body.data)).toEqual(['secret'])
    expect(rotated.body.data.secret).toMatch(/^whsec_/)
    expect(rotated.body.data.secret).not.toBe(secret)

    const tested = await call(app, 'POST', `/api/v1/webhooks/${view.id}/test`, { token: human.key })
    expect(tested.status, show(tested)).toBe(201)
    const ping = tested.body.data.delivery
    expect(ping).toMatchObject({ type: 'ping', attempt: 0, status: 'pending', response_status: null, duration_ms: null, error: null })
    expect(ping.event_id).toMatch(/^evt_/)

    const again = await call(app, 'POST', `/api/v1/webhooks/${view.id}/deliveries/${ping.id}/redeliver`, { token: human.key })
    expect(again.status, show(again)).toBe(201)
    expect(again.body.data.delivery).toMatchObject({ type: 'ping', event_id: ping.event_id, status: 'pending', attempt: 0 })
    expect(again.body.data.delivery.id).not.toBe(ping.id)

    const first = await call(app, 'GET', `/api/v1/webhooks/${view.id}/deliveries?limit=1`, { token: human.key })
    expect(first.status, show(first)).toBe(200)
    expect(first.body.data.deliveries.map((d: { id: string }) => d.id)).toEqual([again.body.data.delivery.id])
    const second = await call(app, 'GET', `/api/v1/webhooks/${view.id}/deliveries?limit=1&cursor=${first.body.data.next_cursor}`, { token: human.key })
    expect(second.body.data, show(second)).toEqual({ deliveries: [ping], next_cursor: null })

    const deleted = await call(app, 'DELETE', `/api/v1/webhooks/${view.id}`, { token: human.key })
    expect(deleted.status, show(deleted)).toBe(200)
    expect(deleted.body.data).toEqual({ id: view.id })
    expect((await call(app, 'GET', `/api/v1/webhooks/${view.id}`, { token: human.key })).status).toBe(404)
    expect((await call(app, 'GET', '/api/v1/webhooks', { token: human.key })).body.data.webhooks).toEqual([])
  })

  test('a disabled webhook takes no test nor redelivery (409 WEBHOOK_DISABLED), and its pending deliveries fail', async () => {
    const human = await newAccount(api.deps.db)
    const { id } = await newWebhook(app, human.key, URL_A)
    const ping = (await call(app, 'POST', `/api/v1/webhooks/${id}/test`, { token: human.key })).body.data.delivery
    const disabled = await call(app, 'PATCH', `/api/v1/webhooks/${id}`, { token: human.key, body: { status: 'disabled' } })
    expect(disabled.body.data.status, show(disabled)).toBe('disabled')
    const test = await call(app, 'POST', `/api/v1/webhooks/${id}/test`, { token: human.key })
    expect(test.status, show(test)).toBe(409)
    expect(test.body.error).toBe('WEBHOOK_DISABLED')
    const redeliver = await call(app, 'POST', `/api/v1/webhooks/${id}/deliveries/${ping.id}/redeliver`, { token: human.key })
    expect(redeliver.body.error, show(redeliver)).toBe('WEBHOOK_DISABLED')
    const deliveries = await call(app, 'GET', `/api/v1/webhooks/${id}/deliveries`, { token: human.key })
    expect(deliveries.body.data.deliveries, show(deliveries)).toEqual([{ ...ping, status: 'failed', next_attempt_at: null, error: 'the webhook was disabled' }])
  })

  test('refused: a URL that is not https, names a private or loopback address, or carries credentials; unknown events; an empty list', async () => {
    const human = await newAccount(api.deps.db)
    const badUrls = [
      'http://hooks.example.com/x',
      'https://127.0.0.1/x',
      'https://10.1.2.3/x',
      'https://[::1]/x',
      'https://localhost/x',
      'https://user:pw@hooks.example.com/x',
      'ftp://hooks.example.com/x',
      'not a url',
    ]
    for (const url of badUrls) {
      const res = await call(app, 'POST', '/api/v1/webhooks', { token: human.key, body: { url, events: ['*'] } })
      expect(res.status, `${url}: ${show(res)}`).toBe(400)
      expect(res.body.error, url).toBe('WEBHOOK_URL_INVALID')
    }
    for (const events of [[], ['ping'], ['link.clicked']]) {
      const res = await call(app, 'POST', '/api/v1/webhooks', { token: human.key, body: { url: URL_A, events } })
      expect(res.status, `${JSON.stringify(events)}: ${show(res)}`).toBe(400)
      expect(res.body.error).toBe('VALIDATION_FAILED')
    }
    const { id } = await newWebhook(app, human.key, URL_A)
    const patch = await call(app, 'PATCH', `/api/v1/webhooks/${id}`, { token: human.key, body: { url: 'https://192.168.1.1/' } })
    expect(patch.body.error, show(patch)).toBe('WEBHOOK_URL_INVALID')
    expect((await call(app, 'GET', '/api/v1/webhooks', { token: human.key })).body.data.webhooks).toHaveLength(1)
  })

  test(`at most ${MAX_WEBHOOKS} webhooks an account: the next is 409 WEBHOOK_LIMIT_REACHED, and a deletion makes room`, async () => {
    const human = await newAccount(api.deps.db)
    const made = await Promise.all(Array.from({ length: MAX_WEBHOOKS }, (_, i) => newWebhook(app, human.key, `${URL_A}/${i}`)))
    const over = await call(app, 'POST', '/api/v1/webhooks', { token: human.key, body: { url: URL_A, events: ['*'] } })
    expect(over.status, show(over)).toBe(409)
    expect(over.body).toMatchObject({ error: 'WEBHOOK_LIMIT_REACHED', limit: MAX_WEBHOOKS, remaining: 0 })
    expect((await call(app, 'DELETE', `/api/v1/webhooks/${made[0]!.id}`, { token: human.key })).status).toBe(200)
    await newWebhook(app, human.key, URL_A)
    expect((await call(app, 'GET', '/api/v1/webhooks', { token: human.key })).body.data.webhooks).toHaveLength(MAX_WEBHOOKS)
  })
})

describe('security', () => {
  test("another account's webhook is 404 WEBHOOK_NOT_FOUND on every route, and stays as it was", async () => {
    const owner = await newAccount(api.deps.db)
    const stranger = await newAccount(api.deps.db)
    const { id } = await newWebhook(app, owner.key, URL_A)
    const ping = (await call(app, 'POST', `/api/v1/webhooks/${id}/test`, { token: owner.key })).body.data.delivery
    const routes: [string, string, unknown?][] = [
      ['GET', `/api/v1/webhooks/${id}`],
      ['PATCH', `/api/v1/webhooks/${id}`, { status: 'disabled' }],
      ['POST', `/api/v1/webhooks/${id}/rotate-secret`],
      ['POST', `/api/v1/webhooks/${id}/test`],
      ['GET', `/api/v1/webhooks/${id}/deliveries`],
      ['POST', `/api/v1/webhooks/${id}/deliveries/${ping.id}/redeliver`],
      ['DELETE', `/api/v1/webhooks/${id}`],
    ]
    for (const [method, path, body] of routes) {
      const res = await call(app, method, path, { token: stranger.key, body })
      expect(res.status, `${method} ${path}: ${show(res)}`).toBe(404)
      expect(res.body.error).toBe('WEBHOOK_NOT_FOUND')
    }
    expect((await call(app, 'GET', '/api/v1/webhooks', { token: stranger.key })).body.data.webhooks).toEqual([])
    const still = await call(app, 'GET', `/api/v1/webhooks/${id}`, { token: owner.key })
    expect(still.body.data.status, show(still)).toBe('active')
    expect((await call(app, 'GET', `/api/v1/webhooks/${id}/deliveries`, { token: owner.key })).body.data.deliveries).toHaveLength(1)
    // A delivery of another webhook, even of the same account, is not this one's.
    const other = await newWebhook(app, owner.key, URL_A)
    const foreign = await call(app, 'POST', `/api/v1/webhooks/${other.id}/deliveries/${ping.id}/redeliver`, { token: owner.key })
    expect(foreign.body.error, show(foreign)).toBe('WEBHOOK_DELIVERY_NOT_FOUND')
  })

  test('scopes: webhooks:read reads and cannot write; a key without webhook scopes is refused; webhooks:write writes', async () => {
    const human = await newAccount(api.deps.db)
    const { id } = await newWebhook(app, human.key, URL_A)
    const reader = await keyWith(human, ['webhooks:read'])
    const linksOnly = await keyWith(human, ['links:read', 'links:write'])
    const writer = await keyWith(human, ['webhooks:write'])
    expect((await call(app, 'GET', '/api/v1/webhooks', { token: reader })).status).toBe(200)
    expect((await call(app, 'GET', `/api/v1/webhooks/${id}/deliveries`, { token: reader })).status).toBe(200)
    const writes: [string, string, unknown?][] = [
      ['POST', '/api/v1/webhooks', { url: URL_A, events: ['*'] }],
      ['PATCH', `/api/v1/webhooks/${id}`, { status: 'disabled' }],
      ['POST', `/api/v1/webhooks/${id}/rotate-secret`],
      ['POST', `/api/v1/webhooks/${id}/test`],
      ['DELETE', `/api/v1/webhooks/${id}`],
    ]
    for (const [token, scope, routes] of [
      [reader, 'webhooks:write', writes],
      [linksOnly, 'webhooks:write', writes],
      [
        linksOnly,
        'webhooks:read',
        [
          ['GET', '/api/v1/webhooks'],
          ['GET', `/api/v1/webhooks/${id}`],
        ],
      ],
      [writer, 'webhooks:read', [['GET', '/api/v1/webhooks']]],
    ] as [string, string, [string, string, unknown?][]][]) {
      for (const [method, path, body] of routes) {
        const res = await call(app, method, path, { token, body })
        expect(res.status, `${scope} ${method} ${path}: ${show(res)}`).toBe(403)
        expect(res.body).toMatchObject({ error: 'INSUFFICIENT_SCOPE', data: { required_scopes: [scope] } })
        expect(res.headers.get('www-authenticate')).toStartWith(`Bearer error="insufficient_scope", scope="${scope}"`)
      }
    }
    const byWriter = await call(app, 'POST', '/api/v1/webhooks', { token: writer, body: { url: URL_A, events: ['link.updated'] } })
    expect(byWriter.status, show(byWriter)).toBe(201)
    const [stored] = await api.deps.db.select().from(webhooks).where(eq(webhooks.id, id))
    expect(stored?.status).toBe('active')
  })

  test('the signed-in session manages webhooks; its writes need X-CSRF-Token', async () => {
    const human = await newAccount(api.deps.db)
    const browser = new Browser(app)
    await signInByMail(browser, sink, `${human.id.toLowerCase()}@example.test`)
    const csrf = inputValue((await browser.get('/signin/done')).text, 'csrf')!
    const send = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const all: Record<string, string> = { [TEST_IP_HEADER]: browser.ip, cookie: browser.cookieHeader(), ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) }
      const res = await app.handle(new Request(`http://localhost${path}`, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body) }))
      const text = await res.text()
      return { status: res.status, text, body: JSON.parse(text) }
    }
    const forged = await send('POST', '/api/v1/webhooks', { url: URL_A, events: ['*'] })
    expect(forged.status, forged.text).toBe(403)
    expect(forged.body.error).toBe('CSRF_TOKEN_INVALID')
    const created = await send('POST', '/api/v1/webhooks', { url: URL_A, events: ['*'] }, { 'x-csrf-token': csrf })
    expect(created.status, created.text).toBe(201)
    const listed = await send('GET', '/api/v1/webhooks')
    expect(
      listed.body.data.webhooks.map((w: { id: string }) => w.id),
      listed.text,
    ).toEqual([created.body.data.id])
  })
})
