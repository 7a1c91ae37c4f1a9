// A link's routing panel (on /app/links/<domain>/<alias>) in Chromium, against the embedded product: a Pro
// account adds an iOS rule and a 50/50 A/B test (a refusal first shows the API's hint naming the rule's
// field; rules are reordered from the keyboard; the split bar follows the weights), saves, and real
// visits (an iPhone, two desktops from two client addresses) show in the panel's results by route; the
// routing is removed after a confirmation. A Free account sees the Pro note and makes no refused call.
// Client addresses come from TRUSTED_IP_HEADER, set on the product here as in the API tests. Skipped,
// with a printed reason, where Chromium is absent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import type { Locator, Page } from 'playwright-core'
import { TEST_IP_HEADER } from '../support/api'
import { cancelDialog, HAVE_CHROMIUM, LANDING_HOST, reportSkip, SCREENSHOTS_DIR, startProduct, type Product } from '../support/dashboard'
import { eventually } from '../support/stack'

reportSkip('test/browser/dashboard-routing.test.ts')

const LANDING = `http://${LANDING_HOST}`
const IPHONE_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'
/** A desktop Chrome as people run it (a headless or script user agent would be counted as a bot). */
const DESKTOP_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36'
/** Documentation addresses (RFC 5737): two visitors the redirector tells apart. */
const DESKTOP_IPS = ['203.0.113.20', '198.51.100.30']
const VARIANTS = { a: `${LANDING}/variant-a`, b: `${LANDING}/variant-b` }

let product: Product

/**
 * Where the short link sends this visitor (one real request, one click), without following it and
 * without the attribution parameters a Pro link's destination carries.
 */
async function visit(shortUrl: string, userAgent: string, ip: string): Promise<string> {
  const response = await fetch(shortUrl, { redirect: 'manual', headers: { 'user-agent': userAgent, [TEST_IP_HEADER]: ip } })
  await response.arrayBuffer()
  if (response.status < 300 || response.status >= 400) throw new Error(`${shortUrl}: ${response.status}, not a redirect`)
  const location = new URL(response.headers.get('location') ?? '')
  for (const name of ['mu_click', 'mu_sig']) location.searchParams.delete(name)
  return location.href
}

/** The results table as {route name: clicks}. */
async function clicksByRoute(table: Locator): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const row of await table
    .getByRole('row')
    .filter({ has: table.page().getByRole('rowheader') })
    .all()) {
    out[(await row.getByRole('rowheader').innerText()).trim()] = Number((await row.getByRole('cell').nth(1).innerText()).replace(/[^\d]/g, ''))
  }
  return out
}

/** Sign-in on the page, then Pro through the local checkout, as a person does. */
async function signInAsPro(page: Page, email: string): Promise<void> {
  await page.goto(`${product.origin}/app`)
  await product.signIn(page, email)
  await page.waitForURL((url) => url.pathname === '/app')
  await page.getByRole('link', { name: 'Account' }).click()
  await page.getByRole('button', { name: 'Upgrade monthly' }).click()
  await page.waitForURL((url) => url.pathname.startsWith('/billing/'))
  await page.getByRole('button', { name: 'Confirm upgrade' }).click()
  await page.getByRole('heading', { name: 'You are on Pro' }).waitFor()
}

describe.skipIf(!HAVE_CHROMIUM)('the routing panel in Chromium (the embedded product)', () => {
  beforeAll(async () => {
    product = await startProduct({ TRUSTED_IP_HEADER: TEST_IP_HEADER })
  }, 120_000)

  afterAll(async () => {
    await product?.stop()
  })

  test('Pro: an iOS rule and a 50/50 test saved from the panel; an iPhone and two desktops show in the results by route; removed after confirming', async () => {
    const pro = await product.signUp('routing-pro')
    const { page } = await product.newPage()
    await signInAsPro(page, pro.email)

    // A link, and its page from the links table.
    await page.goto(`${product.origin}/app`)
    const alias = `route-${crypto.randomUUID().slice(0, 6)}`
    await page.getByLabel('Destination URL').fill(`${LANDING}/default`)
    await page.getByLabel('Alias (optional)').fill(alias)
    await page.getByRole('button', { name: 'Create link' }).click()
    await page.getByRole('status').filter({ hasText: 'Created' }).waitFor()
    const shortUrl = `http://127.0.0.1:${new URL(product.origin).port}/${alias}`
    await page.getByRole('link', { name: `Statistics of ${shortUrl}` }).click()
    const panel = page.getByRole('region', { name: 'Routing', exact: true })
    await panel.getByRole('button', { name: 'Add a rule' }).click()

    // Rule 1: iOS, to the app store page; focus went to its destination.
    const first = panel.getByRole('group', { name: 'Rule 1', exact: true })
    const destination = first.getByLabel('Destination of rule 1')
    await destination.and(page.locator(':focus')).waitFor()
    await destination.fill('https://apps.example/ios')
    await first.getByRole('checkbox', { name: 'iOS', exact: true }).check()

    // A country that does not exist: the API's hint, with the rule and field it names, beside the form,
    // and that field marked.
    await first.getByLabel('Countries').fill('XX')
    await panel.getByRole('button', { name: 'Save routing' }).click()
    const refusal = panel.getByRole('alert')
    await refusal.waitFor()
    expect(await refusal.innerText()).toMatch(/^Rule 1, countries: body\.rules\.0\.when\.country\.0: "XX" is not an ISO 3166-1 alpha-2 code.*\(VALIDATION_FAILED\)$/)
    expect(await first.getByLabel('Countries').getAttribute('aria-invalid')).toBe('true')
    await product.expectRefused([400, `/api/v1/links/${alias}/routing`])
    await first.getByLabel('Countries').fill('')

    // A second rule: focus goes to its destination; moved up from the keyboard, focus follows it to its
    // "down" button (now the enabled one), and it is rule 1; then removed, which leaves the iOS rule first again.
    await panel.getByRole('button', { name: 'Add a rule' }).click()
    await panel.getByLabel('Destination of rule 2').and(page.locator(':focus')).waitFor()
    await panel.getByLabel('Destination of rule 2').fill('https://example.com/de')
    await panel.getByRole('group', { name: 'Rule 2', exact: true }).getByLabel('Countries').fill('de')
    await panel.getByRole('button', { name: 'Move rule 2 up' }).focus()
    await page.keyboard.press('Enter')
    await panel.getByRole('button', { name: 'Move rule 1 down' }).and(page.locator(':focus')).waitFor()
    expect(await first.getByLabel('Destination of rule 1').inputValue()).toBe('https://example.com/de')
    expect(await panel.getByLabel('Destination of rule 2').inputValue()).toBe('https://apps.example/ios')
    await panel.getByRole('button', { name: 'Remove rule 1' }).click()
    expect(await first.getByLabel('Destination of rule 1').inputValue()).toBe('https://apps.example/ios')
    expect(await panel.getByRole('group', { name: 'Rule 2', exact: true }).count()).toBe(0)

    // The A/B test: the split follows the weights, and says when they do not sum to 100.
    await panel.getByRole('button', { name: 'Add an A/B test' }).click()
    await panel.getByLabel('Destination of variant 1').fill(VARIANTS.a)
    await panel.getByLabel('Destination of variant 2').fill(VARIANTS.b)
    const split = panel.getByRole('list', { name: 'Traffic split' })
    expect(await split.getByRole('listitem').allInnerTexts()).toEqual(['Variant 1: 50%', 'Variant 2: 50%'])
    await panel.getByLabel('Weight of variant 1 (%)').fill('60')
    await panel.getByText('The weights sum to 110; they must sum to 100.').waitFor()
    expect(await split.getByRole('listitem').allInnerTexts()).toEqual(['Variant 1: 60%', 'Variant 2: 50%'])
    await panel.getByRole('button', { name: 'Split evenly' }).click()
    expect(await split.getByRole('listitem').allInnerTexts()).toEqual(['Variant 1: 50%', 'Variant 2: 50%'])
    expect(await panel.getByText(/The weights sum to/).count()).toBe(0)

    await panel.getByRole('button', { name: 'Save routing' }).click()
    await panel.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    await first.getByText('Id r1 (“Rule r1” in the results)').waitFor()
    const routing = await fetch(`${product.origin}/api/v1/links/${alias}/routing`, { headers: { authorization: `Bearer ${pro.apiKey}` } }).then((r) => r.json() as Promise<{ data: unknown }>)
    expect(routing.data).toEqual({
      rules: [{ id: 'r1', url: 'https://apps.example/ios', when: { device: ['ios'] } }],
      ab: {
        variants: [
          { id: 'a', url: VARIANTS.a, weight: 50 },
          { id: 'b', url: VARIANTS.b, weight: 50 },
        ],
        sticky: true,
        ends_at: null,
        winner_by: null,
        status: 'running',
        winner: null,
        completed_at: null,
      },
    })
    // The results list the routes configured now, none clicked yet.
    const results = panel.getByRole('table', { name: /^Results by route/ })
    await eventually(
      () => clicksByRoute(results),
      (rows) => 'Rule r1' in rows,
      15_000,
      { what: 'the saved routes in the results' },
    )
    expect(await clicksByRoute(results)).toEqual({ 'Rule r1': 0, 'Variant a': 0, 'Variant b': 0, "The link's URL": 0 })

    // Real visits: the iPhone matches the rule; each desktop (its own address) gets a variant.
    expect(await visit(shortUrl, IPHONE_UA, '203.0.113.10')).toBe('https://apps.example/ios')
    const landed: string[] = []
    for (const ip of DESKTOP_IPS) landed.push(await visit(shortUrl, DESKTOP_UA, ip))
    for (const url of landed) expect(Object.values(VARIANTS)).toContain(url)
    const perVariant = { 'Variant a': landed.filter((url) => url === VARIANTS.a).length, 'Variant b': landed.filter((url) => url === VARIANTS.b).length }

    // Clicks reach ClickHouse within a second or two: refreshed until all three show.
    const refresh = panel.getByRole('button', { name: 'Refresh results' })
    const { value: counted } = await eventually(
      async () => {
        const rows = await clicksByRoute(results)
        if (rows['Rule r1'] !== 1 || (rows['Variant a'] ?? 0) + (rows['Variant b'] ?? 0) !== 2) await refresh.click()
        return rows
      },
      (rows) => rows['Rule r1'] === 1 && (rows['Variant a'] ?? 0) + (rows['Variant b'] ?? 0) === 2,
      30_000,
      { what: 'the three clicks in the results by route', everyMs: 1000 },
    )
    expect(counted).toEqual({ 'Rule r1': 1, ...perVariant, "The link's URL": 0 })
    await panel.getByText("3 clicks sent by a rule or the A/B test and 0 clicks to the link's URL, all time").waitFor()
    const ruleRow = results.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Rule r1' }) })
    expect(await ruleRow.getByRole('cell').first().innerText()).toBe('https://apps.example/ios')

    await page.setViewportSize({ width: 1280, height: 900 })
    mkdirSync(SCREENSHOTS_DIR, { recursive: true })
    await panel.screenshot({ path: `${SCREENSHOTS_DIR}/dashboard-routing.png` })

    // Remove asks first; cancelling keeps the routing, confirming removes it and visitors get the URL.
    await panel.getByRole('button', { name: 'Remove routing' }).click()
    const dialog = page.getByRole('dialog', { name: "Remove this link's routing?" })
    await dialog.waitFor()
    await cancelDialog(dialog)
    expect(await first.getByLabel('Destination of rule 1').inputValue()).toBe('https://apps.example/ios')
    await panel.getByRole('button', { name: 'Remove routing' }).click()
    await dialog.getByRole('button', { name: 'Remove routing' }).click()
    await panel.getByRole('status').filter({ hasText: 'Routing removed' }).waitFor()
    await panel.getByText('No rules.').waitFor()
    const after = await fetch(`${product.origin}/api/v1/links/${alias}/routing`, { headers: { authorization: `Bearer ${pro.apiKey}` } }).then((r) => r.json() as Promise<{ data: unknown }>)
    expect(after.data).toEqual({ rules: [], ab: null })
    // The redirector follows within a second.
    const { value: now } = await eventually(
      () => visit(shortUrl, IPHONE_UA, '203.0.113.11'),
      (url) => url === `${LANDING}/default`,
      15_000,
      { what: 'the link without routing', everyMs: 250 },
    )
    expect(now).toBe(`${LANDING}/default`)
    expect(product.problems).toEqual([])
  }, 240_000)

  test('Free: the panel says routing is Pro, with the way to upgrade, and asks the API nothing it would refuse', async () => {
    const free = await product.signUp('routing-free')
    const created = await fetch(`${product.origin}/api/v1/shorten`, {
      method: 'POST',
      headers: { authorization: `Bearer ${free.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${LANDING}/free` }),
    }).then((r) => r.json() as Promise<{ data: { alias: string; domain: string } }>)
    const link = created.data
    const { page } = await product.newPage()
    const linkPage = `${product.origin}/app/links/${encodeURIComponent(link.domain)}/${link.alias}`
    await page.goto(linkPage)
    await product.signIn(page, free.email)
    await page.waitForURL((url) => url.href === linkPage)

    const panel = page.getByRole('region', { name: 'Routing', exact: true })
    await panel.getByText('Routing is a Pro feature.').waitFor()
    expect(await panel.getByRole('button').count()).toBe(0)
    expect(await panel.getByRole('textbox').count()).toBe(0)
    // The statistics' two 403s are the page's only refused calls: none for the routing.
    const statsPath = `/api/v1/links/${link.alias}/stats`
    await product.expectRefused([403, statsPath], [403, statsPath])
    await page.waitForLoadState('networkidle')
    expect(product.problems).toEqual([])
    await panel.getByRole('link', { name: 'Upgrade to Pro for routing' }).click()
    await page.getByRole('heading', { name: 'Upgrade to Pro' }).waitFor()
    expect(product.problems).toEqual([])
  }, 120_000)
})
