// The request log through the real app: one JSON line per API request with its fields, errors included;
// X-Request-Id taken from the client when sane and returned on every answer; and an attack: requests
// carrying every kind of secret we handle (tokens, keys, cookies, passwords, codes, addresses, client
// IPs), succeeding and failing, leave none of it in any line. The lines are read through logTo, the
// logger's own destination, at trace level so that every line the process writes is examined.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Elysia } from 'elysia'
import { log, logTo, setLogLevel, type LogLevel } from '../lib/log'
import { errors } from './errors'
import { requestLog } from './request-log'
import { call, newGuestToken, show, TEST_INTERNAL_SECRET, testApi, testConfig, type CallResult, type TestApp } from '../../test/support/api'
import { agentToken, newAccount } from '../../test/support/fixtures'
import { startSmtpSink, type SmtpSink } from '../../test/support/smtp'
import { askForCode, Browser, inputValue, signInByMail } from '../../test/support/signin'
import { until } from '../../test/support/wait'

type Line = Record<string, unknown>
const written: string[] = []
const lines = (): Line[] => written.map((text) => JSON.parse(text) as Line)
const requestLines = (id: string | null) => lines().filter((line) => line.msg === 'request' && line.request_id === id)
const shown = () => written.join('').slice(-4000)

let sink: SmtpSink
let api: Awaited<ReturnType<typeof testApi>>
let before: { destination: ReturnType<typeof logTo>; level: string }
const dir = mkdtempSync(join(tmpdir(), 'request-log-'))

beforeAll(async () => {
  before = { destination: logTo({ write: (line: string) => void written.push(line) }), level: log.level }
  setLogLevel('trace')
  sink = await startSmtpSink()
  api = await testApi({ config: testConfig({ SMTP_URL: sink.url }) })
})

afterAll(async () => {
  logTo(before.destination)
  setLogLevel(before.level as LogLevel)
  await sink.close()
  rmSync(dir, { recursive: true, force: true })
})

const MARKER = 'marker-'

/**
 * The log runs after each answer is out, in the order the answers went out: once a request sent through
 * `app` after the others has its line, every line of the requests before it is written.
 */
async function allLogged(app: TestApp): Promise<void> {
  const id = `${MARKER}${crypto.randomUUID()}`
  await call(app, 'GET', '/request-log-marker', { headers: { 'x-request-id': id } })
  await until(
    () => requestLines(id).length > 0,
    () => `no line for the marker request ${id}\n${shown()}`,
  )
}

/** The one line of the answer's request (`app` is the app that answered it). */
async function lineOf(result: CallResult, app: TestApp = api.app): Promise<Line> {
  const id = result.headers.get('x-request-id')
  expect(id, show(result)).toBeTruthy()
  await allLogged(app)
  const found = requestLines(id)
  expect(found.length, `one line for ${id}: ${show(result)}\n${JSON.stringify(found)}`).toBe(1)
  return found[0]!
}

describe('one line per API request', () => {
  test('method, path without the query, route pattern, status, duration, request id, caller kind', async () => {
    const guest = await newGuestToken(api.app)
    const shortened = await call(api.app, 'POST', '/api/v1/shorten', { token: guest, body: { url: 'https://example.com/logged' } })
    expect(shortened.status, show(shortened)).toBe(200)
    const line = await lineOf(shortened)
    expect(line).toMatchObject({ level: 'info', msg: 'request', method: 'POST', path: '/api/v1/shorten', route: '/api/v1/shorten', status: 200, principal: 'guest' })
    expect(line.duration_ms).toBeNumber()
    expect(typeof line.time).toBe('string')

    const account = await newAccount(api.deps.db)
    const alias = shortened.body.data.alias as string
    const read = await call(api.app, 'GET', `/api/v1/links?limit=5&token=q-secret-${alias}`, { token: account.key })
    expect(await lineOf(read)).toMatchObject({ path: '/api/v1/links', route: '/api/v1/links', status: 200, principal: 'key' })
  })

  test('an answer that is an error is logged once with its status: 400, 401, 404, 405, 429', async () => {
    const account = await newAccount(api.deps.db)
    const cases: [CallResult, number, string | undefined][] = [
      [await call(api.app, 'POST', '/api/v1/shorten', { token: account.key, body: { url: 5 } }), 400, '/api/v1/shorten'],
      [await call(api.app, 'GET', '/api/v1/links', { token: `mk_${'x'.repeat(32)}` }), 401, '/api/v1/links'],
      [await call(api.app, 'GET', '/api/v1/no-such-thing'), 404, undefined],
      [await call(api.app, 'PUT', '/api/v1/shorten', { token: account.key }), 405, undefined],
    ]
    for (const [result, status, route] of cases) {
      expect(result.status, show(result)).toBe(status)
      const line = await lineOf(result)
      expect(line, show(result)).toMatchObject({ status, level: 'info' })
      expect(line.route, show(result)).toBe(route)
    }
    let limited: CallResult | undefined
    for (let i = 0; i < 200 && !limited; i++) {
      const result = await call(api.app, 'GET', '/api/v1/account/status', { token: account.key })
      if (result.status === 429) limited = result
    }
    expect(limited, 'a Free key meets its requests-a-minute').toBeDefined()
    expect(await lineOf(limited!)).toMatchObject({ status: 429, route: '/api/v1/account/status' })
  })

  test('a 500 is one request line at error level, and its error line names the same request id', async () => {
    const app = new Elysia()
      .use(requestLog())
      .use(errors)
      .get('/crash', () => {
        throw new Error('boom')
      })
    const result = await call(app, 'GET', '/crash')
    expect(result.status, show(result)).toBe(500)
    expect(await lineOf(result, app)).toMatchObject({ level: 'error', status: 500, route: '/crash' })
    const id = result.headers.get('x-request-id')
    expect(lines().filter((line) => line.msg === 'INTERNAL_ERROR GET /crash' && line.request_id === id).length, shown()).toBe(1)
  })

  test("probes and the redirector's /internal lookups are logged at debug, not info", async () => {
    const health = await call(api.app, 'GET', '/health')
    expect((await lineOf(health)).level).toBe('debug')
    const resolve = await call(api.app, 'GET', '/internal/resolve?domain=sho.rt&alias=nope', { headers: { 'x-internal-secret': TEST_INTERNAL_SECRET } })
    expect(await lineOf(resolve)).toMatchObject({ level: 'debug', path: '/internal/resolve', status: 404 })
  })
})

describe('X-Request-Id', () => {
  test("the client's own when sane (printable ASCII, at most 128 characters), echoed on answers and errors", async () => {
    for (const [path, given] of [
      ['/api/v1/guest/token', 'trace-42.abc'],
      ['/api/v1/nope', 'a b:c/d=e'],
      ['/api/v1/guest/token', 'x'.repeat(128)],
    ] as const) {
      const result = await call(api.app, path.endsWith('token') ? 'POST' : 'GET', path, { headers: { 'x-request-id': given } })
      expect(result.headers.get('x-request-id'), show(result)).toBe(given)
      expect((await lineOf(result)).request_id).toBe(given)
    }
  })

  test('a bad one is replaced, a missing one generated: a fresh id each time', async () => {
    const ids = new Set<string>()
    for (const given of ['x'.repeat(129), 'caf\u00e9', 'tab\there', undefined]) {
      const result = await call(api.app, 'POST', '/api/v1/guest/token', { headers: given === undefined ? {} : { 'x-request-id': given } })
      const id = result.headers.get('x-request-id')!
      expect(id, show(result)).toMatch(/^[0-9a-f-]{36}$/)
      expect((await lineOf(result)).request_id).toBe(id)
      ids.add(id)
    }
    expect(ids.size).toBe(4)
  })
})

describe('security: no secret and no client IP in any line', () => {
  test('tokens, keys, cookies, passwords, codes, addresses, query secrets and IPs, on answers and refusals', async () => {
    const ip = '198.51.100.231'
    const as = (opts: Parameters<typeof call>[3] = {}) => ({ ...opts, ip })
    const human = await newAccount(api.deps.db)
    const email = `${human.id.toLowerCase()}@example.test`
    const guest = await newGuestToken(api.app)
    const agent = await agentToken(api.app, human, ['links:read', 'links:write'])
    const password = `pw-${crypto.randomUUID()}`
    const querySecret = `qs-${crypto.randomUUID()}`
    const wrongKey = `mk_${crypto.randomUUID().replaceAll('-', '')}`
    const results: CallResult[] = [
      await call(api.app, 'POST', '/api/v1/shorten', as({ token: guest, body: { url: 'https://example.com/g' } })),
      await call(api.app, 'POST', '/api/v1/shorten', as({ token: human.key, body: { url: 'https://example.com/p', password } })),
      await call(api.app, 'GET', '/api/v1/links', as({ token: agent.token })),
      await call(api.app, 'GET', `/api/v1/links?token=${querySecret}&access_token=${querySecret}&code=${querySecret}`, as({ token: human.key })),
      await call(api.app, 'GET', '/api/v1/links', as({ token: wrongKey })), // 401
      await call(api.app, 'POST', '/api/v1/shorten', as({ token: human.key, body: { url: 'not a url', password } })), // 400
      await call(api.app, 'POST', '/api/v1/shorten', as({ token: agent.token, body: `{"password":"${password}"` })), // 400, malformed
      await call(api.app, 'POST', '/internal/unlock', as({ headers: { 'x-internal-secret': TEST_INTERNAL_SECRET }, body: { link_id: 'link_x', password, ip } })),
    ]
    const link = results[1]!.body?.data
    expect(
      results.map((r) => r.status),
      results.map(show).join('\n'),
    ).toEqual([200, 200, 200, 200, 401, 400, 400, 404])
    expect(link?.alias, show(results[1]!)).toBeString()

    // A person signs in with a mailed code; the session cookie then calls the API and a page.
    const browser = new Browser(api.app, ip)
    await signInByMail(browser, sink, email)
    const code = /sign-in code is:?\s*(\d{6})/i.exec(sink.to(email).at(-1)!.raw)![1]!
    const session = browser.cookies.get([...browser.cookies.keys()].find((name) => name.endsWith('ls_session'))!)!
    expect((await browser.get('/api/v1/links')).status).toBe(200)
    expect((await browser.get('/signin/done')).status).toBe(200)
    const wrongCode = await browser.post('/signin/code', { attempt: 'sia_nope', code: '000000', csrf: 'x' })
    expect(wrongCode.status).toBeGreaterThanOrEqual(400)

    for (const result of results) await lineOf(result)
    await allLogged(api.app) // the browser's requests too
    const kinds = new Set(
      lines()
        .filter((line) => !String(line.request_id).startsWith(MARKER))
        .map((line) => line.principal),
    )
    for (const kind of ['guest', 'key', 'agent', 'session', 'none']) expect(kinds.has(kind), `a ${kind} line: ${shown()}`).toBe(true)
    const secrets = { guest, key: human.key, wrongKey, agent: agent.token, session, password, querySecret, code, email, ip, internalSecret: TEST_INTERNAL_SECRET }
    const leaks = Object.entries(secrets).flatMap(([what, secret]) => written.filter((line) => line.includes(secret)).map((line) => `${what}: ${line}`))
    expect(leaks).toEqual([])
  })

  test('the one documented exception: with no SMTP_URL the development outbox line carries the code, marked, and no other line does', async () => {
    const dev = await testApi({ config: testConfig({ MAIL_OUTBOX: join(dir, 'outbox.log') }) })
    const human = await newAccount(dev.deps.db)
    const email = `${human.id.toLowerCase()}@example.test`
    const browser = new Browser(dev.app)
    const form = await askForCode(browser, email)
    let outbox: Line | undefined
    await until(() => (outbox = lines().find((line) => line.development_outbox === true && String(line.msg).includes(email))) !== undefined, 'the outbox line')
    const code = /sign-in code is:?\s*(\d{6})/i.exec(String(outbox!.msg))![1]!
    const signedIn = await browser.post('/signin/code', { attempt: form.attempt, code, next: inputValue(form.page.text, 'next') ?? '', csrf: form.csrf })
    expect(signedIn.status, signedIn.text.slice(0, 300)).toBe(303)
    await allLogged(dev.app)
    const carrying = lines().filter((line) => JSON.stringify(line).includes(code) || JSON.stringify(line).includes(email))
    expect(carrying.length, shown()).toBeGreaterThan(0)
    for (const line of carrying) expect(line, 'only the development outbox line names the code or the address').toMatchObject({ development_outbox: true, level: 'warn' })
  })
})
