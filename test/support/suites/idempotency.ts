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

/**
 * Where runs of /t/held wait until the test lets them go: `reached(n)` resolves once n runs have entered
 * the handler (so the key is claimed, or claimed again), and every run waits until `open()`.
 */
export interface HoldPoint {
  reached(runs: number): Promise<void>
  open(): void
}

function holdPoint(): HoldPoint & { enter(): Promise<void> } {
  let entered = 0
  const waiting: { runs: number; resolve: () => void }[] = []
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return {
    enter() {
      entered++
      for (const waiter of waiting) if (waiter.runs <= entered) waiter.resolve()
      return opened
    },
    reached: (runs) => new Promise<void>((resolve) => (entered >= runs ? resolve() : waiting.push({ runs, resolve }))),
    open: () => open(),
  }
}

/** Each route counts how often its handler really ran. */
export function countingApp(services: Services, options: IdempotencyOptions = {}) {
  const runs: Record<string, number> = {}
  const ran = (name: string) => (runs[name] = (runs[name] ?? 0) + 1)
  // One hold point per Idempotency-Key, made by holdFor() before the test's first request with that key.
  const holds = new Map<string, ReturnType<typeof holdPoint>>()
  const holdFor = (key: string): HoldPoint => {
    const hold = holdPoint()
    holds.set(key, hold)
    return hold
  }
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
    .delete(
      '/t/empty',
      ({ set }) => {
        ran('empty')
        set.status = 204
      },
      { guestOrAccount: true, idempotent: true },
    )
    .post(
      '/t/missing',
      () => {
        ran('missing')
        throw new ApiError('LINK_NOT_FOUND')
      },
      { guestOrAccount: true, idempotent: true },
    )
    .post(
      '/t/flaky',
      () => {
        if (ran('flaky') === 1) throw new Error('first run fails (test)')
        return { ok: true }
      },
      { guestOrAccount: true, idempotent: true },
    )
    .post(
      '/t/quota',
      () => {
        ran('quota')
        throw new ApiError('RATE_LIMITED', undefined, { retryAfter: 5 })
      },
      { guestOrAccount: true, idempotent: true },
    )
    .post(
      '/t/held',
      async ({ body, request }) => {
        const run = ran('held')
        const hold = holds.get(request.headers.get('idempotency-key') ?? '')
        if (!hold) throw new Error('/t/held needs holdFor(key) first (test)')
        await hold.enter()
        return { n: body.n, run }
      },
      { guestOrAccount: true, idempotent: true, body: t.Object({ n: t.Number() }) },
    )
    .post('/t/off', () => ({ run: ran('off') }), { idempotent: false, guestOrAccount: true })
    .post('/t/noauth', () => ({ run: ran('noauth') }), { idempotent: true })
  const app = new Elysia().use(errors).use(body).use(routes)
  return { app: app as TestApp, runs, holdFor }
}

export const post = (app: TestApp, path: string, token: string, key: string | undefined, body: unknown = { n: 1 }) =>
  call(app, 'POST', path, { token, body, headers: key === undefined ? {} : { 'idempotency-key': key } })

/** What both idempotency test files share: the counting app on the run's engines and a Pro key. */
export let services: Services
export let app: TestApp
export let runs: Record<string, number>
export let holdFor: (key: string) => HoldPoint
export let proKey: string

export async function setUp() {
  services = createServices((await testApi()).deps)
  ;({ app, runs, holdFor } = countingApp(services))
  // Pro: 120 requests a minute, room for the 50-request burst and its retries.
  proKey = await newApiKey(services, 'pro')
}
