// The README's five-minute tour, run as written: its ```sh blocks, read from README.md, go one by one to
// one bash (so the variables of a block reach the next) in the directory that holds DATA_DIR, as a reader
// runs them beside `npm start`. The entry is whatever package.json's start script names, started with
// nothing configured but its port and a temporary DATA_DIR. Between the blocks the test does what the
// tour asks of the reader's browser (the dashboard's sign-in form), and after each it asserts what the
// README says the step shows. The sign-in code comes from the README's own command: no SMTP, the outbox.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DOC_ORIGIN, examplesOf, startDocWalk, type DocWalk } from './support/doc-examples'
import type { Child } from './support/processes'
import { until } from './support/wait'

/** How the tour names the service; the test's own port replaces it. */
const README_ORIGIN = DOC_ORIGIN
const EMAIL = 'me@example.com'
/** A start, a mail written after its answer: far longer than either takes, short of a hang. */
const STEP_DEADLINE_MS = 60_000

/** The tour section of README.md and its ```sh blocks, in order. */
const tour = () => examplesOf('README.md', 'A five-minute tour')

/** What a browser keeps between pages: cookies, and redirects left for the test to follow. */
class Browser {
  private readonly cookies = new Map<string, string>()
  constructor(private readonly origin: string) {}

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  }

  async request(method: 'GET' | 'POST', path: string, form?: Record<string, string>) {
    const headers: Record<string, string> = {}
    if (this.cookies.size > 0) headers.cookie = this.cookieHeader()
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded'
    const response = await fetch(this.origin + path, { method, headers, body: form ? new URLSearchParams(form).toString() : undefined, redirect: 'manual' })
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair!.indexOf('=')
      this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim())
    }
    const text = await response.text()
    return {
      status: response.status,
      location: response.headers.get('location'),
      text,
      shown: `${method} ${path} → ${response.status} ${response.headers.get('location') ?? ''} ${text.replace(/\s+/g, ' ').slice(0, 600)}`,
    }
  }

  hasCookie(name: string): boolean {
    return this.cookies.has(name)
  }
}

/** A hidden field's value in a server-rendered page. */
function hiddenField(html: string, name: string): string | undefined {
  return new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`).exec(html)?.[1]
}

describe("the README's five-minute tour, against npm start", () => {
  const blocks = tour().blocks
  let walk: DocWalk
  let app: Child
  let origin: string
  let dataDir: string
  let alias = ''
  let apiKey = ''

  /** A block of the tour with the README's origin made this run's (its output is asserted step by step). */
  const runBlock = (index: number) => walk.shell.run(walk.localise(blocks[index]!))

  beforeAll(async () => {
    walk = await startDocWalk({ name: 'tour' })
    ;({ app, origin } = walk)
    dataDir = join(walk.dir, 'data')
  }, 120_000)

  afterAll(() => walk?.stop())

  test('the tour has the five shell blocks this test runs', () => {
    expect(blocks.length, tour().section).toBe(5)
  })

  test(
    '1. a guest shortens a link, and following it is a 302 to the destination',
    async () => {
      const run = await runBlock(0)
      expect(run.status, run.shown).toBe(0)
      expect(run.lines[0], run.shown).toMatch(new RegExp(`^${origin}/[A-Za-z0-9]{7}$`))
      expect(run.lines.slice(1), run.shown).toEqual(['HTTP/1.1 302 Found', 'Location: https://example.com/landing'])
      alias = run.lines[0]!.slice(origin.length + 1)
    },
    STEP_DEADLINE_MS,
  )

  test(
    '2. registering prints the code to the terminal and the outbox; verify answers an API key that owns the link',
    async () => {
      const run = await runBlock(1)
      expect(run.status, run.shown).toBe(0)
      expect(run.lines[0], run.shown).toStartWith(`"message":"A verification code was sent to ${EMAIL}.`)
      expect(run.lines[1], run.shown).toMatch(/^mk_[A-Za-z0-9_-]+$/)
      apiKey = run.lines[1]!
      // The terminal of npm start: the mail as a log line marked development_outbox.
      expect(app.output(), app.output()).toMatch(/"development_outbox":true.*Your verification code is: \d{6}/)
      // "The guest's link now belongs to a Free account".
      const links = await fetch(`${origin}/api/v1/links`, { headers: { authorization: `Bearer ${apiKey}` } })
      const body = await links.text()
      expect(links.status, body).toBe(200)
      expect(body, body).toContain(`"alias":"${alias}"`)
      expect(body, body).toContain('"account_type":"free"')
    },
    STEP_DEADLINE_MS,
  )

  test(
    '3. the dashboard asks to sign in; the code read from the outbox as the README reads it signs in, and the link is listed',
    async () => {
      const browser = new Browser(origin)
      const dashboard = await browser.request('GET', '/app')
      expect(dashboard.status, dashboard.shown).toBe(303)
      const signInPath = dashboard.location!
      expect(signInPath, dashboard.shown).toStartWith('/signin?next=')
      const form = await browser.request('GET', signInPath)
      expect(form.status, form.shown).toBe(200)
      const next = hiddenField(form.text, 'next')!
      const csrf = hiddenField(form.text, 'csrf')!
      expect(next, form.shown).toBe('/app')
      const codePage = await browser.request('POST', '/signin', { email: EMAIL, next, csrf })
      expect(codePage.status, codePage.shown).toBe(200)
      const attempt = hiddenField(codePage.text, 'attempt')
      expect(attempt, codePage.shown).toBeDefined()

      // The mail is written after the page answered: wait for it in the outbox, then read it the README's way.
      const outbox = join(dataDir, 'outbox.log')
      await until(
        () => existsSync(outbox) && readFileSync(outbox, 'utf8').includes('sign-in code is:'),
        () => `a sign-in mail in ${outbox}:\n${app.output()}`,
        STEP_DEADLINE_MS,
      )
      const run = await runBlock(2)
      expect(run.status, run.shown).toBe(0)
      expect(run.lines, run.shown).toHaveLength(1)
      expect(run.lines[0], run.shown).toMatch(/^sign-in code is: \d{6}$/)
      const code = run.lines[0]!.slice(-6)
      // The same code in the terminal of npm start.
      expect(app.output(), app.output()).toContain(`Your sign-in code is: ${code}`)

      const signedIn = await browser.request('POST', '/signin/code', { attempt: attempt!, code, next, csrf, email: EMAIL })
      expect(signedIn.status, signedIn.shown).toBe(303)
      expect(signedIn.location, signedIn.shown).toBe('/app')
      expect(browser.hasCookie('ls_session'), browser.cookieHeader()).toBe(true)
      const page = await browser.request('GET', '/app')
      expect(page.status, page.shown).toBe(200)
      // The links page's list is the API's, called with the session: the link from step 1 is in it.
      const list = await browser.request('GET', '/api/v1/links')
      expect(list.status, list.shown).toBe(200)
      expect(list.text, list.shown).toContain(`"alias":"${alias}"`)
    },
    STEP_DEADLINE_MS,
  )

  test(
    '4. Swagger UI answers, and the document is OpenAPI 3.1',
    async () => {
      const ui = await fetch(`${origin}/swagger`)
      const html = await ui.text()
      expect(ui.status, html.slice(0, 300)).toBe(200)
      expect(ui.headers.get('content-type'), html.slice(0, 300)).toStartWith('text/html')
      const run = await runBlock(3)
      expect(run.status, run.shown).toBe(0)
      expect(run.lines, run.shown).toEqual(['"openapi":"3.1.0"'])
    },
    STEP_DEADLINE_MS,
  )

  test(
    "5. an MCP host's first call is challenged with the metadata of the URL the tour gives it",
    async () => {
      const hostUrl = `${README_ORIGIN}/mcp`
      expect(tour().section, 'the tour names the MCP URL').toContain(`claude mcp add --transport http links ${hostUrl}`)
      const run = await runBlock(4)
      expect(run.status, run.shown).toBe(0)
      expect(run.lines, run.shown).toHaveLength(1)
      const metadataUrl = `${origin}/.well-known/oauth-protected-resource/mcp`
      expect(run.lines[0], run.shown).toStartWith(`www-authenticate: Bearer resource_metadata="${metadataUrl}", scope="`)
      const metadata = await fetch(metadataUrl)
      const body = await metadata.text()
      expect(metadata.status, body).toBe(200)
      expect((JSON.parse(body) as { resource: string }).resource, body).toBe(hostUrl.replace(README_ORIGIN, origin))
    },
    STEP_DEADLINE_MS,
  )
})
