// The dashboard's tags, filters and domains in Chromium, against the embedded product on a real port:
// tags are created on the Tags page (their colour named in words), assigned and removed from the links
// table's per-row menu, the table filtered by tag (the API's answer: only the tagged link) and sorted by
// clicks (a real visit of the short link), a tag deleted after confirming; a custom domain added, its
// DNS TXT record shown, verification refused with the API's hint while the record is missing (a real
// DNS server on loopback answers the product's lookups), then accepted once it exists, and the domain
// deleted after a confirmation that warns about its links. Controls are found by role and accessible
// name. Skipped, with a printed reason, where Chromium is absent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { cancelDialog, HAVE_CHROMIUM, LANDING_HOST, reportSkip, startProduct, type Product, SCREENSHOTS_DIR } from '../support/dashboard'
import { startTestDnsServer, type TestDnsServer } from '../support/dns'
import { until } from '../support/wait'

reportSkip('test/browser/dashboard-tags.test.ts')

let product: Product
let dns: TestDnsServer
let human: { email: string; apiKey: string }
/** Signed in once (one mailed code a minute per address); the tests go on from there. */
let page: Page

const SHOTS = SCREENSHOTS_DIR
const PERSON_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36'
const suffix = crypto.randomUUID().slice(0, 6)

/** Creates a link through the API with the account's key (the session's rate window stays for the page). */
async function createLink(alias: string): Promise<string> {
  const response = await fetch(`${product.origin}/api/v1/shorten`, {
    method: 'POST',
    headers: { authorization: `Bearer ${human.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `http://${LANDING_HOST}/${alias}`, alias }),
  })
  const body = (await response.json()) as { data: { short_url: string } }
  expect(response.status, JSON.stringify(body)).toBe(200)
  return body.data.short_url
}

/** The short links of the table's rows, top to bottom, as shown. */
async function shownLinks(): Promise<string[]> {
  return (await page.getByRole('rowheader').allTextContents()).map((text) => text.replace(/password$/, '').trim())
}

const hostOf = (shortUrl: string) => shortUrl.replace(/^https?:\/\//, '')

describe.skipIf(!HAVE_CHROMIUM)('tags, filters and domains in the dashboard (Chromium, the embedded product)', () => {
  beforeAll(async () => {
    dns = await startTestDnsServer()
    product = await startProduct({ DNS_SERVERS: dns.server })
    human = await product.signUp('tags')
    page = (await product.newPage()).page
    await page.goto(`${product.origin}/app`)
    await product.signIn(page, human.email)
    await page.waitForURL((url) => url.pathname === '/app')
    mkdirSync(SHOTS, { recursive: true })
  }, 120_000)

  afterAll(async () => {
    await product?.stop()
    await dns?.close()
  })

  test('Tags page: empty at first, two tags created, each with its colour named in words', async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Tags' }).click()
    await page.getByRole('heading', { name: 'Tags', level: 1 }).waitFor()
    await page.getByText('No tags yet').waitFor()

    await page.getByLabel('Tag name').fill('campaign')
    await page.getByLabel('Colour').selectOption({ label: 'Blue' })
    await page.getByRole('button', { name: 'Create tag' }).click()
    await page.getByRole('listitem').filter({ hasText: 'campaign' }).filter({ hasText: 'Blue' }).waitFor()
    await page.getByLabel('Tag name').fill('newsletter')
    await page.getByLabel('Colour').selectOption({ label: 'Green' })
    await page.getByRole('button', { name: 'Create tag' }).click()
    await page.getByRole('listitem').filter({ hasText: 'newsletter' }).filter({ hasText: 'Green' }).waitFor()

    // A second tag of the same name (regardless of case) is refused with the API's hint.
    await page.getByLabel('Tag name').fill('Campaign')
    await page.getByRole('button', { name: 'Create tag' }).click()
    await page.getByRole('alert').filter({ hasText: 'TAG_EXISTS' }).waitFor()
    expect(await page.getByRole('alert').textContent()).toContain('already has a tag named')
    await product.expectRefused([409, '/api/v1/tags'])
    expect(product.problems).toEqual([])
  }, 60_000)

  test('links: a tag assigned from the table, the table filtered by it, sorted by clicks, the tag removed again', async () => {
    // The clicked link is the older one, so "Most clicks first" has to change the order to show it first.
    const clicked = await createLink(`clicked-${suffix}`)
    const tagged = await createLink(`tagged-${suffix}`)
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Links' }).click()
    const taggedRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: hostOf(tagged) }) })
    await taggedRow.getByText('No tags').waitFor()
    expect(await shownLinks()).toEqual([hostOf(tagged), hostOf(clicked)])

    // Assign "campaign" from the row's menu: the checklist names the link; the chip appears in the row.
    await taggedRow.getByRole('button', { name: `Tags of ${tagged}` }).click()
    const menu = page.getByRole('group', { name: `Tags of ${hostOf(tagged)}` })
    await menu.getByRole('checkbox', { name: 'campaign' }).check()
    await menu.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    await menu.getByRole('button', { name: 'Done' }).click()
    expect(await menu.isVisible()).toBe(false)
    await taggedRow.getByText('campaign', { exact: true }).waitFor()
    expect(await taggedRow.getByText('No tags').count()).toBe(0)
    const stored = await fetch(`${product.origin}/api/v1/links/tagged-${suffix}/tags`, { headers: { authorization: `Bearer ${human.apiKey}` } })
    expect(((await stored.json()) as { tags: Array<{ name: string }> }).tags.map((t) => t.name)).toEqual(['campaign'])

    // Filter by the tag: only the tagged link; the other tag matches nothing; back to all tags.
    await page.getByLabel('Tag', { exact: true }).selectOption({ label: 'campaign' })
    await page.getByRole('rowheader', { name: hostOf(clicked) }).waitFor({ state: 'detached' })
    expect(await shownLinks()).toEqual([hostOf(tagged)])
    await page.getByText('1 links').waitFor()
    await page.getByLabel('Tag', { exact: true }).selectOption({ label: 'newsletter' })
    await page.getByText('No link matches these filters.').waitFor()
    await page.getByLabel('Tag', { exact: true }).selectOption({ label: 'All tags' })
    await page.getByText('2 links').waitFor()

    // A real click on the older link; clicks reach the analytics store asynchronously, so wait (through
    // the API, leaving the page's own request window alone) until they count, then sort in the page.
    // (A person's browser: Chromium's headless user agent is counted as a bot, as it should be.)
    const visit = await product.browser.newContext({ userAgent: PERSON_UA })
    const visitor = await visit.newPage()
    await visitor.goto(clicked)
    expect(await visitor.textContent('h1')).toBe(`Landed on /clicked-${suffix}`)
    await visit.close()
    await waitForClick(`clicked-${suffix}`)
    await page.getByLabel('Sort').selectOption({ label: 'Most clicks first' })
    await page
      .getByRole('rowheader')
      .first()
      .filter({ hasText: hostOf(clicked) })
      .waitFor()
    expect(await shownLinks()).toEqual([hostOf(clicked), hostOf(tagged)])
    const clickedRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: hostOf(clicked) }) })
    expect(await clickedRow.getByRole('cell').nth(4).textContent()).toBe('1')

    await page.setViewportSize({ width: 1280, height: 800 })
    await page.screenshot({ path: `${SHOTS}/dashboard-links.png`, fullPage: true })
    await page.setViewportSize({ width: 390, height: 844 })
    await page.screenshot({ path: `${SHOTS}/dashboard-links-phone.png`, fullPage: true })
    await page.setViewportSize({ width: 1280, height: 800 })

    // Remove the tag from the row: the chip goes, and so does the tag on the link.
    await taggedRow.getByRole('button', { name: `Tags of ${tagged}` }).click()
    await menu.getByRole('checkbox', { name: 'campaign' }).uncheck()
    await menu.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    await taggedRow.getByText('No tags').waitFor()
    await page.keyboard.press('Escape')
    expect(await menu.isVisible()).toBe(false)
    const after = await fetch(`${product.origin}/api/v1/links/tagged-${suffix}/tags`, { headers: { authorization: `Bearer ${human.apiKey}` } })
    expect(((await after.json()) as { tags: unknown[] }).tags).toEqual([])
    expect(product.problems).toEqual([])
  }, 120_000)

  test('Tags page: deleting a tag asks first; cancelling keeps it, confirming deletes it', async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Tags' }).click()
    const item = page.getByRole('listitem').filter({ hasText: 'newsletter' })
    await item.waitFor()
    await item.getByRole('button', { name: 'Delete tag newsletter' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete this tag?' })
    await dialog.waitFor()
    await cancelDialog(dialog)
    expect(await item.isVisible()).toBe(true)
    await item.getByRole('button', { name: 'Delete tag newsletter' }).click()
    await dialog.getByRole('button', { name: 'Delete tag' }).click()
    await item.waitFor({ state: 'detached' })
    expect(await page.getByRole('listitem').filter({ hasText: 'campaign' }).isVisible()).toBe(true)
    const left = await fetch(`${product.origin}/api/v1/tags`, { headers: { authorization: `Bearer ${human.apiKey}` } })
    expect(((await left.json()) as { tags: Array<{ name: string }> }).tags.map((t) => t.name)).toEqual(['campaign'])
    expect(product.problems).toEqual([])
  }, 60_000)

  test('Domains page: add a domain, see its TXT record, verification refused with the hint, then verified; where its root leads set and cleared; the plan limit; delete after a warning', async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Domains' }).click()
    await page.getByRole('heading', { name: 'Domains', level: 1 }).waitFor()
    await page.getByText('No custom domains yet').waitFor()

    const hostname = `links-${suffix}.example.org`
    await page.getByLabel('Domain name').fill(hostname)
    await page.getByRole('button', { name: 'Add domain' }).click()
    const card = page.getByRole('article', { name: hostname })
    await card.waitFor()
    await card.getByText('Not verified').waitFor()
    expect(await card.locator('dd').allTextContents()).toEqual(['TXT', expect.stringContaining(`_linkservice.${hostname}`), expect.stringMatching(/^link-service-verification=\S+ Copy$/)])
    const value = (await card.locator('dd code').nth(2).textContent())!
    await card.getByRole('button', { name: `Copy the record value for ${hostname}` }).click()
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(value)
    await page.getByText(`1 of 1 custom domains used`).waitFor()

    // No record yet: the API's hint says what to create, and the status stays "Not verified".
    await card.getByRole('button', { name: `Verify ${hostname}` }).click()
    const refusal = card.getByRole('alert')
    await refusal.waitFor()
    expect(await refusal.textContent()).toContain('no TXT record was found there')
    expect(await refusal.textContent()).toContain('(DOMAIN_NOT_VERIFIED)')
    await product.expectRefused([400, `/api/v1/domains/${hostname}/verify`])
    expect(await card.getByText('Not verified').isVisible()).toBe(true)
    await page.screenshot({ path: `${SHOTS}/dashboard-domains.png`, fullPage: true })

    // A Free account has one custom domain: a second is refused with the plan's hint.
    await page.getByLabel('Domain name').fill(`second-${suffix}.example.org`)
    await page.getByRole('button', { name: 'Add domain' }).click()
    await page.getByRole('alert').filter({ hasText: 'DOMAIN_LIMIT_REACHED' }).waitFor()
    expect(await page.getByRole('alert').filter({ hasText: 'DOMAIN_LIMIT_REACHED' }).textContent()).toContain('The Free plan includes 1 custom domain')
    await product.expectRefused([403, '/api/v1/domains'])

    // The record exists now: verification succeeds and the status says so.
    dns.setTxt(`_linkservice.${hostname}`, [value])
    await card.getByRole('button', { name: `Verify ${hostname}` }).click()
    await card.getByText(/^Verified on .*links on this domain redirect\.$/).waitFor()
    expect(await card.getByRole('button', { name: `Verify ${hostname}` }).count()).toBe(0)

    // Where the domain's root leads: a loop is refused with the API's hint; a page of the owner's is
    // saved and the root redirects there; emptied, the root is the neutral page again.
    const rootAt = () => fetch(`${product.origin}/`, { headers: { host: hostname }, redirect: 'manual' })
    await until(async () => (await rootAt()).status === 200, 'the verified domain serving its neutral root page')
    const rootField = card.getByLabel(`Where ${hostname}/ leads (optional)`)
    const saveRoot = card.getByRole('button', { name: `Save root page of ${hostname}` })
    await rootField.fill(`https://${hostname}/`)
    await saveRoot.click()
    await card.getByRole('alert').filter({ hasText: 'DESTINATION_LOOPS' }).waitFor()
    await product.expectRefused([400, `/api/v1/domains/${hostname}`])
    await rootField.fill(`http://${LANDING_HOST}/home`)
    await saveRoot.click()
    await card.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    await until(async () => (await rootAt()).headers.get('location') === `http://${LANDING_HOST}/home`, 'the root redirecting to the page set')
    await rootField.fill('')
    await saveRoot.click()
    await card.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    await until(async () => (await rootAt()).status === 200, 'the root showing the neutral page again')

    // Deleting warns that the domain's links go with it; cancel keeps it, confirm removes it.
    await card.getByRole('button', { name: `Delete ${hostname}` }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete this domain?' })
    await dialog.waitFor()
    expect(await dialog.textContent()).toContain('with every link on it')
    await cancelDialog(dialog)
    expect(await card.isVisible()).toBe(true)
    await card.getByRole('button', { name: `Delete ${hostname}` }).click()
    await dialog.getByRole('button', { name: 'Delete domain and its links' }).click()
    await page.getByText('No custom domains yet').waitFor()
    const listed = await fetch(`${product.origin}/api/v1/domains`, { headers: { authorization: `Bearer ${human.apiKey}` } })
    expect(((await listed.json()) as { data: { total: number } }).data.total).toBe(0)
    expect(product.problems).toEqual([])
  }, 90_000)
})

/** Waits (generously: the machine is loaded) until the link's click is counted by the API. */
async function waitForClick(alias: string): Promise<void> {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    const response = await fetch(`${product.origin}/api/v1/links?search=${alias}`, { headers: { authorization: `Bearer ${human.apiKey}` } })
    const body = (await response.json()) as { data?: { links: Array<{ clicks?: number }> } }
    if ((body.data?.links[0]?.clicks ?? 0) >= 1) return
    // Every 2 s: the key's window is the plan's 30 requests a minute.
    await Bun.sleep(2_000)
  }
  throw new Error(`the click on ${alias} was not counted within 60 s`)
}
