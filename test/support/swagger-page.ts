// Swagger UI driven as a person drives it (playwright-core): the Authorize dialog, one operation opened
// at a time, "Try it out", "Execute". Every wait is for an event (an element appearing, the network
// response) under a generous deadline: Swagger UI resolves an operation of the OpenAPI 3.1 document when
// it is opened, which takes seconds on a busy 2-core machine.
import type { Locator, Page, Response } from 'playwright-core'

/** Deadlines, not expected durations: an operation opens in ~3 s here, unloaded. */
export const OPEN_TIMEOUT_MS = 180_000
export const RESPONSE_TIMEOUT_MS = 60_000

export interface Operation {
  operationId: string
  tag: string
  method: string
  /** The path template, e.g. /api/v1/links/{alias}. */
  path: string
}

/** What one Execute sent and got. */
export interface Executed {
  status: number
  url: URL
  requestHeaders: Record<string, string>
  responseHeaders: Record<string, string>
  body: string
}

/** The operations of a document, by operationId. */
export function operationsOf(doc: { paths: Record<string, Record<string, { operationId: string; tags: string[] }>> }): Map<string, Operation> {
  const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])
  const out = new Map<string, Operation>()
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (METHODS.has(method)) out.set(op.operationId, { operationId: op.operationId, tag: op.tags[0]!, method, path })
    }
  }
  return out
}

/** Whether a request path is an instance of a path template. */
function matches(template: string, pathname: string): boolean {
  const want = template.split('/')
  const got = pathname.split('/')
  return want.length === got.length && want.every((part, i) => part === got[i] || (part.startsWith('{') && got[i] !== ''))
}

/** Swagger UI's block of the operation: id="operations-{tag}-{operationId}". */
export function blockOf(page: Page, op: Operation): Locator {
  return page.locator(`[id="operations-${op.tag}-${op.operationId}"]`)
}

/** Opens the operation (if closed) and presses "Try it out" (if not pressed yet). */
export async function openForTrying(page: Page, op: Operation): Promise<Locator> {
  const block = blockOf(page, op)
  if ((await block.locator('.opblock-summary-control[aria-expanded="true"]').count()) === 0) {
    await block.locator('.opblock-summary-control').click()
  }
  // Rendered once the operation is resolved: the button reads "Try it out", then "Cancel".
  const button = block.locator('button.try-out__btn')
  await button.waitFor({ timeout: OPEN_TIMEOUT_MS })
  if ((await button.innerText()).trim() === 'Try it out') await button.click()
  await block.locator('button.execute').waitFor({ timeout: OPEN_TIMEOUT_MS })
  return block
}

/**
 * Closes the operation, as a person does when done with it: every open operation is rendered again on
 * each change of the page (an Execute, Authorize), so the page slows with each one left open.
 */
export async function close(block: Locator): Promise<void> {
  await block.locator('.opblock-summary-control[aria-expanded="true"]').click()
  await block.locator('.opblock-body').waitFor({ state: 'detached', timeout: RESPONSE_TIMEOUT_MS })
}

/** Presses Execute as the form is, waits for the answer on the network and in the page. */
export async function execute(page: Page, op: Operation, block: Locator): Promise<Executed> {
  const answered = page.waitForResponse((r: Response) => r.request().method().toLowerCase() === op.method && matches(op.path, new URL(r.url()).pathname), { timeout: RESPONSE_TIMEOUT_MS })
  await block.locator('button.execute').click()
  const response = await answered
  const status = response.status()
  // The page shows the answer it got (the live response row with its status).
  await block
    .locator('.live-responses-table tr.response .response-col_status', { hasText: String(status) })
    .first()
    .waitFor({ timeout: RESPONSE_TIMEOUT_MS })
  return {
    status,
    url: new URL(response.url()),
    requestHeaders: await response.request().allHeaders(),
    responseHeaders: await response.allHeaders(),
    body: await response.text(),
  }
}

/** What the form holds for each parameter of an opened operation (name → value; '' when empty). */
export async function parameterValues(block: Locator): Promise<Record<string, string>> {
  const pairs = await block.locator('tr[data-param-name]').evaluateAll((rows) =>
    rows.map((row) => {
      const field = row.querySelector('input, select, textarea') as { value?: string } | null
      return [row.getAttribute('data-param-name') ?? '?', field?.value ?? ''] as const
    }),
  )
  return Object.fromEntries(pairs)
}

/** The Authorize dialog: the bearer credential replaces whatever was given before. */
export async function authorizeBearer(page: Page, credential: string): Promise<void> {
  await page.locator('.auth-wrapper button.authorize').click()
  const bearer = page.locator('.dialog-ux .auth-container', { hasText: 'bearerAuth' })
  await bearer.waitFor({ timeout: RESPONSE_TIMEOUT_MS })
  const logout = bearer.locator('button', { hasText: 'Logout' })
  if ((await logout.count()) > 0) await logout.click()
  await bearer.locator('#auth-bearer-value').fill(credential)
  await bearer.locator('button.authorize').click()
  await logout.waitFor({ timeout: RESPONSE_TIMEOUT_MS })
  await bearer.locator('button.btn-done').click()
  await page.locator('.dialog-ux').waitFor({ state: 'detached', timeout: RESPONSE_TIMEOUT_MS })
}
