// The dashboard's webhooks pages in Chromium, against the embedded product started with
// WEBHOOKS_ALLOW_PRIVATE_TARGETS (so an endpoint may be this test's loopback receiver, over http) and a
// one-retry schedule (a refused delivery fails a second after its first attempt). A person creates a
// webhook, copies the secret shown once, sends a test and sees it delivered; the receiver verifies every
// request with the npm package standardwebhooks and the secret the page showed. A link created through
// the API arrives as link.created; answered 500, its redelivery is listed pending then failed with 500;
// after a rotation the next event verifies with the new secret; an edit disables and enables it; another
// account sees none of it; deleted after confirming, nothing more is sent. Skipped, with a printed
// reason, where Chromium is absent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import type { Locator, Page } from 'playwright-core'
import { cancelDialog, HAVE_CHROMIUM, reportSkip, SCREENSHOTS_DIR, startProduct, type Product } from '../support/dashboard'
import { type Receiver, type Received, startReceiver, verified } from '../support/webhooks'

reportSkip('test/browser/dashboard-webhooks.test.ts')

let product: Product
let receiver: Receiver
let owner: { email: string; apiKey: string }
/** Signed in once by beforeAll (sign-in mails one code a minute per address); the tests go on from there. */
let page: Page
/** What the page handed out: the webhook's id (from its page's address) and its secrets. */
const hook = { id: '', secret: '', rotated: '', linkEvent: '' }

const call = async (path: string, token: string, init: { method?: string; body?: unknown } = {}) => {
  const response = await fetch(`${product.origin}${path}`, {
    method: init.method ?? (init.body ? 'POST' : 'GET'),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  })
  const text = await response.text()
  return { status: response.status, text, body: text ? JSON.parse(text) : undefined }
}

/** Polls until `find` answers something: deliveries are sent by the product's dispatcher within a second or two. */
async function eventually<T>(what: string, find: () => T | undefined | Promise<T | undefined>, deadlineMs = 15_000): Promise<T> {
  const until = Date.now() + deadlineMs
  for (;;) {
    const found = await find()
    if (found !== undefined) return found
    if (Date.now() > until) throw new Error(`not within ${deadlineMs} ms: ${what}; the receiver got ${JSON.stringify(receiver.received.map((r) => r.body))}`)
    await Bun.sleep(100)
  }
}

const receivedOf = (eventId: string) => receiver.received.filter((r) => r.headers['webhook-id'] === eventId)
const section = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true })
const clipboard = () => page.evaluate<string>('navigator.clipboard.readText()')
const deliveries = () => page.getByRole('region', { name: 'Deliveries', exact: true })
/** The rows of one event's deliveries, newest first. */
const rowsOf = (eventId: string) => deliveries().getByRole('row').filter({ hasText: eventId })
const cells = async (row: Locator) => (await row.getByRole('cell').allTextContents()).map((text) => text.trim())

/** Sends a test from the page; answers the ping the receiver got, once the page says it was delivered. */
async function sendTest(): Promise<Received> {
  const before = receiver.received.length
  const testing = page.getByRole('region', { name: 'Send a test', exact: true })
  const status = testing.getByRole('status')
  const said = async () => (await status.textContent()) ?? ''
  const previous = /evt_[\w-]+/.exec(await said())?.[0]
  await testing.getByRole('button', { name: 'Send a test event' }).click()
  // The status names the test's event; a test sent earlier is still named until the answer comes.
  const eventId = await eventually('the test delivered, in the page', async () => {
    const text = await said()
    const named = /evt_[\w-]+/.exec(text)?.[0]
    return named !== previous && text.includes('delivered: your endpoint answered HTTP 200') ? named : undefined
  })
  const ping = receiver.received.slice(before).find((r) => r.headers['webhook-id'] === eventId)
  expect(ping, JSON.stringify(receiver.received.slice(before))).toBeDefined()
  const row = rowsOf(eventId).first()
  await row.getByText('Delivered').waitFor()
  const [status_, response, , attempts] = await cells(row)
  expect([status_, response, attempts]).toEqual(['Delivered', '200', '1'])
  return ping!
}

describe.skipIf(!HAVE_CHROMIUM)('webhooks in the dashboard (Chromium, embedded product, a loopback receiver)', () => {
  beforeAll(async () => {
    receiver = startReceiver()
    receiver.answer(() => 200)
    product = await startProduct({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '1' })
    owner = await product.signUp('hooks')
    page = (await product.newPage()).page
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.goto(`${product.origin}/app`)
    await product.signIn(page, owner.email)
    await page.waitForURL((url) => url.pathname === '/app')
    mkdirSync(SCREENSHOTS_DIR, { recursive: true })
  }, 120_000)

  afterAll(async () => {
    await product?.stop()
    receiver?.stop()
  })

  test('create: the events ticked, the secret shown once and copied; listed with its events and status', async () => {
    await section('Webhooks').click()
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor()
    await page.getByText('No webhook yet').waitFor()
    const form = page.getByRole('region', { name: 'Create a webhook', exact: true })
    await form.getByLabel('Endpoint URL').fill(receiver.url)
    await form.getByLabel('Description').fill('Journey receiver')
    // No event chosen: the page says so before any call.
    await form.getByRole('button', { name: 'Create webhook' }).click()
    await form.getByRole('alert').filter({ hasText: 'Choose the events to send' }).waitFor()

    const events = form.getByRole('group', { name: 'Events' })
    await events.getByRole('checkbox', { name: /^link\.created / }).check()
    await events.getByRole('checkbox', { name: /^link\.deleted / }).check()
    // "All events" takes over the list while on, and gives the ticked types back when off.
    const all = form.getByRole('checkbox', { name: /^All events/ })
    await all.check()
    expect(await events.getByRole('checkbox', { name: /^link\.updated / }).isDisabled()).toBe(true)
    await all.uncheck()
    expect(await events.getByRole('checkbox', { name: /^link\.created / }).isChecked()).toBe(true)
    await form.getByRole('button', { name: 'Create webhook' }).click()

    const shown = page.getByRole('region', { name: 'The signing secret of your new webhook' })
    await shown.waitFor()
    expect(await shown.textContent()).toContain('it will not be shown again')
    // Signing needs the secret itself: the box must not claim only a hash is kept.
    expect(await shown.textContent()).toContain('keeps it encrypted')
    expect(await shown.textContent()).not.toContain('only its hash')
    await shown.getByRole('button', { name: 'Copy the signing secret' }).click()
    hook.secret = await clipboard()
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
    expect(await shown.locator('code').textContent()).toBe(hook.secret)

    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: receiver.url }) })
    expect(await cells(row)).toEqual(['link.created, link.deleted', 'Active', 'Journey receiver', expect.any(String)])
    await shown.getByRole('button', { name: 'Done, hide it' }).click()
    await shown.waitFor({ state: 'detached' })
    expect(await page.content()).not.toContain(hook.secret)

    await row.getByRole('link', { name: receiver.url }).click()
    await page.getByRole('heading', { name: receiver.url, level: 1 }).waitFor()
    hook.id = new URL(page.url()).pathname.split('/').at(-1)!
    expect(hook.id).toMatch(/^wh_/)
    await deliveries().getByText('No delivery yet').waitFor()
    expect(product.problems).toEqual([])
  }, 60_000)

  test('a test: the receiver gets a ping that verifies with the secret shown; the page lists it delivered with 200', async () => {
    const ping = await sendTest()
    const event = verified(hook.secret, ping)
    expect(event).toMatchObject({ type: 'ping', data: { webhook_id: hook.id } })
    expect(ping.headers['content-type']).toBe('application/json')
    expect(product.problems).toEqual([])
  }, 30_000)

  test('a link created through the API arrives as link.created, verified, and is listed delivered', async () => {
    const made = await call('/api/v1/shorten', owner.apiKey, { body: { url: `https://example.com/hooked-${crypto.randomUUID().slice(0, 6)}` } })
    expect(made.status, made.text).toBe(200)
    const arrived = await eventually('link.created at the receiver', () => receiver.received.find((r) => verified(hook.secret, r).type === 'link.created'))
    const event = verified(hook.secret, arrived)
    expect(event.data).toMatchObject({ alias: made.body.data.alias, full_url: made.body.data.full_url })
    hook.linkEvent = event.id

    await deliveries().getByRole('button', { name: 'Refresh deliveries' }).click()
    const row = rowsOf(hook.linkEvent).first()
    await row.getByText('Delivered').waitFor()
    expect((await cells(row)).slice(0, 4)).toEqual(['Delivered', '200', expect.stringMatching(/^\d+ ms$/), '1'])
    expect(await row.getByRole('rowheader').textContent()).toContain('link.created')
    expect(product.problems).toEqual([])
  }, 30_000)

  test('the receiver answers 500: a redelivery (same webhook-id) is listed with 500, pending, then failed after its retry', async () => {
    receiver.answer(() => 500)
    await rowsOf(hook.linkEvent)
      .first()
      .getByRole('button', { name: /^Redeliver/ })
      .click()
    await deliveries().getByRole('status').filter({ hasText: 'Queued again as a new delivery' }).waitFor()
    const rows = rowsOf(hook.linkEvent)
    await eventually('the redelivery listed', async () => ((await rows.count()) === 2 ? true : undefined))
    const newest = rows.first()
    // Its first attempt answered 500: pending, its retry due a second later (WEBHOOK_RETRY_SCHEDULE=1).
    await newest.getByRole('cell', { name: '500', exact: true }).waitFor()
    // The retry answers 500 too: failed, the page following it on its own.
    await newest.getByText('Failed').waitFor()
    const [status, response, , attempts, next, , error] = await cells(newest)
    expect([status, response, attempts, next]).toEqual(['Failed', '500', '2', '—'])
    expect(error).toContain('500')
    // The first delivery stays as it was.
    expect((await cells(rows.nth(1))).slice(0, 2)).toEqual(['Delivered', '200'])
    // Every attempt carried the event's own id: 1 delivered + 2 refused.
    expect(receivedOf(hook.linkEvent).length).toBe(3)
    expect(receivedOf(hook.linkEvent).every((r) => verified(hook.secret, r).id === hook.linkEvent)).toBe(true)
    expect(product.problems).toEqual([])
  }, 30_000)

  test('rotate after confirming: the new secret is shown once, the next event verifies with it (and with the old one, for a day)', async () => {
    receiver.answer(() => 200)
    const rotate = page.getByRole('region', { name: 'Signing secret', exact: true })
    await rotate.getByRole('button', { name: 'Rotate secret' }).click()
    const dialog = page.getByRole('dialog', { name: 'Rotate the signing secret?' })
    expect(await dialog.textContent()).toContain('24 hours')
    await cancelDialog(dialog)
    expect(await page.getByRole('region', { name: 'The new signing secret' }).count()).toBe(0)
    await rotate.getByRole('button', { name: 'Rotate secret' }).click()
    await dialog.getByRole('button', { name: 'Rotate secret' }).click()

    const shown = page.getByRole('region', { name: 'The new signing secret' })
    await shown.waitFor()
    expect(await shown.textContent()).toContain('keeps signing beside it for 24 hours')
    await shown.getByRole('button', { name: 'Copy the new signing secret' }).click()
    hook.rotated = await clipboard()
    expect(hook.rotated).toMatch(/^whsec_/)
    expect(hook.rotated).not.toBe(hook.secret)

    const ping = await sendTest()
    expect(verified(hook.rotated, ping)).toMatchObject({ type: 'ping', data: { webhook_id: hook.id } })
    expect(verified(hook.secret, ping).type).toBe('ping')
    expect(ping.headers['webhook-signature']?.split(' ').length).toBe(2)

    await shown.getByRole('button', { name: 'Done, hide it' }).click()
    await shown.waitFor({ state: 'detached' })
    await page.screenshot({ path: `${SCREENSHOTS_DIR}/dashboard-webhooks.png`, fullPage: true })
    await page.setViewportSize({ width: 390, height: 844 })
    await page.getByRole('heading', { name: receiver.url, level: 1 }).waitFor()
    // At phone width nothing is wider than the screen but the deliveries table's own scroll box.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390)
    await page.screenshot({ path: `${SCREENSHOTS_DIR}/dashboard-webhooks-phone.png`, fullPage: true })
    await page.setViewportSize({ width: 1280, height: 900 })
    expect(product.problems).toEqual([])
  }, 30_000)

  test('edit: description and all events, disabled (no test offered) and enabled again; the API agrees', async () => {
    const edit = page.getByRole('region', { name: 'Edit', exact: true })
    await edit.getByLabel('Description').fill('Journey receiver, every event')
    await edit.getByRole('checkbox', { name: /^All events/ }).check()
    await edit.getByRole('checkbox', { name: /^Active/ }).uncheck()
    await edit.getByRole('button', { name: 'Save changes' }).click()
    await edit.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    const facts = page.locator('dl.facts')
    await facts.getByText('Disabled: nothing is sent').waitFor()
    expect(await facts.textContent()).toContain('All events')
    expect(await page.getByRole('button', { name: 'Send a test event' }).isDisabled()).toBe(true)
    const disabled = await call(`/api/v1/webhooks/${hook.id}`, owner.apiKey)
    expect(disabled.body.data, disabled.text).toMatchObject({ status: 'disabled', events: ['*'], description: 'Journey receiver, every event' })

    await edit.getByRole('checkbox', { name: /^Active/ }).check()
    await edit.getByRole('button', { name: 'Save changes' }).click()
    await facts.getByText('Active', { exact: true }).waitFor()
    expect(await page.getByRole('button', { name: 'Send a test event' }).isEnabled()).toBe(true)
    expect((await call(`/api/v1/webhooks/${hook.id}`, owner.apiKey)).body.data.status).toBe('active')
    expect(product.problems).toEqual([])
  }, 30_000)

  test("another account sees none of it: its list is empty, this webhook's page is not found, the API answers 404", async () => {
    const other = await product.signUp('stranger')
    const { context, page: theirs } = await product.newPage()
    await theirs.goto(`${product.origin}/app/webhooks`)
    await product.signIn(theirs, other.email)
    await theirs.waitForURL((url) => url.pathname === '/app/webhooks')
    await theirs.getByText('No webhook yet').waitFor()
    expect(await theirs.content()).not.toContain(receiver.url)

    await theirs.goto(`${product.origin}/app/webhooks/${hook.id}`)
    await theirs.getByRole('heading', { name: 'Webhook not found', level: 1 }).waitFor()
    await product.expectRefused([404, `/api/v1/webhooks/${hook.id}`])
    for (const path of [`/api/v1/webhooks/${hook.id}`, `/api/v1/webhooks/${hook.id}/deliveries`]) expect((await call(path, other.apiKey)).status, path).toBe(404)
    expect((await call('/api/v1/webhooks', other.apiKey)).body.data.webhooks).toEqual([])
    await context.close()
    expect(product.problems).toEqual([])
  }, 60_000)

  test('deleted after confirming: gone from the list, 404 from the API, and a new link sends nothing', async () => {
    await page.getByRole('button', { name: 'Delete webhook' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete this webhook?' })
    await cancelDialog(dialog)
    await page.getByRole('heading', { name: receiver.url, level: 1 }).waitFor()
    await page.getByRole('button', { name: 'Delete webhook' }).click()
    await dialog.getByRole('button', { name: 'Delete webhook' }).click()
    await page.waitForURL((url) => url.pathname === '/app/webhooks')
    await page.getByText('No webhook yet').waitFor()
    expect((await call(`/api/v1/webhooks/${hook.id}`, owner.apiKey)).status).toBe(404)

    const before = receiver.received.length
    expect((await call('/api/v1/shorten', owner.apiKey, { body: { url: 'https://example.com/after-delete' } })).status).toBe(200)
    await Bun.sleep(2_500)
    expect(receiver.received.length).toBe(before)
    expect(product.problems).toEqual([])
  }, 30_000)
})
