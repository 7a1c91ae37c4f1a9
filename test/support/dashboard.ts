// The dashboard as a person meets it: the embedded product (`npm start`'s one-process/main.ts) on a real port with
// its own DATA_DIR and an SMTP sink for the mailed codes, and Debian's Chromium driven by playwright-core
// (never a downloaded browser). Accounts are made the real way (guest → register → the mailed code →
// verify), and people sign in on the sign-in pages with the code the sink received.
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core'
import { freePort, startEntry, TEST_SECRETS, type Child } from './processes'
import { signInCodeFrom, waitForMail } from './signin'
import { codeFrom, startSmtpSink, type SmtpSink } from './smtp'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const HAVE_CHROMIUM = existsSync(CHROMIUM)
const LAUNCH_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

/**
 * Where test links lead: a page served here, which Chromium reaches under this name (its host resolver
 * maps it to the local server; nothing leaves the machine). A name, not 127.0.0.1, because the service
 * takes loopback addresses for its own short domain and answers a link to them as a loop.
 */
export const LANDING_HOST = 'landing.test'

/** Says, once per file, why its browser tests did not run. */
export function reportSkip(file: string): void {
  if (!HAVE_CHROMIUM) console.log(`${file}: SKIPPED: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`)
}

export interface Product {
  origin: string
  sink: SmtpSink
  child: Child
  browser: Browser
  /**
   * Requests the pages made to any other origin, page errors, console errors and CSP reports, each
   * console line with the address it is about. Every journey ends with this list empty.
   */
  problems: string[]
  /**
   * For refusals a test causes on purpose: waits until Chromium has logged the failed load of each
   * [status, path] given (a path of the product's origin, without its query), then takes exactly one
   * line out of `problems` per entry; every other line stays for the test's final check.
   */
  expectRefused(...loads: Array<[status: number, path: string]>): Promise<void>
  newPage(): Promise<{ context: BrowserContext; page: Page }>
  /** Another tab in the context (a visitor, say), its requests and errors checked like the page's. */
  newTab(context: BrowserContext): Promise<Page>
  /** An account made through the API; returns its e-mail address and API key. */
  signUp(label: string): Promise<{ email: string; apiKey: string }>
  /** Signs in on the sign-in page the browser is on (the e-mail form), with the code the sink received. */
  signIn(page: Page, email: string): Promise<void>
  stop(): Promise<void>
}

/**
 * The product on a free port. `otherOrigins`: origins the pages may visit besides the product's and the
 * landing page's (a loopback fake of GitHub's sign-in, say); any other request is a problem.
 */
export async function startProduct(env: Record<string, string> = {}, options: { otherOrigins?: string[] } = {}): Promise<Product> {
  const sink = await startSmtpSink()
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const dataDir = join(mkdtempSync(join(tmpdir(), 'dashboard-')), 'data')
  const child = await startEntry(
    'one-process/main.ts',
    { PORT: String(port), DATA_DIR: dataDir, SMTP_URL: sink.url, PUBLIC_API_URL: origin, SHORT_DOMAIN: `127.0.0.1:${port}`, ...TEST_SECRETS, ...env },
    port,
  )
  const landing = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (request) => new Response(`<!doctype html><title>Landing</title><h1>Landed on ${new URL(request.url).pathname}</h1>`, { headers: { 'content-type': 'text/html' } }),
  })
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...LAUNCH_ARGS, `--host-resolver-rules=MAP ${LANDING_HOST} 127.0.0.1:${landing.port}`] })
  const problems: string[] = []
  // Every request a page makes, seen through a CDP session of its own rather than context.on('request'):
  // that subscription makes playwright-core track every request as an object, and a navigation that cuts
  // requests short then trips its bookkeeping now and then ("Cannot find parent object request@…"),
  // failing the test for nothing the page did.
  const watched = new WeakMap<Page, Promise<void>>()
  const watch = async (page: Page) => {
    const cdp = await page.context().newCDPSession(page)
    cdp.on('Network.requestWillBeSent', ({ request }) => {
      const url = new URL(request.url)
      const known = url.origin === origin || url.hostname === LANDING_HOST || url.protocol === 'data:' || url.protocol === 'blob:' || options.otherOrigins?.includes(url.origin)
      if (!known) problems.push(`request to another origin: ${request.url}`)
    })
    await cdp.send('Network.enable')
  }
  const watchOnce = (page: Page) => watched.get(page) ?? watched.set(page, watch(page)).get(page)!
  // Every tab's page errors and console errors, nothing filtered out: a load the server refused (an API
  // call, an icon, a page) is Chromium's "Failed to load resource" error, and a test that causes one on
  // purpose names it with expectRefused.
  const heard = new WeakSet<Page>()
  const listenOnce = (page: Page) => {
    if (heard.has(page)) return
    heard.add(page)
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console ${message.type()}: ${message.text()} [${message.location().url}]`)
    })
  }
  const api = async (path: string, body: unknown, token: string) => {
    const response = await fetch(`${origin}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const text = await response.text()
    if (!response.ok) throw new Error(`${path}: ${response.status} ${text}`)
    return JSON.parse(text) as { data: Record<string, unknown> }
  }
  return {
    origin,
    sink,
    child,
    browser,
    problems,
    async newPage() {
      const context = await browser.newContext()
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
      // A tab the page opens itself (a popup) is watched from its first event on; tabs the test opens go
      // through newTab, which watches them before they load anything.
      context.on('page', (page) => {
        listenOnce(page)
        void watchOnce(page).catch(() => {})
      })
      const page = await context.newPage()
      listenOnce(page)
      await watchOnce(page)
      return { context, page }
    },
    async expectRefused(...loads) {
      // Generous: the line comes through the DevTools protocol, behind whatever the machine is doing.
      const deadline = Date.now() + 15_000
      for (;;) {
        // Each entry takes a line of its own: two entries of one load need two lines.
        const taken = new Set<number>()
        const found = loads.every(([status, path]) => {
          const at = problems.findIndex((line, i) => !taken.has(i) && isRefusedLoad(line, origin, status, path))
          return at !== -1 && taken.add(at)
        })
        if (found) {
          for (const at of [...taken].sort((a, b) => b - a)) problems.splice(at, 1)
          return
        }
        if (Date.now() > deadline) throw new Error(`Chromium did not log every refusal of ${JSON.stringify(loads)}; the problems logged:\n${problems.join('\n')}`)
        await Bun.sleep(50)
      }
    },
    async newTab(context) {
      const tab = await context.newPage()
      listenOnce(tab)
      await watchOnce(tab)
      return tab
    },
    async signUp(label) {
      const guest = await (await fetch(`${origin}/api/v1/guest/token`, { method: 'POST' })).json()
      const token = (guest as { data: { guest_token: string } }).data.guest_token
      const email = `${label}-${crypto.randomUUID().slice(0, 8)}@example.test`
      await api('/api/v1/guest/register', { email }, token)
      const code = codeFrom((await waitForMail(sink, email)) ?? undefined)
      const verified = await api('/api/v1/guest/verify', { email, code }, token)
      return { email, apiKey: String(verified.data.api_key) }
    },
    async signIn(page, email) {
      const before = sink.to(email).length
      await page.getByLabel('E-mail address of your account').fill(email)
      await page.getByRole('button', { name: 'Send me a sign-in code' }).click()
      const code = signInCodeFrom(await waitForMail(sink, email, before + 1))
      await page.getByLabel('Sign-in code').fill(code)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    },
    async stop() {
      await browser.close()
      landing.stop(true)
      await child.stop()
      await sink.close()
    },
  }
}

/** Whether a problem line is Chromium's console error for a load of `path` on `origin` answered `status`. */
function isRefusedLoad(line: string, origin: string, status: number, path: string): boolean {
  const match = /^console error: Failed to load resource: the server responded with a status of (\d{3}) \([^)]*\) \[(.+)\]$/.exec(line)
  if (!match || Number(match[1]) !== status) return false
  const url = new URL(match[2]!)
  return url.origin === origin && url.pathname === path
}

/**
 * Where the browser tests write their screenshots: SCREENSHOTS_DIR when set (the README's are made with
 * `SCREENSHOTS_DIR=docs/screenshots`), else a temporary directory, so a test run never changes the tree.
 */
export const SCREENSHOTS_DIR = process.env.SCREENSHOTS_DIR || mkdtempSync(join(tmpdir(), 'dashboard-shots-'))

/**
 * Answers a confirm dialog with Cancel and waits until it has closed: the page closes it from an effect,
 * on the next frame, and until then its buttons still match (its confirm button may share a name with
 * the page's own, as "Kill Agent" does).
 */
export async function cancelDialog(dialog: Locator): Promise<void> {
  await dialog.getByRole('button', { name: 'Cancel' }).click()
  await dialog.waitFor({ state: 'hidden' })
}
