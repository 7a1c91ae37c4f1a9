// A browser for the HTML pages, without the browser: one client IP and a cookie jar against an app
// (app.handle), forms posted form-encoded, redirects left for the test to read. And signing in the way a
// person does: the sign-in page, the e-mail, the code from the mail the SMTP sink received.
import { TEST_IP_HEADER, uniqueIp, type TestApp } from './api'
import type { ReceivedMail, SmtpSink } from './smtp'

export interface PageResult {
  status: number
  headers: Headers
  text: string
  /** Location of a redirect, or null. */
  location: string | null
  /** Every Set-Cookie of the answer. */
  setCookies: string[]
}

export function showPage(result: PageResult): string {
  return `${result.status} ${result.location ?? ''} ${result.text.replace(/\s+/g, ' ').slice(0, 600)}`
}

/** A hidden (or any) input's value in a page. */
export function inputValue(html: string, name: string): string | undefined {
  const match = new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(html)
  return match?.[1]?.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)))
}

export class Browser {
  readonly cookies = new Map<string, string>()

  constructor(
    readonly app: TestApp,
    readonly ip = uniqueIp(),
  ) {}

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  }

  /** Keeps what the answer set: a Max-Age=0 (or empty) cookie is deleted. */
  private remember(setCookies: string[]): void {
    for (const line of setCookies) {
      const [pair] = line.split(';')
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      if (value === '' || /;\s*Max-Age=0\b/i.test(line)) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  async request(method: string, path: string, form?: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<PageResult> {
    const all: Record<string, string> = { [TEST_IP_HEADER]: this.ip, ...headers }
    if (this.cookies.size > 0) all.cookie = this.cookieHeader()
    let body: string | undefined
    if (form) {
      const params = new URLSearchParams()
      for (const [key, value] of Object.entries(form)) for (const v of Array.isArray(value) ? value : [value]) params.append(key, v)
      body = params.toString()
      all['content-type'] = 'application/x-www-form-urlencoded'
    }
    const response = await this.app.handle(new Request(`http://localhost${path}`, { method, headers: all, body }))
    const setCookies = response.headers.getSetCookie()
    this.remember(setCookies)
    return { status: response.status, headers: response.headers, text: await response.text(), location: response.headers.get('location'), setCookies }
  }

  get(path: string) {
    return this.request('GET', path)
  }

  post(path: string, form: Record<string, string | string[]>) {
    return this.request('POST', path, form)
  }
}

/** The six-digit code of a sign-in mail. */
export function signInCodeFrom(mail: ReceivedMail | undefined): string {
  const match = mail && /sign-in code is:?\s*(\d{6})/i.exec(mail.raw)
  if (!match) throw new Error(`no sign-in code in mail: ${mail?.raw.slice(0, 400)}`)
  return match[1]!
}

/** Sign-in mails go out after the answer: waits (up to 10 s) until `count` mails reached the address. */
export async function waitForMail(sink: SmtpSink, address: string, count = 1): Promise<ReceivedMail> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const mails = sink.to(address)
    if (mails.length >= count) return mails[count - 1]!
    await Bun.sleep(20)
  }
  throw new Error(`no mail #${count} to ${address} within 10 s (${sink.to(address).length} received)`)
}

export interface CodeForm {
  page: PageResult
  attempt: string
  csrf: string
}

/** GET /signin and POST the address: the code form (the same whether or not the address has an account). */
export async function askForCode(browser: Browser, email: string, next?: string): Promise<CodeForm> {
  const signin = await browser.get(`/signin${next ? `?next=${encodeURIComponent(next)}` : ''}`)
  if (signin.status !== 200) throw new Error(`GET /signin: ${showPage(signin)}`)
  const csrf = inputValue(signin.text, 'csrf')!
  const page = await browser.post('/signin', { email, next: inputValue(signin.text, 'next') ?? '', csrf })
  if (page.status !== 200) throw new Error(`POST /signin: ${showPage(page)}`)
  return { page, attempt: inputValue(page.text, 'attempt')!, csrf: inputValue(page.text, 'csrf')! }
}

/** The whole sign-in by mailed code; returns the answer of POST /signin/code (303 to next). */
export async function signInByMail(browser: Browser, sink: SmtpSink, email: string, next?: string): Promise<PageResult> {
  const before = sink.to(email).length
  const form = await askForCode(browser, email, next)
  const code = signInCodeFrom(await waitForMail(sink, email, before + 1))
  const result = await browser.post('/signin/code', { attempt: form.attempt, code, next: inputValue(form.page.text, 'next') ?? '', csrf: form.csrf })
  if (result.status !== 303) throw new Error(`POST /signin/code: ${showPage(result)}`)
  return result
}
