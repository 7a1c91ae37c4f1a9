// Signing in and out of the dashboard, and using it by keyboard alone, in Chromium against the embedded
// product. GitHub's side of "Sign in with GitHub" is the loopback fake every sign-in test uses
// (test/support/fake-identity-provider.ts): the browser really follows our redirect to it and its redirect
// back. Skipped, with a printed reason, where Chromium is absent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { HAVE_CHROMIUM, LANDING_HOST, reportSkip, startProduct, type Product } from '../support/dashboard'
import { startFakeIdentityProvider, type FakeIdentityProvider } from '../support/fake-identity-provider'

reportSkip('test/browser/dashboard-signin.test.ts')

let github: FakeIdentityProvider
let product: Product
let human: { email: string; apiKey: string }
/** Signed in with GitHub by the first test; the next tests go on from there. */
let page: Page

/** The accessible name of the focused element, as a screen reader would announce it. */
function focusedName(page: Page): Promise<string> {
  // A string, not a function: it runs in the page, whose DOM types this project's tsconfig does not load.
  return page.evaluate<string>(
    "(() => { const e = document.activeElement; if (!e) return ''; return (e.getAttribute('aria-label') || (e.labels && e.labels[0] ? e.labels[0].textContent : '') || e.textContent || '').trim() })()",
  )
}

/** Presses Tab until the control named `name` has the focus, as a keyboard user moves through the page. */
async function tabTo(page: Page, name: string, limit = 80): Promise<void> {
  const seen: string[] = []
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab')
    const now = await focusedName(page)
    if (now === name) return
    seen.push(now)
  }
  throw new Error(`Tab never reached "${name}"; the focus went through: ${seen.join(' | ')}`)
}

describe.skipIf(!HAVE_CHROMIUM)('dashboard sign-in, sign-out and keyboard use in Chromium', () => {
  beforeAll(async () => {
    github = startFakeIdentityProvider('github')
    product = await startProduct(github.env, { otherOrigins: [github.url] })
    human = await product.signUp('github')
  }, 120_000)

  afterAll(async () => {
    await product?.stop()
    github?.close()
  })

  test('signed out, a dashboard page offers GitHub; signing in there returns to that page', async () => {
    page = (await product.newPage()).page
    await page.goto(`${product.origin}/app/tags`)
    expect(new URL(page.url()).pathname).toBe('/signin')
    github.next({
      emails: [
        { email: `other-${human.email}`, primary: false, verified: true },
        { email: human.email, primary: true, verified: true },
      ],
    })
    await page.getByRole('link', { name: 'Sign in with GitHub' }).click()
    await page.waitForURL((url) => url.pathname === '/app/tags')
    await page.getByRole('heading', { name: 'Tags', level: 1 }).waitFor()
    expect(github.requests).toContain('GET /login/oauth/authorize')
    expect(github.requests).toContain('POST /login/oauth/access_token')
    expect(product.problems).toEqual([])
  }, 60_000)

  test('by keyboard alone: a link created with Tab and Enter, its deletion cancelled with Escape, then confirmed', async () => {
    await page.goto(`${product.origin}/app`)
    await page.getByText('No links yet').waitFor()

    await tabTo(page, 'Destination URL')
    await page.keyboard.type(`http://${LANDING_HOST}/typed`)
    await page.keyboard.press('Tab')
    expect(await focusedName(page)).toBe('Alias (optional)')
    const alias = `kbd-${crypto.randomUUID().slice(0, 6)}`
    await page.keyboard.type(alias)
    await page.getByText(`“${alias}” is available`).waitFor()
    await page.keyboard.press('Enter')
    await page.getByRole('status').filter({ hasText: 'Created' }).waitFor()
    const shortUrl = `http://127.0.0.1:${new URL(product.origin).port}/${alias}`
    await page.getByRole('rowheader', { name: new RegExp(alias) }).waitFor()

    // The row's Delete opens the confirmation with the focus inside it; Escape cancels and keeps the link.
    const dialog = page.getByRole('dialog', { name: 'Delete this link?' })
    await tabTo(page, `Delete ${shortUrl}`)
    await page.keyboard.press('Enter')
    await dialog.waitFor()
    expect(await focusedName(page)).toBe('Cancel')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'hidden' })
    expect((await fetch(`${product.origin}/api/v1/links/${alias}`, { headers: { authorization: `Bearer ${human.apiKey}` } })).status).toBe(200)

    // Again, and this time Tab to the dialog's "Delete link" and Enter.
    await page.getByRole('button', { name: `Delete ${shortUrl}` }).focus()
    await page.keyboard.press('Enter')
    await dialog.waitFor()
    await page.keyboard.press('Tab')
    expect(await focusedName(page)).toBe('Delete link')
    await page.keyboard.press('Enter')
    await page.getByText('No links yet').waitFor()
    expect((await fetch(`${product.origin}/api/v1/links/${alias}`, { headers: { authorization: `Bearer ${human.apiKey}` } })).status).toBe(404)
    expect(product.problems).toEqual([])
  }, 60_000)

  test('signed in, a sign-in link whose next leads off the site lands on the dashboard of this site', async () => {
    for (const next of ['/.//evil.example', '/..//evil.example/x', '/%2e%2e//evil.example', '/a/..//evil.example', '/%2F%2Fevil.example', '/\\evil.example']) {
      await page.goto(`${product.origin}/signin?next=${encodeURIComponent(next)}`)
      await page.waitForURL((url) => url.pathname === '/app', { timeout: 10_000 })
      expect(new URL(page.url()).origin, next).toBe(product.origin)
      await page.getByRole('heading', { name: 'Links', level: 1 }).waitFor()
    }
    expect(product.problems).toEqual([])
  }, 60_000)

  test('Sign out ends the session: the sign-in page, the dashboard asks again, the old cookie is refused by the API', async () => {
    await page.goto(`${product.origin}/app/account`)
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor()
    const cookies = await page.context().cookies(product.origin)
    const session = cookies.find((c) => c.name.endsWith('ls_session'))
    expect(session, JSON.stringify(cookies.map((c) => c.name))).toBeDefined()
    const withOld = () => fetch(`${product.origin}/api/v1/account/status`, { headers: { cookie: `${session!.name}=${session!.value}` } })
    expect((await withOld()).status).toBe(200)

    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL((url) => url.pathname === '/signin')
    await page.goto(`${product.origin}/app/account`)
    const asked = new URL(page.url())
    expect(asked.pathname).toBe('/signin')
    expect(asked.searchParams.get('next')).toBe('/app/account')
    // The session is ended at the service, not only forgotten by this browser.
    const refused = await withOld()
    expect(refused.status, await refused.clone().text()).toBe(401)
    expect(product.problems).toEqual([])
  }, 60_000)
})
