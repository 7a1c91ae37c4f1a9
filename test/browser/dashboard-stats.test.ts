// The link page of the dashboard (/app/links/<domain>/<alias>) in Chromium, against the embedded product:
// a Pro account (upgraded through the local checkout page, as a person does) sees a real click in the
// chart's table for each period, bots counted apart, the QR code (downloaded through the page and decoded
// to the short URL), and edits the destination; a Free account sees its totals and the Pro offer, and
// cannot open another account's link. Controls are found by role and accessible name. Skipped, with a
// printed reason, where Chromium is absent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync } from 'node:fs'
import jsQR from 'jsqr'
import { PNG } from 'pngjs'
import type { Locator, Page } from 'playwright-core'
import { HAVE_CHROMIUM, LANDING_HOST, reportSkip, startProduct, type Product, SCREENSHOTS_DIR } from '../support/dashboard'

reportSkip('test/browser/dashboard-stats.test.ts')

const LANDING = `http://${LANDING_HOST}`
/** A desktop Chrome as people run it: headless Chromium's own user agent ("HeadlessChrome") is a bot. */
const PERSON_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36'
const SCREENSHOTS = SCREENSHOTS_DIR

let product: Product

/** The rows of a table of counts as [row header, number]. */
async function countsOf(table: Locator): Promise<Array<[string, number]>> {
  const out: Array<[string, number]> = []
  for (const row of await table
    .getByRole('row')
    .filter({ has: table.page().getByRole('rowheader') })
    .all()) {
    const label = (await row.getByRole('rowheader').innerText()).trim()
    const value = Number((await row.getByRole('cell').last().innerText()).replace(/[^\d]/g, ''))
    out.push([label, value])
  }
  return out
}

/**
 * Presses "Refresh statistics" until `ready` holds: clicks reach the click store a few seconds after the
 * visit. Returns how many times it pressed (each press asks for the statistics once more).
 */
async function refreshUntil(page: Page, what: string, ready: () => Promise<boolean>): Promise<number> {
  const deadline = Date.now() + 60_000
  let presses = 0
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`the page never showed ${what}`)
    await Bun.sleep(1000)
    const refresh = page.getByRole('button', { name: 'Refresh statistics' })
    if (!(await refresh.isEnabled())) continue
    await refresh.click()
    presses++
  }
  return presses
}

/** The chart's table for a period: the period picked, the "Show as table" equivalent opened. */
async function clicksTable(page: Page, period: string, caption: RegExp): Promise<Locator> {
  await page.getByRole('radio', { name: period }).check()
  const figure = page.getByRole('figure', { name: caption })
  await figure.waitFor()
  const table = figure.getByRole('table', { name: caption })
  if (!(await table.isVisible())) await figure.getByText('Show as table').click()
  await table.waitFor()
  return table
}

/** A person follows the short link from a page (a real click, with that page as the referrer). */
async function clickAsPerson(shortUrl: string): Promise<string> {
  const context = await product.browser.newContext({ userAgent: PERSON_UA })
  const visitor = await product.newTab(context)
  await visitor.goto(`${LANDING}/blog`)
  await visitor.evaluate(`document.body.insertAdjacentHTML('beforeend', '<a id="out" href="${shortUrl}">Read more</a>')`)
  await Promise.all([visitor.waitForURL((url) => url.href !== `${LANDING}/blog`), visitor.getByRole('link', { name: 'Read more' }).click()])
  const landed = new URL(visitor.url()).pathname
  await context.close()
  return landed
}

/** Where the short link leads now, for a visitor with headless Chromium's user agent (a bot). */
async function followAsBot(shortUrl: string): Promise<string> {
  const context = await product.browser.newContext()
  const visitor = await product.newTab(context)
  await visitor.goto(shortUrl)
  const landed = new URL(visitor.url()).pathname
  await context.close()
  return landed
}

describe.skipIf(!HAVE_CHROMIUM)('the link page in Chromium (the embedded product)', () => {
  beforeAll(async () => {
    product = await startProduct()
  }, 120_000)

  afterAll(async () => {
    await product?.stop()
  })

  test("Pro: upgrade, a click shows in the chart's table for every period, bots apart, QR decodes, edit redirects anew", async () => {
    const pro = await product.signUp('stats-pro')
    const { page } = await product.newPage()
    await page.goto(`${product.origin}/app`)
    await product.signIn(page, pro.email)
    await page.waitForURL((url) => url.pathname === '/app')

    // Pro through the local checkout: the account page's button, then the checkout page's confirmation.
    await page.getByRole('link', { name: 'Account' }).click()
    await page.getByRole('button', { name: 'Upgrade monthly' }).click()
    await page.waitForURL((url) => url.pathname.startsWith('/billing/'))
    await page.getByRole('button', { name: 'Confirm upgrade' }).click()
    await page.getByRole('heading', { name: 'You are on Pro' }).waitFor()

    await page.goto(`${product.origin}/app`)
    const alias = `stats-${crypto.randomUUID().slice(0, 6)}`
    await page.getByLabel('Destination URL').fill(`${LANDING}/first`)
    await page.getByLabel('Alias (optional)').fill(alias)
    await page.getByRole('button', { name: 'Create link' }).click()
    await page.getByRole('status').filter({ hasText: 'Created' }).waitFor()
    const shortUrl = `http://127.0.0.1:${new URL(product.origin).port}/${alias}`
    await page.getByRole('link', { name: `Statistics of ${shortUrl}` }).click()
    await page.waitForURL((url) => url.pathname === `/app/links/${encodeURIComponent(`127.0.0.1:${new URL(product.origin).port}`)}/${alias}`)
    await page.getByRole('heading', { level: 1, name: shortUrl.replace('http://', '') }).waitFor()
    await page.getByText('0 clicks by people, last 7 days').waitFor()

    expect(await clickAsPerson(shortUrl)).toBe('/first')
    expect(await followAsBot(shortUrl)).toBe('/first')

    // 24 hours: one hourly bucket holds the click; the bot is counted apart, not in the figures.
    const hourly = await clicksTable(page, 'Last 24 hours', /^Clicks per hour, last 24 hours$/)
    const summary = page.getByText(/clicks? by people, last 24 hours/)
    const bots = page.getByText(/by bots (and|or) crawlers in this period/)
    // The refresh brings the link's all-time count in the details up to date as well. Each is its own API
    // call, and a click count that misses its 1.5 s budget on a loaded machine is left out of its answer
    // (shown as 0) until the next refresh: so all three are waited for together.
    const allTime = page.getByRole('region', { name: 'Details' }).getByText(/^1 \(last /)
    await refreshUntil(
      page,
      'the click, the bot and the all-time count',
      async () => (await summary.innerText()).startsWith('1 click ') && (await bots.innerText()).startsWith('1 click ') && (await allTime.count()) === 1,
    )
    const hours = await countsOf(hourly)
    expect(hours).toHaveLength(24)
    expect(
      hours
        .map(([, n]) => n)
        .sort((a, b) => b - a)
        .slice(0, 2),
    ).toEqual([1, 0])
    expect(await countsOf(page.getByRole('table', { name: 'Referrers' }))).toEqual([[LANDING_HOST, 1]])
    expect(await countsOf(page.getByRole('table', { name: 'Browsers' }))).toEqual([['Chrome', 1]])
    expect(await countsOf(page.getByRole('table', { name: 'Devices' }))).toEqual([['desktop', 1]])
    await page.getByText('No conversions reported in this period.').waitFor()
    await page.setViewportSize({ width: 1280, height: 900 })
    mkdirSync(SCREENSHOTS, { recursive: true })
    await page.screenshot({ path: `${SCREENSHOTS}/dashboard-stats.png`, fullPage: true })

    // The other periods, the switch worked by keyboard too: daily buckets, the same one click.
    const daily = await clicksTable(page, 'Last 7 days', /^Clicks per day, last 7 days$/)
    const days = await countsOf(daily)
    expect(days).toHaveLength(7)
    expect(days.reduce((sum, [, n]) => sum + n, 0)).toBe(1)
    await page.getByRole('radio', { name: 'Last 7 days' }).focus()
    await page.keyboard.press('ArrowRight')
    expect(await page.getByRole('radio', { name: 'Last 30 days' }).isChecked()).toBe(true)
    const month = page.getByRole('table', { name: /^Clicks per day, last 30 days$/ })
    await month.waitFor()
    expect((await countsOf(month)).length).toBe(30)
    const all = await clicksTable(page, 'All time', /^Clicks per day, all time$/)
    expect((await countsOf(all)).reduce((sum, [, n]) => sum + n, 0)).toBe(1)

    // The QR code: shown, and the PNG downloaded through the page decodes to the short URL.
    const qr = page.getByRole('img', { name: `QR code of ${shortUrl}` })
    await qr.waitFor()
    expect(await qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(256)
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download PNG' }).click()])
    expect(download.suggestedFilename()).toBe(`${alias}-qr.png`)
    const png = PNG.sync.read(readFileSync(await download.path()))
    expect(jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data).toBe(shortUrl)
    const svg = await page.request.get(
      await page
        .getByRole('link', { name: 'Download SVG' })
        .getAttribute('href')
        .then((href) => `${product.origin}${href}`),
    )
    expect(svg.headers()['content-type']).toContain('image/svg+xml')

    // Edit: a refusal shows the API's hint; a new destination is where the short link leads next.
    await page.getByLabel('Destination URL').fill('ftp://example.com/file')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('alert').filter({ hasText: 'INVALID_URL' }).waitFor()
    await product.expectRefused([400, `/api/v1/links/${alias}`])
    await page.getByLabel('Destination URL').fill(`${LANDING}/edited`)
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor()
    await page
      .getByRole('definition')
      .filter({ hasText: `${LANDING}/edited` })
      .waitFor()
    const deadline = Date.now() + 15_000
    let landed = await followAsBot(shortUrl)
    while (landed !== '/edited' && Date.now() < deadline) landed = (await Bun.sleep(500), await followAsBot(shortUrl))
    expect(landed).toBe('/edited')

    await page.setViewportSize({ width: 390, height: 844 })
    await page.screenshot({ path: `${SCREENSHOTS}/dashboard-stats-phone.png`, fullPage: true })
    expect(product.problems).toEqual([])
  }, 180_000)

  test("Free: the totals and what Pro adds, with the way to upgrade; another account's link is not found", async () => {
    const free = await product.signUp('stats-free')
    const other = await product.signUp('stats-other')
    const shorten = async (apiKey: string, url: string) => {
      const response = await fetch(`${product.origin}/api/v1/shorten`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      })
      return ((await response.json()) as { data: { alias: string; domain: string; short_url: string } }).data
    }
    const link = await shorten(free.apiKey, `${LANDING}/free`)
    const foreign = await shorten(other.apiKey, `${LANDING}/theirs`)
    expect(await clickAsPerson(link.short_url)).toBe('/free')

    const { page } = await product.newPage()
    const linkPage = (l: { domain: string; alias: string }) => `${product.origin}/app/links/${encodeURIComponent(l.domain)}/${l.alias}`
    await page.goto(linkPage(link))
    await product.signIn(page, free.email)
    await page.waitForURL((url) => url.href === linkPage(link))
    await page.getByRole('heading', { name: 'More with Pro' }).waitFor()
    // The first figure of the statistics section: the account's clicks of all time, from the 403's basic totals.
    const total = page.getByRole('region', { name: 'Statistics' }).getByRole('definition').first()
    const presses = await refreshUntil(page, 'the click in the totals', async () => (await total.innerText()) === '1')
    expect(await page.getByRole('figure').count()).toBe(0)
    // The 403 is how a Free account gets its totals: the page asks twice (people, everyone) per load.
    const statsPath = `/api/v1/links/${link.alias}/stats`
    await product.expectRefused(...Array.from({ length: 2 * (1 + presses) }, (): [number, string] => [403, statsPath]))
    expect(product.problems).toEqual([])
    await page.getByRole('link', { name: 'Upgrade to Pro on the account page' }).click()
    await page.getByRole('heading', { name: 'Upgrade to Pro' }).waitFor()

    // Another account's link: not found, like one that does not exist; its QR code neither.
    await page.goto(linkPage(foreign))
    await page.getByRole('alert').filter({ hasText: 'LINK_NOT_FOUND' }).waitFor()
    await product.expectRefused([404, `/api/v1/links/${foreign.alias}`])
    expect(await page.getByRole('heading', { name: 'Statistics' }).count()).toBe(0)
    const qr = await page.request.get(`${product.origin}/api/v1/links/${foreign.alias}/qr?format=png&domain=${encodeURIComponent(foreign.domain)}`)
    expect(qr.status()).toBe(404)
    expect(product.problems).toEqual([])
  }, 120_000)
})
