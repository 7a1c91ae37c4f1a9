// The dashboard's moderation section in Chromium, against the embedded product started with ADMIN_EMAILS
// naming one account: a member of the service sees no such section (the API's probe answers them 404,
// as every admin route does); the operator sees it, disables a guest link visitors reported (the reports
// filed through POST /api/v1/reports from three networks), dismisses a wrong report, bans a host, and
// suspends an account and restores it — each with a reason, the destructive ones after the confirm
// dialog — then finds all of it in the audit. What visitors and the suspended member then get is checked
// outside the page (the 410 page, a sign-in asked for again, a refused key). Skipped, with a printed
// reason, where Chromium is absent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { cancelDialog, HAVE_CHROMIUM, LANDING_HOST, reportSkip, startProduct, type Product } from '../support/dashboard'
import { waitForMail } from '../support/signin'
import { codeFrom } from '../support/smtp'

reportSkip('test/browser/dashboard-moderation.test.ts')

const IP_HEADER = 'x-test-client-ip'
const suffix = crypto.randomUUID().slice(0, 6)
const operatorEmail = `operator-${suffix}@example.test`

let product: Product
let operatorPage: Page
let member: { email: string; apiKey: string }
let memberContext: BrowserContext
let memberPage: Page

async function api(path: string, init: { method?: string; token?: string; body?: unknown; ip?: string } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (init.token) headers.authorization = `Bearer ${init.token}`
  if (init.ip) headers[IP_HEADER] = init.ip
  const response = await fetch(`${product.origin}${path}`, { method: init.method ?? (init.body ? 'POST' : 'GET'), headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) })
  const text = await response.text()
  return { status: response.status, text, body: text ? JSON.parse(text) : undefined }
}

/** An account for this exact address (ADMIN_EMAILS names it before it exists): guest → register → mailed code → verify. */
async function signUpAs(email: string): Promise<string> {
  const guest = (await api('/api/v1/guest/token', { method: 'POST' })).body.data.guest_token
  expect((await api('/api/v1/guest/register', { token: guest, body: { email } })).status).toBe(200)
  const code = codeFrom((await waitForMail(product.sink, email)) ?? undefined)
  const verified = await api('/api/v1/guest/verify', { token: guest, body: { email, code } })
  expect(verified.status, verified.text).toBe(200)
  return verified.body.data.api_key
}

/** A guest's link to the landing page; returns its alias. */
async function guestLink(path: string): Promise<string> {
  const guest = (await api('/api/v1/guest/token', { method: 'POST' })).body.data.guest_token
  const made = await api('/api/v1/shorten', { token: guest, body: { url: `http://${LANDING_HOST}/${path}` } })
  expect(made.status, made.text).toBe(200)
  return made.body.data.alias
}

/** A visitor's report of the link from its own network. */
async function report(alias: string, network: number, reason = 'phishing') {
  const res = await api('/api/v1/reports', { body: { url: `${product.origin}/${alias}`, reason, details: `seen from network ${network}` }, ip: `198.51.${network}.7` })
  expect(res.status, res.text).toBe(201)
}

const section = (page: Page, name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true })
const moderation = (name: string) => operatorPage.getByRole('navigation', { name: 'Moderation' }).getByRole('link', { name, exact: true })
const shortName = (alias: string) => `${new URL(product.origin).host}/${alias}`

describe.skipIf(!HAVE_CHROMIUM)('moderation in the dashboard (Chromium, embedded product)', () => {
  beforeAll(async () => {
    product = await startProduct({ ADMIN_EMAILS: operatorEmail, TRUSTED_IP_HEADER: IP_HEADER })
    await signUpAs(operatorEmail)
    member = await product.signUp('member')
    operatorPage = (await product.newPage()).page
    await operatorPage.setViewportSize({ width: 1280, height: 900 })
    await operatorPage.goto(`${product.origin}/app`)
    await product.signIn(operatorPage, operatorEmail)
    await operatorPage.waitForURL((url) => url.pathname === '/app')
  }, 120_000)

  afterAll(async () => {
    await product?.stop()
  })

  test('a member sees no moderation section; the moderation pages are not found; the admin API answers them 404', async () => {
    ;({ context: memberContext, page: memberPage } = await product.newPage())
    await memberPage.goto(`${product.origin}/app`)
    await product.signIn(memberPage, member.email)
    await memberPage.waitForURL((url) => url.pathname === '/app')
    // The member's page shell carries no operator mark, so the section stays hidden.
    await section(memberPage, 'Links').waitFor()
    expect(await memberPage.locator('meta[name="operator"]').count()).toBe(0)
    expect(await section(memberPage, 'Moderation').count()).toBe(0)
    await memberPage.goto(`${product.origin}/app/moderation`)
    await memberPage.getByRole('heading', { name: 'Page not found' }).waitFor()
    for (const path of ['/api/v1/admin/reports', '/api/v1/admin/links?q=x']) {
      expect((await memberContext.request.get(`${product.origin}${path}`)).status(), `${path} with the member's session`).toBe(404)
      expect((await api(path, { token: member.apiKey })).status, `${path} with the member's key`).toBe(404)
    }
    expect(product.problems).toEqual([])
  }, 60_000)

  test('the operator sees the section; disables a guest link reported from three networks; dismisses a wrong report', async () => {
    const phish = await guestLink(`phish-${suffix}`)
    const fine = await guestLink(`fine-${suffix}`)
    for (const network of [1, 2, 3]) await report(phish, network)
    await report(fine, 4, 'spam')

    await section(operatorPage, 'Moderation').click()
    await operatorPage.getByRole('heading', { name: 'Moderation', level: 1 }).waitFor()
    const cards = (alias: string) => operatorPage.getByRole('article').filter({ hasText: shortName(alias) })
    await cards(phish).first().waitFor()
    expect(await cards(phish).count()).toBe(3)
    // Three networks flagged it already: visitors see a warning first.
    await cards(phish).first().getByText('Flagged: warning first').waitFor()

    const card = cards(phish).first()
    await card.getByLabel('Reason').fill('Bank phishing kit, ticket 17')
    await card.getByRole('button', { name: 'Disable link' }).click()
    const dialog = operatorPage.getByRole('dialog', { name: 'Disable this link?' })
    await cancelDialog(dialog)
    await card.getByRole('button', { name: 'Disable link' }).click()
    await dialog.getByRole('button', { name: 'Disable link' }).click()
    await operatorPage
      .getByRole('status')
      .filter({ hasText: `${shortName(phish)} disabled; 3 reports closed.` })
      .waitFor()
    expect(await cards(phish).count()).toBe(0)

    const visitor = await product.newTab(operatorPage.context())
    await visitor.goto(`${product.origin}/${phish}`)
    await product.expectRefused([410, `/${phish}`])
    expect(await visitor.textContent('body')).toContain('disabled for abuse')
    await visitor.close()

    await cards(fine).getByRole('button', { name: 'Dismiss report' }).click()
    await operatorPage
      .getByRole('status')
      .filter({ hasText: `Report dismissed; ${shortName(fine)} is left as it was.` })
      .waitFor()
    expect(await cards(fine).count()).toBe(0)
    const redirect = await fetch(`${product.origin}/${fine}`, { redirect: 'manual' })
    expect(redirect.status).toBe(302)
    expect(product.problems).toEqual([])
  }, 90_000)

  test('the operator bans a host: its links, by destination or subdomain, answer 410; the ban is listed and lifted', async () => {
    const host = `evil-${suffix}.example`
    const direct = await api('/api/v1/shorten', { token: member.apiKey, body: { url: `https://${host}/login` } })
    const below = await api('/api/v1/shorten', { token: member.apiKey, body: { url: `https://cdn.${host}/kit.zip` } })
    expect([direct.status, below.status], direct.text + below.text).toEqual([200, 200])

    await moderation('Hosts').click()
    await operatorPage.getByText('No host is banned.').waitFor()
    await operatorPage.getByLabel('Host', { exact: true }).fill(host)
    await operatorPage.getByRole('region', { name: 'Ban a host' }).getByLabel('Reason').fill('Hosts phishing kits, ticket 18')
    await operatorPage.getByRole('button', { name: 'Ban host' }).click()
    await operatorPage.getByRole('dialog', { name: 'Ban this host?' }).getByRole('button', { name: 'Ban host' }).click()
    await operatorPage
      .getByRole('status')
      .filter({ hasText: `${host} banned; 2 links disabled.` })
      .waitFor()
    await operatorPage.getByRole('rowheader', { name: host }).waitFor()
    for (const made of [direct, below]) expect((await fetch(made.body.data.short_url, { redirect: 'manual' })).status, made.body.data.short_url).toBe(410)

    await operatorPage.getByRole('button', { name: `Unban ${host}` }).click()
    await operatorPage
      .getByRole('status')
      .filter({ hasText: `${host} is no longer banned.` })
      .waitFor()
    await operatorPage.getByText('No host is banned.').waitFor()
    expect(product.problems).toEqual([])
  }, 60_000)

  test("the operator suspends the member's account from one of its links: signed out, key refused, links disabled; then restores it", async () => {
    const made = await api('/api/v1/shorten', { token: member.apiKey, body: { url: `http://${LANDING_HOST}/member-${suffix}` } })
    expect(made.status, made.text).toBe(200)
    await moderation('Links').click()
    await operatorPage.getByLabel('Alias, host or URL').fill(made.body.data.alias)
    await operatorPage.getByRole('button', { name: 'Find links' }).click()
    const row = operatorPage.getByRole('row').filter({ has: operatorPage.getByRole('rowheader', { name: shortName(made.body.data.alias) }) })
    await row.getByRole('link').click()
    await operatorPage.getByRole('heading', { name: member.email }).waitFor()
    await operatorPage.getByText('In good standing').waitFor()

    await operatorPage.getByLabel('Reason').fill('Spam campaign, ticket 19')
    await operatorPage.getByRole('button', { name: 'Suspend account' }).click()
    await operatorPage.getByRole('dialog', { name: 'Suspend this account?' }).getByRole('button', { name: 'Suspend account' }).click()
    await operatorPage.getByRole('status').filter({ hasText: 'Account suspended;' }).waitFor()
    await operatorPage.getByText(/Suspended since/).waitFor()

    expect((await api('/api/v1/links', { token: member.apiKey })).status, "the member's key").toBe(401)
    expect((await fetch(made.body.data.short_url, { redirect: 'manual' })).status, 'its link').toBe(410)
    await memberPage.goto(`${product.origin}/app`)
    await memberPage.waitForURL((url) => url.pathname === '/signin')
    expect(
      product.sink.to(member.email).some((mail) => /suspended your account/.test(mail.raw)),
      'the member was mailed',
    ).toBe(true)

    await operatorPage.getByLabel('Reason').fill('Owner explained, ticket 19')
    await operatorPage.getByRole('button', { name: 'Restore account' }).click()
    await operatorPage.getByRole('status').filter({ hasText: 'Account restored;' }).waitFor()
    await operatorPage.getByText('In good standing').waitFor()
    expect((await fetch(made.body.data.short_url, { redirect: 'manual' })).status, 'its link again').toBe(302)
    expect(product.problems).toEqual([])
  }, 90_000)

  test('the audit lists every action with its reason', async () => {
    await moderation('Audit').click()
    for (const [words, reason] of [
      ['disabled a link', 'Bank phishing kit, ticket 17'],
      ['dismissed a report', 'None given'],
      ['banned a host', 'Hosts phishing kits, ticket 18'],
      ['lifted a host ban', 'None given'],
      ['suspended an account', 'Spam campaign, ticket 19'],
      ['restored an account', 'Owner explained, ticket 19'],
    ]) {
      await operatorPage.getByRole('row').filter({ hasText: words }).filter({ hasText: reason }).filter({ hasText: operatorEmail }).waitFor()
    }
    expect(product.problems).toEqual([])
  }, 60_000)
})
