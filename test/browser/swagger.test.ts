// Swagger UI in a real browser: Debian's Chromium driven by playwright-core (no browser is ever
// downloaded), against the app on a real port. Skipped, with a printed reason, where Chromium is absent;
// .ci/run installs it, so CI runs this in both passes.
//
// One browser and one page for the file. The page opens with every operation expanded
// (?docExpansion=full), which is the slow part: Swagger UI resolves each open operation of an OpenAPI
// 3.1 document separately (several seconds on a busy 2-core machine).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { testApi, TEST_IP_HEADER, uniqueIp } from '../support/api'

/** The little of the DOM the page.evaluate callbacks below use (they run in the browser; no DOM lib here). */
declare const document: { querySelectorAll(selector: string): { length: number }; body: { innerText: string } }

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const HAVE_CHROMIUM = existsSync(CHROMIUM)
if (!HAVE_CHROMIUM) {
  console.log(`test/browser/swagger.test.ts: SKIPPED: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`)
}

const LAUNCH_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])
/** Rendering every operation takes 10-70 s depending on the machine's load (see above); generous. */
const RENDER_TIMEOUT_MS = 300_000

let server: ReturnType<typeof Bun.serve>
let origin: string
let browser: Browser
let context: BrowserContext
let page: Page
/** "post /api/v1/guest/token" for every operation of /swagger/json. */
let operations: string[]
/** Every request the browser made (any page of the context), and those to another origin. */
const requested: string[] = []
const foreign: string[] = []
/** Uncaught page errors, console errors and CSP violations. */
const problems: string[] = []

async function operationsInDom(p: Page): Promise<string[]> {
  return p.$$eval('.opblock', (blocks) =>
    blocks.map((b) => {
      const method = b.querySelector('.opblock-summary-method')?.textContent?.toLowerCase() ?? '?'
      const path = b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '?'
      return `${method} ${path}`
    }),
  )
}

describe.skipIf(!HAVE_CHROMIUM)('Swagger UI in Chromium', () => {
  beforeAll(async () => {
    const { app } = await testApi()
    server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => app.handle(request) })
    origin = server.url.origin
    const doc = (await (await fetch(`${origin}/swagger/json`)).json()) as { paths: Record<string, object> }
    operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((m) => METHODS.has(m))
        .map((m) => `${m} ${path}`),
    )

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
    await page.goto(`${origin}/swagger/?docExpansion=full`)
  }, RENDER_TIMEOUT_MS)

  afterAll(async () => {
    await browser?.close()
    server?.stop(true)
  })

  test(
    'every operation of /swagger/json is rendered, expanded, with its responses',
    async () => {
      expect(operations.length).toBeGreaterThan(20)
      const started = Date.now()
      // Open and rendered: the operation's body shows its responses table.
      await page.waitForFunction(
        (count) => document.querySelectorAll('.opblock.is-open .opblock-body .responses-table').length >= count,
        operations.length,
        { timeout: RENDER_TIMEOUT_MS, polling: 250 },
      )
      console.log(`test/browser/swagger.test.ts: ${operations.length} operations rendered, expanded, in ${Date.now() - started} ms after load`)
      expect((await operationsInDom(page)).sort()).toEqual([...operations].sort())
      expect(await page.locator('.opblock:not(.is-open)').count()).toBe(0)
      expect(await page.title()).toBe('Link service API')
    },
    RENDER_TIMEOUT_MS,
  )

  test('nothing says "Could not render"', async () => {
    const fallbacks = await page.$$eval('.fallback', (nodes) =>
      nodes.map((node) => {
        const block = node.closest('.opblock')
        const where = block
          ? `${block.querySelector('.opblock-summary-method')?.textContent} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`
          : 'outside the operations'
        return `${where}: ${node.textContent?.trim()}`
      }),
    )
    expect(fallbacks).toEqual([])
    expect(await page.evaluate(() => document.body.innerText)).not.toContain('Could not render')
  })

  test('parameter examples are shown by name (an "Examples: 0" select means the document gave an array)', async () => {
    // OpenAPI's Parameter Object `examples` is a map of name → Example Object. Given an array, Swagger UI
    // offers the indexes (0, 1, …) and fills in nothing.
    const indexed = await page.$$eval('tr[data-param-name]', (rows) =>
      rows.flatMap((row) => {
        const labels = [...row.querySelectorAll('select.examples-select-element option')].map((o) => o.textContent ?? '')
        if (labels.length === 0 || !labels.every((label, i) => label === String(i))) return []
        const block = row.closest('.opblock')
        return [
          `${block?.querySelector('.opblock-summary-method')?.textContent} ${block?.querySelector('.opblock-summary-path')?.getAttribute('data-path')} ${row.getAttribute('data-param-in')} ${row.getAttribute('data-param-name')}`,
        ]
      }),
    )
    expect(indexed).toEqual([])
  })

  test('Try it out: POST /api/v1/guest/token → Execute → 200 with a gt_ token', async () => {
    const block = page.locator('.opblock-post:has(.opblock-summary-path[data-path="/api/v1/guest/token"])')
    await expect(block.count()).resolves.toBe(1)
    await block.locator('button.try-out__btn').click()
    await block.locator('button.execute').click()
    // The live response's row (the table's header row says "Code").
    const row = block.locator('.live-responses-table tr.response')
    await row.waitFor({ timeout: 30_000 })
    expect((await row.locator('.response-col_status').innerText()).trim()).toBe('200')
    const body = await row.locator('.response-col_description pre').first().innerText()
    expect(body).toMatch(/"guest_token":\s*"gt_[A-Za-z0-9_-]+"/)
  })

  test('/swagger (no slash) renders the same operations', async () => {
    const other = await context.newPage()
    try {
      other.on('pageerror', (error) => problems.push(`page error (/swagger): ${error.message}`))
      await other.goto(`${origin}/swagger`)
      await other.waitForFunction((count) => document.querySelectorAll('.opblock').length >= count, operations.length, { timeout: 30_000 })
      expect((await operationsInDom(other)).sort()).toEqual([...operations].sort())
    } finally {
      await other.close()
    }
  })

  test('no request left the machine; no page error, console error or CSP violation', () => {
    expect(requested.length).toBeGreaterThan(0)
    expect(requested.some((url) => url.includes('/swagger/assets/swagger-ui-bundle.js'))).toBe(true)
    expect(requested.some((url) => url.endsWith('/swagger/json'))).toBe(true)
    expect(requested.some((url) => url.endsWith('/api/v1/guest/token'))).toBe(true)
    expect(foreign).toEqual([])
    expect(problems).toEqual([])
  })
})
