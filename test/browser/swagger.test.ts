// Swagger UI in a real browser: Debian's Chromium driven by playwright-core (no browser is ever
// downloaded), against the app on a real port. Skipped, with a printed reason, where Chromium is absent;
// .ci/run installs it, so CI runs this in both passes.
//
// As a newcomer uses it: the page lists the operations (collapsed), the credential is given in the
// Authorize dialog, and each operation is opened on its own, "Try it out", Execute as prefilled, twice.
// Opening everything at once is what made this test slow and flaky (Swagger UI resolves each open
// operation separately: 40-211 s for all of them on a busy 2-core machine), so only the operations
// executed are opened. Waits are for events (support/swagger-page.ts) under generous deadlines.
//
// The service's short domain is one of its own (not the document's example sho.rt), so nothing passes
// because an example happens to be served here; the account is Pro (stats) and owns the link the
// document's `alias` example names (spring-sale).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core'
import { testApi, testConfig, TEST_IP_HEADER, uniqueIp } from '../support/api'
import { newAccount, newLink } from '../support/fixtures'
import { authorizeBearer, close, execute, openForTrying, operationsOf, parameterValues, type Executed, type Operation } from '../support/swagger-page'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const HAVE_CHROMIUM = existsSync(CHROMIUM)
if (!HAVE_CHROMIUM) {
  console.log(`test/browser/swagger.test.ts: SKIPPED: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`)
}

const LAUNCH_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
/** Deadlines for whole tests (each opens several operations); the page itself waits per event. */
const LIST_TIMEOUT_MS = 300_000
const RUN_TIMEOUT_MS = 900_000
/** The Idempotency-Key example the document used to prefill. */
const OLD_EXAMPLE_KEY = '3f1b6a52-8c0e-4d7e-9d0b-2a6f5c1e9b47'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** Callable with no credential, then with the guest token, then with the API key; in this order. */
const PUBLIC_OPERATIONS = ['getHealth', 'createGuestToken', 'checkAlias']
const GUEST_OPERATIONS = ['getAccountStatus', 'createLink']
const KEY_OPERATIONS = ['getAccountStatus', 'createLink', 'createLinks', 'listLinks', 'getLink', 'getLinkStats', 'updateLink', 'listLinkTags', 'listTags', 'listDomains', 'listAgents', 'listApprovals']

let server: ReturnType<typeof Bun.serve>
let origin: string
let browser: Browser
let context: BrowserContext
let page: Page
let apiKey: string
let operations: Map<string, Operation>
/** Operations whose parameters include the Idempotency-Key header. */
const keyed = new Set<string>()
/** Every request the browser made (any page of the context), and those to another origin. */
const requested: string[] = []
const foreign: string[] = []
/** Uncaught page errors, console errors and CSP violations. */
const problems: string[] = []

interface Run {
  op: Operation
  as: 'nobody' | 'guest' | 'api key'
  /** The form as prefilled, before the first Execute. */
  fields: Record<string, string>
  first: Executed
  second: Executed
}
const runs: Run[] = []
/** Per operation: open, Try it out, two Executes (printed after each test, to see where time goes). */
const durations: string[] = []
const printDurations = (what: string) => console.log(`test/browser/swagger.test.ts: ${what}: ${durations.splice(0).join(', ')}`)

const show = (e: Executed) => `${e.status} ${e.url.pathname}${e.url.search} ${e.body.slice(0, 400)}`

/** Opens the operation, Executes it twice as prefilled; both answers must be 2xx. */
async function executeTwice(operationId: string, as: Run['as']): Promise<Run> {
  const op = operations.get(operationId)
  if (!op) throw new Error(`no operation ${operationId} in /swagger/json`)
  const started = Date.now()
  const block = await openForTrying(page, op)
  const fields = await parameterValues(block)
  const first = await execute(page, op, block)
  const second = await execute(page, op, block)
  durations.push(`${operationId} ${Date.now() - started} ms`)
  for (const e of [first, second]) expect(e.status, `${as}: ${operationId}: ${show(e)}`).toBeWithin(200, 300)
  await expectRendered(op, block)
  await close(block)
  const run = { op, as, fields, first, second }
  runs.push(run)
  return run
}

/** Nothing like "Could not render" in the open operation, and parameter examples by name. */
async function expectRendered(op: Operation, block: Locator): Promise<void> {
  expect(await block.locator('.fallback').count(), op.operationId).toBe(0)
  expect(await block.innerText(), op.operationId).not.toContain('Could not render')
  // OpenAPI's Parameter Object `examples` is a map of name → Example Object. Given an array, Swagger UI
  // offers the indexes (0, 1, …) and fills in nothing.
  const labels = await block.locator('select.examples-select-element option').allInnerTexts()
  expect(labels.length > 0 && labels.every((label, i) => label === String(i)), `${op.operationId}: ${labels}`).toBe(false)
}

describe.skipIf(!HAVE_CHROMIUM)('Swagger UI in Chromium', () => {
  beforeAll(async () => {
    const domain = `swagger-${crypto.randomUUID().slice(0, 8)}.test`
    const { app, database } = await testApi({ config: testConfig({ SHORT_DOMAIN: domain, SHORT_BASE_URL: `https://${domain}` }) })
    const account = await newAccount(database.db, 'pro')
    apiKey = account.key
    await newLink(database.db, account.id, domain, 'spring-sale')
    server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => app.handle(request) })
    origin = server.url.origin
    const doc = (await (await fetch(`${origin}/swagger/json`)).json()) as any
    operations = operationsOf(doc)
    for (const op of operations.values()) {
      const parameters = (doc.paths[op.path][op.method].parameters ?? []) as { in: string; name: string }[]
      if (parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key')) keyed.add(op.operationId)
    }

    browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS })
    // A fresh client IP for the per-IP limits (POST /guest/token), as every test uses.
    context = await browser.newContext({ extraHTTPHeaders: { [TEST_IP_HEADER]: uniqueIp() } })
    await context.route('**/*', (route) => {
      const url = route.request().url()
      requested.push(url)
      if (new URL(url).origin === origin) return route.continue()
      foreign.push(url)
      return route.abort('blockedbyclient')
    })
    context.on('request', (request) => {
      const url = new URL(request.url())
      if (!['data:', 'blob:'].includes(url.protocol) && url.origin !== origin && !foreign.includes(request.url())) foreign.push(request.url())
    })
    page = await context.newPage()
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console ${message.type()}: ${message.text()}`)
    })
    // The trailing-slash URL is the one that used to fetch a 404 document.
    await page.goto(`${origin}/swagger/`)
  }, LIST_TIMEOUT_MS)

  afterAll(async () => {
    await browser?.close()
    server?.stop(true)
  })

  test(
    'the page lists every operation of /swagger/json (by operationId), none opened by itself',
    async () => {
      expect(operations.size).toBeGreaterThan(20)
      const ids = [...operations.values()].map((op) => `operations-${op.tag}-${op.operationId}`)
      await page
        .locator('.opblock')
        .nth(ids.length - 1)
        .waitFor({ timeout: LIST_TIMEOUT_MS })
      expect((await page.$$eval('.opblock', (blocks) => blocks.map((b) => b.id))).sort()).toEqual(ids.sort())
      expect(await page.locator('.opblock.is-open').count()).toBe(0)
      expect(await page.title()).toBe('Link service API')
    },
    LIST_TIMEOUT_MS,
  )

  test(
    'with no credential, then a guest token given through Authorize: each operation Executed twice as prefilled is 2xx',
    async () => {
      for (const id of PUBLIC_OPERATIONS) await executeTwice(id, 'nobody')
      const guest = runs.find((run) => run.op.operationId === 'createGuestToken')!
      const token: string = JSON.parse(guest.second.body).data.guest_token
      expect(token).toStartWith('gt_')
      await authorizeBearer(page, token)
      for (const id of GUEST_OPERATIONS) {
        const run = await executeTwice(id, 'guest')
        expect(run.first.requestHeaders.authorization, id).toBe(`Bearer ${token}`)
      }
      printDurations('no credential, guest')
    },
    RUN_TIMEOUT_MS,
  )

  test(
    'with an API key given through Authorize: each operation Executed twice as prefilled is 2xx',
    async () => {
      await authorizeBearer(page, apiKey)
      for (const id of KEY_OPERATIONS) {
        const run = await executeTwice(id, 'api key')
        expect(run.first.requestHeaders.authorization, id).toBe(`Bearer ${apiKey}`)
      }
      // A second tag of the same name is 409 TAG_EXISTS by design: created once, as prefilled.
      const createTag = operations.get('createTag')!
      const tagBlock = await openForTrying(page, createTag)
      const tag = await execute(page, createTag, tagBlock)
      expect(tag.status, show(tag)).toBe(201)
      expect(tag.requestHeaders['idempotency-key']).toMatch(UUID)
      await close(tagBlock)
      // The case that used to fail: another body after the first Execute (with a fixed key, a 400).
      const shorten = operations.get('createLink')!
      const block = await openForTrying(page, shorten)
      await block.locator('textarea.body-param__text').fill(JSON.stringify({ url: 'https://example.com/another-body' }))
      const other = await execute(page, shorten, block)
      expect(other.status, show(other)).toBe(200)
      const before = runs.find((run) => run.as === 'api key' && run.op === shorten)!
      expect(other.requestHeaders['idempotency-key']).toMatch(UUID)
      expect(other.requestHeaders['idempotency-key']).not.toBe(before.first.requestHeaders['idempotency-key'])
      await close(block)
      printDurations('API key')
    },
    RUN_TIMEOUT_MS,
  )

  test('nothing prefilled changes the request: no dry_run, domain or fixed Idempotency-Key', () => {
    expect(runs.length).toBe(PUBLIC_OPERATIONS.length + GUEST_OPERATIONS.length + KEY_OPERATIONS.length)
    for (const { op, fields, first, second } of runs) {
      for (const name of ['dry_run', 'domain', 'Idempotency-Key']) {
        if (name in fields) expect(fields[name], `${op.operationId}: ${name} is filled in`).toBe('')
      }
      for (const e of [first, second]) {
        expect(e.url.searchParams.has('dry_run'), show(e)).toBe(false)
        expect(e.url.searchParams.has('domain'), show(e)).toBe(false)
      }
    }
    expect(runs.some((run) => 'dry_run' in run.fields) && runs.some((run) => 'domain' in run.fields)).toBe(true)
  })

  test('Idempotency-Key: a fresh random key with every Execute, so the second Execute runs again (no replay)', () => {
    const keys: string[] = []
    for (const { op, as, first, second } of runs) {
      const where = `${as}: ${op.operationId}`
      if (!keyed.has(op.operationId)) {
        expect(first.requestHeaders['idempotency-key'], where).toBeUndefined()
        continue
      }
      for (const e of [first, second]) {
        const key = e.requestHeaders['idempotency-key']
        expect(key, where).toMatch(UUID)
        expect(key, where).not.toBe(OLD_EXAMPLE_KEY)
        expect(e.responseHeaders['idempotent-replayed'], where).toBeUndefined()
        keys.push(key!)
      }
    }
    // Shorten as a guest and with the key, bulk, update: two Executes each, each its own key.
    expect(keys.length).toBeGreaterThanOrEqual(8)
    expect(new Set(keys).size).toBe(keys.length)
  })

  test(
    '/swagger (no slash) lists the same operations',
    async () => {
      const other = await context.newPage()
      try {
        other.on('pageerror', (error) => problems.push(`page error (/swagger): ${error.message}`))
        await other.goto(`${origin}/swagger`)
        await other
          .locator('.opblock')
          .nth(operations.size - 1)
          .waitFor({ timeout: LIST_TIMEOUT_MS })
        expect(await other.locator('.opblock').count()).toBe(operations.size)
      } finally {
        await other.close()
      }
    },
    LIST_TIMEOUT_MS,
  )

  test('no request left the machine; no page error, console error or CSP violation', () => {
    expect(requested.length).toBeGreaterThan(0)
    expect(requested.some((url) => url.includes('/swagger/assets/swagger-ui-bundle.js'))).toBe(true)
    expect(requested.some((url) => url.endsWith('/swagger/json'))).toBe(true)
    expect(requested.some((url) => url.endsWith('/api/v1/guest/token'))).toBe(true)
    expect(foreign).toEqual([])
    expect(problems).toEqual([])
  })
})
