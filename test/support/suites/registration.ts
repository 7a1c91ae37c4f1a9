// Shared by the registration tests (src/modules/registration/*.test.ts): an API that mails
// through the SMTP sink (./smtp.ts), an outbox directory for development delivery, and the register and
// verify calls. Each test file calls setUp in beforeAll and tearDown in afterAll; the exported bindings
// are live, so they hold the running file's API.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryLimiter } from '../../../src/adapters/memory-limiter'
import { startSmtpSink, type SmtpSink } from '../smtp'
import { call, testApi, testConfig, type TestApp } from '../api'

export let sink: SmtpSink
export let api: Awaited<ReturnType<typeof testApi>>
export let app: TestApp
export let outboxDir: string

/** The same database and cache, a fresh limiter: a second "server" whose rate windows are empty. */
export async function freshLimiterApp(overrides: Parameters<typeof testApi>[0] = {}) {
  return (await testApi({ config: api.deps.config, limiter: new MemoryLimiter(), ...overrides })).app
}

export async function setUp() {
  outboxDir = mkdtempSync(join(tmpdir(), 'outbox-test-'))
  sink = await startSmtpSink()
  api = await testApi({ config: testConfig({ SMTP_URL: sink.url, MAIL_FROM: 'Links <no-reply@sho.rt>' }) })
  app = api.app
}

export async function tearDown() {
  await sink.close()
  rmSync(outboxDir, { recursive: true, force: true })
}

export async function register(token: string, email: string, target: TestApp = app) {
  return call(target, 'POST', '/api/v1/guest/register', { token, body: { email } })
}

export async function verify(token: string, email: string, code: string, target: TestApp = app) {
  return call(target, 'POST', '/api/v1/guest/verify', { token, body: { email, code } })
}
