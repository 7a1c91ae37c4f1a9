// Shared by the tests of the idempotent macro (src/plugins/idempotency*.test.ts): a tiny app of its own
// with the real auth plugin, real credentials in Postgres (or PGlite), the real idempotency store (Redis
// or in-process) and routes that count how often their handler ran, and a POST with an optional key.
import { Elysia, status, t } from 'elysia'
import { call, testApi, type TestApp } from '../api'
import { newAccount } from '../fixtures'
import type { Plan } from '../../../src/db/schema'
import { apiAuth } from '../../../src/app'
import { createServices, type Services } from '../../../src/services'
import { body } from '../../../src/plugins/body'
import { ApiError, errors } from '../../../src/plugins/errors'
import { idempotencyPlugin, type IdempotencyOptions } from '../../../src/plugins/idempotency'

export async function newApiKey(services: Services, plan: Plan): Promise<string> {
  return (await newAccount(services.db, plan)).key
}

/** Each route counts how often its handler really ran. */
export function countingApp(services: Services, options: IdempotencyOptions = {}) {
  const runs: Record<string, number> = {}
  const ran = (name: string) => (runs[name] = (runs[name] ?? 0) + 1)
  const routes = new Elysia({ name: 'test.idempotency' })
    .use(errors)
    .use(apiAuth(services).plugin)
    .use(idempotencyPlugin(services, options))
    .post(
      '/t/count',
      async ({ body }) => {
        const run = ran('count')
        await Bun.sleep(100) // long enough that concurrent retries meet the first one in flight
        return { success: true, data: { n: body.n, run, at: crypto.randomUUID() } }
      },
      { guestOrAccount: true, idempotent: true, body: t.Object({ n: t.Number() }) },
    )
    .post('/t/other', () => ({ run: ran('other') }), { guestOrAccount: true, idempotent: true, body: t.Object({ n: t.Number() }) })
    // idempotent listed before auth: the principal must still be there.
    .post('/t/created', () => status(201, { run: ran('created') }), { idempotent: true, account: true })
    .delete('/t/empty', ({ set }) => {
      ran('empty')
      set.status = 204
    }, { guestOrAccount: true, idempotent: true })
    .post('/t/missing', () => {
      ran('missing')
      throw new ApiError('LINK_NOT_FOUND')
    }, { guestOrAccount: true, idempotent: true })
    .post('/t/flaky', () => {
      if (ran('flaky') === 1) throw new Error('first run fails (test)')
      return { ok: true }
    }, { guestOrAccount: true, idempotent: true })
    .post('/t/quota', () => {
      ran('quota')
      throw new ApiError('RATE_LIMITED', undefined, { retryAfter: 5 })
    }, { guestOrAccount: true, idempotent: true })
    .post('/t/hang', async () => {
      ran('hang')
      await Bun.sleep(600)
      return { ok: true }
    }, { guestOrAccount: true, idempotent: true })
    .post('/t/off', () => ({ run: ran('off') }), { idempotent: false, guestOrAccount: true })
    .post('/t/noauth', () => ({ run: ran('noauth') }), { idempotent: true })
  const app = new Elysia().use(errors).use(body).use(routes)
  return { app: app as TestApp, runs }
}

export const post = (app: TestApp, path: string, token: string, key: string | undefined, body: unknown = { n: 1 }) =>
  call(app, 'POST', path, { token, body, headers: key === undefined ? {} : { 'idempotency-key': key } })

/** What both idempotency test files share: the counting app on the run's engines and a Pro key. */
export let services: Services
export let app: TestApp
export let runs: Record<string, number>
export let proKey: string

export async function setUp() {
  services = createServices((await testApi()).deps)
  ;({ app, runs } = countingApp(services))
  // Pro: 120 requests a minute, room for the 50-request burst and its retries.
  proKey = await newApiKey(services, 'pro')
}
