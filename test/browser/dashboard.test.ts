// The dashboard's journeys in Chromium, against the embedded product (`npm start`) on a real port: the
// root leads to it, signing in returns to the page asked for, a link is created (its alias checked as it
// is typed), shows in the table, redirects, is copied, found by search and deleted after a confirmation;
// an ended session asks to sign in again and comes back. Controls are found by role and accessible name,
// as a person (or a screen reader) finds them. Destinations are a local server Chromium reaches by name
// (nothing leaves the machine). Skipped, with a printed reason, where Chromium is absent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { cancelDialog, HAVE_CHROMIUM, LANDING_HOST, reportSkip, startProduct, type Product } from '../support/dashboard'

reportSkip('test/browser/dashboard.test.ts')

let product: Product
let human: { email: string; apiKey: string }
/** The page of the person signed in by the first test; the next tests go on from there. */
let page: Page

const LANDING = `http://${LANDING_HOST}`

/** Milliseconds from the navigation's start until the links page shows its list (or its empty state). */
async function interactiveAfter(page: Page): Promise<number> {
  // A string, not a function: it runs in the page, whose DOM types this project's tsconfig does not load.
  // One evaluation whose frames poll: a waitForFunction string is eval'd again on each frame, which the
  // page's CSP (no 'unsafe-eval') refuses once the first check has failed.
  return page.evaluate<number>(
    "new Promise((resolve) => { const tick = () => (document.querySelector('table, .empty') ? resolve(performance.now()) : requestAnimationFrame(tick)); tick() })",
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

  test('the root leads to the dashboard; signed out, through sign-in and back; the first page is interactive quickly', async () => {
    page = (await product.newPage()).page
    await page.goto(`${product.origin}/`)
    const signInUrl = new URL(page.url())
    expect(signInUrl.pathname).toBe('/signin')
    expect(signInUrl.searchParams.get('next')).toBe('/app')
    await product.signIn(page, human.email)
    await page.waitForURL((url) => url.pathname === '/app')
    await expect(page.getByRole('heading', { name: 'Links', level: 1 }).isVisible()).resolves.toBe(true)
    await page.getByText('No links yet').waitFor()

    // A warm visit, as a person returns to it: navigation start → the list on screen.
    // Each visit starts once the one before has finished its API calls: a navigation that cuts requests
    // short can trip playwright-core's own bookkeeping ("Cannot find parent object request@…"), seen once
    // in CI. Nothing a person does; the figure is the same.
    const visits: number[] = []
    for (let i = 0; i < 3; i++) {
      await page.waitForLoadState('networkidle')
      await page.goto(`${product.origin}/app`)
      visits.push(await interactiveAfter(page))
    }
    await page.waitForLoadState('networkidle')
    const median = visits.sort((a, b) => a - b)[1]!
    console.log(`dashboard: first page interactive after ${visits.map((ms) => ms.toFixed(0)).join(', ')} ms (median ${median.toFixed(0)} ms; target < 1,000 ms)`)
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

  test('a form shows the API\'s hint: an alias that is not allowed, a destination that is not a web address', async () => {
    await page.goto(`${product.origin}/app`)
    await page.getByLabel('Destination URL').fill('https://example.com/x')
    await page.getByLabel('Alias (optional)').fill('swagger')
    await page.getByRole('button', { name: 'Create link' }).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toMatch(/\(ALIAS_TAKEN\)$/)
    await page.getByLabel('Alias (optional)').fill('')
    await page.getByLabel('Destination URL').fill('ftp://example.com/file')
    await page.getByRole('button', { name: 'Create link' }).click()
    await page.getByRole('alert').filter({ hasText: 'INVALID_URL' }).waitFor()
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
    // and the page sends the person to sign in, then back here.
    await context.clearCookies()
    await own.getByRole('link', { name: 'Links' }).click()
    await own.waitForURL((url) => url.pathname === '/signin')
    expect(new URL(own.url()).searchParams.get('next')).toBe('/app')
    await product.signIn(own, second.email)
    await own.waitForURL((url) => url.pathname === '/app')
    await own.getByRole('heading', { name: 'Links', level: 1 }).waitFor()
    await own.getByRole('link', { name: 'Account' }).click()
    await own.getByText(second.email).waitFor()
    expect(product.problems).toEqual([])
    await context.close()
  }, 60_000)
})
