// The dashboard's journeys in Chromium, against the embedded product (`npm start`) on a real port: the
// root leads to it, signing in returns to the page asked for, a return visit takes the built files from
// the browser's cache, a link is created (its alias checked as it is typed), shows in the table,
// redirects, is copied, found by search and deleted after a confirmation; an ended session asks to sign
// in again and comes back. Every journey ends with no console error but the refusals it causes on
// purpose, each named with its status. Controls are found by role and accessible name, as a person (or a
// screen reader) finds them. Destinations are a local server Chromium reaches by name (nothing leaves
// the machine). Skipped, with a printed reason, where Chromium is absent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { cancelDialog, HAVE_CHROMIUM, LANDING_HOST, reportSkip, startProduct, type Product } from '../support/dashboard'

reportSkip('test/browser/dashboard.test.ts')

let product: Product
let human: { email: string; apiKey: string }
/** The page of the person signed in by the first test; the next tests go on from there. */
let page: Page

const LANDING = `http://${LANDING_HOST}`

/**
 * The script and stylesheet the page's shell names, each with the bytes it took from the network
 * (Resource Timing's transferSize: 0 when the browser's cache answered, headers and body otherwise).
 */
async function shellFiles(page: Page): Promise<Array<{ path: string; transferSize: number | null }>> {
  // A string, not a function: it runs in the page, whose DOM types this project's tsconfig does not load.
  return page.evaluate(
    `[...document.querySelectorAll('script[src], link[rel=stylesheet]')].map((element) => {
      const url = new URL(element.getAttribute('src') || element.getAttribute('href'), location.href)
      const timing = performance.getEntriesByName(url.href, 'resource')[0]
      return { path: url.pathname, transferSize: timing ? timing.transferSize : null }
    })`,
  )
}

describe.skipIf(!HAVE_CHROMIUM)('the dashboard in Chromium (the embedded product)', () => {
  beforeAll(async () => {
    product = await startProduct()
    human = await product.signUp('dashboard')
  }, 120_000)

  afterAll(async () => {
    await product?.stop()
  })

  test('the root leads to the dashboard; signed out, through sign-in and back; a return visit takes its script and style from the cache', async () => {
    page = (await product.newPage()).page
    await page.goto(`${product.origin}/`)
    const signInUrl = new URL(page.url())
    expect(signInUrl.pathname).toBe('/signin')
    expect(signInUrl.searchParams.get('next')).toBe('/app')
    await product.signIn(page, human.email)
    await page.waitForURL((url) => url.pathname === '/app')
    await expect(page.getByRole('heading', { name: 'Links', level: 1 }).isVisible()).resolves.toBe(true)
    await page.getByText('No links yet').waitFor()

    // A return visit, as a person comes back to the page: the files are named by their content and served
    // as immutable, so the browser runs them from its cache without asking again; only the shell and the
    // API's answers cross the network. The visit starts once the first page has finished its API calls:
    // a navigation that cuts requests short can trip playwright-core's own bookkeeping ("Cannot find
    // parent object request@…"), seen once in CI.
    await page.waitForLoadState('networkidle')
    await page.goto(`${product.origin}/app`)
    await page.getByText('No links yet').waitFor()
    const files = await shellFiles(page)
    expect(files.map((f) => f.path.replace(/-\w+\./, '-<hash>.')).sort(), JSON.stringify(files)).toEqual(['/app/assets/main-<hash>.css', '/app/assets/main-<hash>.js'])
    expect(
      files.filter((f) => f.transferSize !== 0),
      `files that crossed the network again: ${JSON.stringify(files)}`,
    ).toEqual([])
    await page.waitForLoadState('networkidle')
    expect(product.problems).toEqual([])
  }, 60_000)

  test('links: create with a chosen alias, see it listed, follow it, copy it, find it, delete it after confirming', async () => {
    await page.goto(`${product.origin}/app`)

    const alias = `dash-${crypto.randomUUID().slice(0, 6)}`
    await page.getByLabel('Destination URL').fill(`${LANDING}/from-the-dashboard`)
    await page.getByLabel('Alias (optional)').fill(alias)
    await page.getByText(`“${alias}” is available`).waitFor()
    await page.getByRole('button', { name: 'Create link' }).click()
    const created = page.getByRole('status').filter({ hasText: 'Created' })
    await created.waitFor()
    const shortUrl = `http://127.0.0.1:${new URL(product.origin).port}/${alias}`
    expect(await created.getByRole('link').getAttribute('href')).toBe(shortUrl)

    // Listed, with its destination; the same alias now shows as taken.
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: new RegExp(alias) }) })
    await row.waitFor()
    expect(await row.getByRole('cell').first().textContent()).toBe(`${LANDING}/from-the-dashboard`)
    await page.getByLabel('Alias (optional)').fill(alias)
    await page.getByText(`“${alias}” is taken`).waitFor()
    await page.getByLabel('Alias (optional)').fill('')

    // Copy puts the short URL on the clipboard.
    await row.getByRole('button', { name: `Copy ${shortUrl}` }).click()
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(shortUrl)

    // The short link redirects to its destination.
    const visitor = await product.newTab(page.context())
    await visitor.goto(shortUrl)
    expect(visitor.url()).toBe(`${LANDING}/from-the-dashboard`)
    expect(await visitor.textContent('h1')).toBe('Landed on /from-the-dashboard')
    await visitor.close()

    // Search narrows the list; a search that matches nothing says so.
    await page.getByLabel('Search links').fill('no-such-link-anywhere')
    await page.getByText('No link matches this search.').waitFor()
    await page.getByLabel('Search links').fill(alias)
    await row.waitFor()

    // Delete asks first; cancelling keeps the link, confirming deletes it.
    await row.getByRole('button', { name: `Delete ${shortUrl}` }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete this link?' })
    await dialog.waitFor()
    await cancelDialog(dialog)
    expect(await row.isVisible()).toBe(true)
    await row.getByRole('button', { name: `Delete ${shortUrl}` }).click()
    await dialog.getByRole('button', { name: 'Delete link' }).click()
    await page.getByText('No link matches this search.').waitFor()
    const gone = await fetch(`${product.origin}/api/v1/links/${alias}`, { headers: { authorization: `Bearer ${human.apiKey}` } })
    expect(gone.status).toBe(404)
    expect(product.problems).toEqual([])
  }, 90_000)

  test("a form shows the API's hint: an alias that is not allowed, a destination that is not a web address", async () => {
    await page.goto(`${product.origin}/app`)
    await page.getByLabel('Destination URL').fill('https://example.com/x')
    await page.getByLabel('Alias (optional)').fill('swagger')
    await page.getByRole('button', { name: 'Create link' }).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toMatch(/\(ALIAS_TAKEN\)$/)
    await product.expectRefused([409, '/api/v1/shorten'])
    await page.getByLabel('Alias (optional)').fill('')
    await page.getByLabel('Destination URL').fill('ftp://example.com/file')
    await page.getByRole('button', { name: 'Create link' }).click()
    await page.getByRole('alert').filter({ hasText: 'INVALID_URL' }).waitFor()
    await product.expectRefused([400, '/api/v1/shorten'])
    expect(product.problems).toEqual([])
  }, 60_000)

  test('an ended session asks to sign in again and returns to the page the person was on', async () => {
    // Sign-in mails one code a minute per address, so the second sign-in is another account's: what is
    // tested is the way back through sign-in to the same page.
    const [first, second] = [await product.signUp('ended'), await product.signUp('again')]
    const { page: own, context } = await product.newPage()
    await own.goto(`${product.origin}/app`)
    await product.signIn(own, first.email)
    await own.waitForURL((url) => url.pathname === '/app')
    await own.getByRole('link', { name: 'Account' }).click()
    await own.getByText(first.email).waitFor()
    // The account page's last call (its API keys) has answered: the session ends between pages, not
    // under a call this page still waits for (which would send the person to sign in from here).
    await own.getByRole('table', { name: 'Your API keys' }).waitFor()

    // The session ends (the cookie is gone, as once it expired): the next call the page makes is refused,
    // and the page sends the person to sign in, then back here. The Tags page makes that one call only,
    // so the one refusal Chromium logs is known.
    await context.clearCookies()
    await own.getByRole('link', { name: 'Tags' }).click()
    await own.waitForURL((url) => url.pathname === '/signin')
    expect(new URL(own.url()).searchParams.get('next')).toBe('/app/tags')
    await product.expectRefused([401, '/api/v1/tags'])
    await product.signIn(own, second.email)
    await own.waitForURL((url) => url.pathname === '/app/tags')
    await own.getByRole('heading', { name: 'Tags', level: 1 }).waitFor()
    await own.getByRole('link', { name: 'Account' }).click()
    await own.getByText(second.email).waitFor()
    expect(product.problems).toEqual([])
    await context.close()
  }, 60_000)
})
