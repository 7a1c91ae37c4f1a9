// Not a test: what this module's tests share (named .test.ts so that, like them, it may import the test
// harness, and stays out of the product's import map). An API whose ADMIN_EMAILS names two operators
// made here, their keys (one with full access, one carrying `admin`), signed-in browsers, and calls with
// a key or a session.
import { accounts, links } from '../../db/schema'
import { newId } from '../../lib/ids'
import { createApiKey } from '../keys/verdicts'
import { call, show, TEST_IP_HEADER, testApi, testConfig, uniqueIp, type CallResult } from '../../../test/support/api'
import { Browser, inputValue, signInByMail } from '../../../test/support/signin'
import { startSmtpSink, type SmtpSink } from '../../../test/support/smtp'

export interface Person {
  id: string
  email: string
  /** A full-access key. */
  key: string
}

export interface Kit {
  api: Awaited<ReturnType<typeof testApi>>
  sink: SmtpSink
  /** In ADMIN_EMAILS, with an admin key. */
  operator: Person & { adminKey: string }
  /** Not in ADMIN_EMAILS. */
  stranger: Person
  /** A signed-in browser of `person` and its CSRF token. */
  signIn(person: Person): Promise<{ browser: Browser; csrf: string }>
  /** Another account (not an operator). */
  account(label?: string): Promise<Person>
  close(): Promise<void>
}

async function insertAccount(kit: Pick<Kit, 'api'>, email: string): Promise<Person> {
  const id = newId('account')
  await kit.api.deps.db.insert(accounts).values({ id, email })
  return { id, email, key: await createApiKey(kit.api.deps.db, id, new Date()) }
}

const uniqueAddress = (label: string) => `${label}-${crypto.randomUUID().slice(0, 12)}@example.test`

export async function adminKit(env: Record<string, string> = {}): Promise<Kit> {
  const sink = await startSmtpSink()
  const operatorEmail = uniqueAddress('operator')
  const api = await testApi({ config: testConfig({ SMTP_URL: sink.url, ADMIN_EMAILS: `${operatorEmail.toUpperCase()}, ${uniqueAddress('other-operator')}`, ...env }) })
  const made = await insertAccount({ api }, operatorEmail)
  const adminKey = await call(api.app, 'POST', '/api/v1/account/keys', { token: made.key, body: { name: 'moderation', scopes: ['admin'] } })
  if (adminKey.status !== 201) throw new Error(`admin key: ${show(adminKey)}`)
  const kit: Kit = {
    api,
    sink,
    operator: { ...made, adminKey: adminKey.body.data.key },
    stranger: await insertAccount({ api }, uniqueAddress('stranger')),
    async signIn(person) {
      const browser = new Browser(api.app)
      await signInByMail(browser, sink, person.email)
      const csrf = inputValue((await browser.get('/signin/done')).text, 'csrf')
      if (!csrf) throw new Error('no CSRF token on /signin/done')
      return { browser, csrf }
    },
    account: (label = 'owner') => insertAccount({ api }, uniqueAddress(label)),
    close: () => sink.close(),
  }
  return kit
}

/** A JSON call with a browser's session cookie (and the headers given). */
export async function withSession(browser: Browser, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<CallResult> {
  const all: Record<string, string> = { [TEST_IP_HEADER]: browser.ip, cookie: browser.cookieHeader(), ...headers }
  if (body !== undefined) all['content-type'] = 'application/json'
  const response = await browser.app.handle(new Request(`http://localhost${path}`, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body) }))
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: response.status, headers: response.headers, text, body: parsed }
}

/** A link written straight to the table (a guest's when accountId is null), on the default domain. */
export async function insertLink(kit: Pick<Kit, 'api'>, accountId: string | null, url: string, extra: Partial<typeof links.$inferInsert> = {}) {
  const id = newId('link')
  const alias = `adm-${crypto.randomUUID().slice(0, 10)}`
  await kit.api.deps.db.insert(links).values({ id, domain: 'sho.rt', alias, url, accountId, ...extra })
  return { id, alias, domain: 'sho.rt', url }
}

export { call, show, uniqueIp }
