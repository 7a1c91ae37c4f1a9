// The dashboard's machine-access pages in Chromium, against the embedded product: an API key is created
// on the account page (shown once, copied) and works from outside the browser, then is revoked and
// refused; an Agent is created, its token minted in the page, its held call approved in the inbox and run,
// its audit log lists the call, its scopes are narrowed and it is killed. Every check is what a person sees
// in the page, and what the API then does with the credential the page handed out. Skipped, with a
// printed reason, where Chromium is absent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { cancelDialog, HAVE_CHROMIUM, reportSkip, startProduct, type Product, SCREENSHOTS_DIR } from '../support/dashboard'

reportSkip('test/browser/dashboard-agents.test.ts')

const SHOTS = SCREENSHOTS_DIR

let product: Product
let human: { email: string; apiKey: string }
/** Signed in once by the first test (sign-in mails one code a minute per address); the others go on. */
let page: Page
/** The Agent the second test creates and the later ones use, with the token minted for it in the page. */
const agent = { name: `Cleanup bot ${crypto.randomUUID().slice(0, 4)}`, token: '', alias: '' }

const call = (path: string, token: string, init: RequestInit = {}) => fetch(`${product.origin}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } })

/** Polls until `check` holds: revocation and the kill switch take effect "within a second" across processes. */
async function eventually(what: string, check: () => Promise<boolean>, deadlineMs = 15_000): Promise<void> {
  const until = Date.now() + deadlineMs
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`not within ${deadlineMs} ms: ${what}`)
    await Bun.sleep(200)
  }
}

/** A link of the navigation (a page may link to the same place in its text). */
const section = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true })

async function clipboard(): Promise<string> {
  return page.evaluate<string>('navigator.clipboard.readText()')
}

describe.skipIf(!HAVE_CHROMIUM)('Agents, approvals and API keys in the dashboard (Chromium, embedded product)', () => {
  beforeAll(async () => {
    product = await startProduct()
    human = await product.signUp('agents')
    page = (await product.newPage()).page
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.goto(`${product.origin}/app/account`)
    await product.signIn(page, human.email)
    await page.waitForURL((url) => url.pathname === '/app/account')
    mkdirSync(SHOTS, { recursive: true })
  }, 120_000)

  afterAll(async () => {
    await product?.stop()
  })

  test('API keys: create one held to a scope, shown once and copied; it works; revoked after confirming, it is refused', async () => {
    const keys = page.getByRole('region', { name: 'API keys' })
    await keys.getByRole('rowheader', { name: 'Default key' }).waitFor()
    await keys.getByLabel('Key name').fill('Reporting script')
    const scopes = keys.getByRole('group', { name: 'Scopes' })
    await scopes.getByRole('checkbox', { name: /^links:read / }).check()
    await keys.getByRole('button', { name: 'Create key' }).click()

    const shown = page.getByRole('region', { name: 'Your new key “Reporting script”' })
    await shown.waitFor()
    expect(await shown.textContent()).toContain('it will not be shown again')
    await shown.getByRole('button', { name: 'Copy the new key' }).click()
    const key = await clipboard()
    expect(key).toMatch(/^mk_/)
    expect(await shown.locator('code').textContent()).toBe(key)

    const row = keys.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Reporting script' }) })
    const cells = await row.getByRole('cell').allTextContents()
    expect(key.startsWith(cells[0]!.replace('…', ''))).toBe(true)
    expect(cells[1]).toBe('links:read')
    expect(cells[3]).toBe('Never')
    // The Default key has no scopes: full access, in words.
    expect(
      await keys
        .getByRole('row')
        .filter({ has: page.getByRole('rowheader', { name: 'Default key' }) })
        .getByRole('cell')
        .nth(1)
        .textContent(),
    ).toBe('Full access')

    expect((await call('/api/v1/links', key)).status).toBe(200)
    // Held to links:read: a write is refused, as the page said.
    expect((await call('/api/v1/shorten', key, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"url":"https://example.com/"}' })).status).toBe(403)
    await page.screenshot({ path: `${SHOTS}/dashboard-account.png`, fullPage: true })

    // Once hidden, the key is nowhere in the page.
    await shown.getByRole('button', { name: 'Done, hide it' }).click()
    await shown.waitFor({ state: 'detached' })
    expect(await page.content()).not.toContain(key)

    await row.getByRole('button', { name: 'Revoke Reporting script' }).click()
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' })
    await cancelDialog(dialog)
    expect(await row.isVisible()).toBe(true)
    expect((await call('/api/v1/links', key)).status).toBe(200)
    await row.getByRole('button', { name: 'Revoke Reporting script' }).click()
    await dialog.getByRole('button', { name: 'Revoke key' }).click()
    await row.waitFor({ state: 'detached' })
    await eventually('the revoked key is refused', async () => (await call('/api/v1/links', key)).status === 401)
    expect(product.problems).toEqual([])
  }, 90_000)

  test('an Agent: created with three link scopes (deletes held by default), its token minted in the page, shown once', async () => {
    await section('Agents').click()
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor()
    await page.getByText('No Agent yet').waitFor()
    await page.getByLabel('Agent name').fill(agent.name)
    const scopes = page.getByRole('group', { name: 'Scopes' })
    for (const scope of ['links:read', 'links:write', 'links:delete']) await scopes.getByRole('checkbox', { name: new RegExp(`^${scope} `) }).check()
    const held = page.getByRole('group', { name: 'Wait for my approval before it may' })
    expect(await held.getByRole('checkbox', { name: /^links\.delete / }).isChecked()).toBe(true)
    expect(await held.getByRole('checkbox', { name: /^links\.create / }).isChecked()).toBe(false)
    await page.getByRole('button', { name: 'Create Agent' }).click()

    await page.getByRole('heading', { name: agent.name, level: 1 }).waitFor()
    expect(await page.locator('dl.facts').textContent()).toContain('links:read, links:write, links:delete')
    await page.getByLabel('Token lifetime').selectOption({ label: '30 minutes' })
    await page.getByRole('button', { name: 'Mint token' }).click()
    const shown = page.getByRole('region', { name: 'Your new token' })
    await shown.waitFor()
    expect(await shown.textContent()).toContain('it will not be shown again')
    await shown.getByRole('button', { name: 'Copy the new token' }).click()
    agent.token = await clipboard()
    expect(agent.token).toMatch(/^at_/)
    const listed = await (await call('/api/v1/links', agent.token)).json()
    expect(listed).toMatchObject({ success: true })
    expect(product.problems).toEqual([])
  }, 60_000)

  test('its held delete shows in the approvals inbox in full; approved, it runs and the link is gone', async () => {
    const created = await call('/api/v1/shorten', human.apiKey, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"url":"https://example.com/doomed"}' })
    agent.alias = ((await created.json()) as { data: { alias: string } }).data.alias
    const held = await call(`/api/v1/links/${agent.alias}`, agent.token, { method: 'DELETE' })
    expect(held.status).toBe(202)
    expect((await call(`/api/v1/links/${agent.alias}`, human.apiKey)).status).toBe(200)

    // The Agent list failing: the approvals still show, the Agent named by its id.
    const agents = (await (await call('/api/v1/agents', human.apiKey)).json()) as { data: { agents: { id: string; name: string }[] } }
    const agentId = agents.data.agents.find((a) => a.name === agent.name)!.id
    expect(product.problems).toEqual([])
    await page.route('**/api/v1/agents', (route) => route.fulfill({ status: 503, json: { success: false, error: { code: 'SERVICE_UNAVAILABLE', message: 'test' } } }))
    await section('Approvals').click()
    await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor()
    const card = page.getByRole('article').filter({ hasText: `DELETE /api/v1/links/${agent.alias}` })
    await card.waitFor()
    expect(await card.getByRole('heading').textContent()).toBe(`${agentId} asks to delete a link`)
    // Chromium logs the refused request itself, once; nothing else may have gone wrong.
    await product.expectRefused([503, '/api/v1/agents'])
    expect(product.problems).toEqual([])
    await page.unroute('**/api/v1/agents')

    // The Agent list answering after the approvals (as it did once by chance under CI's load): a card
    // still names the Agent the moment it shows, never its raw id.
    await page.route('**/api/v1/agents', async (route) => (await Bun.sleep(400), route.continue()))
    await page.reload()
    await card.waitFor()
    expect(await card.getByRole('heading').textContent()).toBe(`${agent.name} asks to delete a link`)
    await page.unroute('**/api/v1/agents')
    expect(await card.textContent()).toContain('Waiting for your decision')
    await page.screenshot({ path: `${SHOTS}/dashboard-approvals.png`, fullPage: true })
    await page.setViewportSize({ width: 390, height: 844 })
    await page.screenshot({ path: `${SHOTS}/dashboard-approvals-390.png`, fullPage: true })
    await page.setViewportSize({ width: 1280, height: 900 })

    await card.getByRole('button', { name: 'Approve' }).click()
    await card.getByText('Approved and run').waitFor()
    expect(await card.textContent()).toMatch(/The call answered 200\./)
    expect(await card.getByRole('button', { name: 'Approve' }).count()).toBe(0)
    expect((await call(`/api/v1/links/${agent.alias}`, human.apiKey)).status).toBe(404)

    // Decided, it is no longer waiting: the inbox is empty on the next visit, and listed under its outcome.
    await page.reload()
    await page.getByText('Nothing waits for your approval.').waitFor()
    await page.getByLabel('Show').selectOption({ label: 'Approved and run' })
    await page
      .getByRole('article')
      .filter({ hasText: `DELETE /api/v1/links/${agent.alias}` })
      .waitFor()
    expect(product.problems).toEqual([])
  }, 60_000)

  test('its audit log lists the held call and its run; a filter narrows the page', async () => {
    await section('Agents').click()
    await page.getByRole('link', { name: agent.name }).click()
    const audit = page.getByRole('region', { name: 'Audit log' })
    const deletes = audit.getByRole('row').filter({ hasText: `DELETE /api/v1/links/${agent.alias}` })
    // Audit events reach ClickHouse in batches: the run may land a moment after the hold. A person reloads.
    await eventually('the held call and its run in the audit log', async () => {
      await deletes.first().waitFor()
      if ((await deletes.count()) >= 2) return true
      await page.reload()
      return false
    })
    const outcomes = (await deletes.allTextContents()).map((text) => /Held for approval|Ran/.exec(text)?.[0])
    expect(outcomes.sort()).toEqual(['Held for approval', 'Ran'])
    expect(await audit.getByRole('row').filter({ hasText: 'GET /api/v1/links' }).count()).toBe(1)

    await audit.getByLabel('Outcome').selectOption({ label: 'Held for approval' })
    await expect(deletes.count()).resolves.toBe(1)
    expect(await audit.getByRole('row').filter({ hasText: 'GET /api/v1/links' }).count()).toBe(0)
    await audit.getByLabel('Outcome').selectOption({ label: 'All' })
    await page.screenshot({ path: `${SHOTS}/dashboard-agents.png`, fullPage: true })
    expect(product.problems).toEqual([])
  }, 60_000)

  test('narrowed scopes bind the token it holds; killed after confirming, its token is refused and it reads "killed"', async () => {
    const narrow = page.getByRole('region', { name: 'Narrow its scopes' })
    await narrow.getByRole('checkbox', { name: /^links:delete/ }).uncheck()
    await narrow.getByRole('button', { name: 'Save scopes' }).click()
    await narrow.getByRole('status').filter({ hasText: 'it now has links:read, links:write' }).waitFor()
    await eventually('the removed scope is refused', async () => (await call('/api/v1/links/anything', agent.token, { method: 'DELETE' })).status === 403)

    await page.getByRole('button', { name: 'Kill Agent' }).click()
    const dialog = page.getByRole('dialog', { name: 'Kill this Agent?' })
    await cancelDialog(dialog)
    expect((await call('/api/v1/links', agent.token)).status).toBe(200)
    await page.getByRole('button', { name: 'Kill Agent' }).click()
    await dialog.getByRole('button', { name: 'Kill Agent' }).click()
    await page.locator('dl.facts').getByText('Killed: its tokens are refused').waitFor()
    // A killed Agent offers neither a token nor the switch again.
    expect(await page.getByRole('button', { name: 'Mint token' }).count()).toBe(0)
    await eventually("the killed Agent's token is refused", async () => (await call('/api/v1/links', agent.token)).status === 401)

    await page.getByRole('link', { name: 'All Agents' }).click()
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: agent.name }) })
    expect(await row.getByRole('cell').nth(1).textContent()).toBe('Killed: its tokens are refused')
    expect(product.problems).toEqual([])
  }, 60_000)
})
