// Webhook receivers for tests: a Bun.serve on loopback that records every request and answers as the
// test says (a status, or a hold until the test releases it), and the API with the test-only setting
// that lets webhooks reach loopback over http (WEBHOOKS_ALLOW_PRIVATE_TARGETS). For the end-to-end tests
// (test/webhooks-*.e2e.test.ts) and bench/webhooks.ts: the product as a process with that setting and a
// short retry schedule, and the calls they make to it over HTTP.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import type { Config } from '../../core/config'
import { openDatabase, type Db } from '../../src/db/client'
import { createDispatcher, type DispatcherOptions } from '../../src/modules/webhooks/dispatcher'
import { call, show, testApi, testConfig, type TestApp } from './api'
import { newAccount, type TestAccount } from './fixtures'
import { freePort, startEntry, TEST_SECRETS, type Child } from './processes'

export interface Received {
  headers: Record<string, string>
  body: string
  /** performance.now() when the request arrived. */
  at: number
  /** The status it was answered, once answered. */
  status?: number
}

/** How the receiver answers the n-th request (0-based): a status, maybe after a wait the test controls. */
export type Answer = (request: Received, index: number) => number | Promise<number>

export interface Receiver {
  url: string
  received: Received[]
  /** Answer the next requests this way (default: 204). */
  answer(how: Answer): void
  stop(): void
}

/** A receiver on `port` (0: any free one). */
export function startReceiver(path = '/hook', port = 0): Receiver {
  const received: Received[] = []
  let how: Answer = () => 204
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port,
    async fetch(request) {
      const at = performance.now()
      const entry: Received = { headers: Object.fromEntries(request.headers), body: await request.text(), at }
      received.push(entry)
      entry.status = await how(entry, received.length - 1)
      return new Response('ok', { status: entry.status })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}${path}`,
    received,
    answer: (next) => {
      how = next
    },
    stop: () => void server.stop(true),
  }
}

/** A promise and the function that settles it: a held answer the test releases. */
export function gate(): { wait: Promise<void>; open: () => void } {
  let open = () => {}
  const wait = new Promise<void>((resolve) => {
    open = resolve
  })
  return { wait, open }
}

/** The body verified the way a receiver verifies it (the npm package standardwebhooks); throws if not. */
export function verified(secret: string, received: Received): { id: string; type: string; created_at: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(received.body, received.headers) as { id: string; type: string; created_at: string; data: Record<string, unknown> }
}

export function webhookConfig(env: Record<string, string> = {}): Config {
  return testConfig({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', ...env })
}

/** The API whose webhooks may point at loopback receivers. */
export function webhookApi(env: Record<string, string> = {}) {
  return testApi({ config: webhookConfig(env) })
}

export function testDispatcher(db: Db, config: Config, options: Partial<DispatcherOptions> = {}) {
  return createDispatcher({ db, config, ...options })
}

/** Creates a webhook with the key; answers its id and secret (or throws with the answer). */
export async function newWebhook(app: TestApp, token: string, url: string, events: string[] = ['*']): Promise<{ id: string; secret: string }> {
  const res = await call(app, 'POST', '/api/v1/webhooks', { token, body: { url, events } })
  if (res.status !== 201) throw new Error(`create webhook: ${show(res)}`)
  return { id: res.body.data.id, secret: res.body.data.secret }
}

// ---------------------------------------------------------------------------------------------------
// The product as processes, for test/webhooks-*.e2e.test.ts and bench/webhooks.ts.

/**
 * Retries after 1 s, 2 s, … 5 min instead of the default's seconds to a day: a test sees several
 * attempts within a minute, and a delivery still pending after any outage a test makes.
 */
export const QUICK_RETRY_SCHEDULE = '1,2,5,10,20,30,60,120,300'

export interface ProductOptions {
  /** Prefix of the temporary directory holding each process's DATA_DIR (and PGlite's data). */
  prefix: string
  /** Pro accounts with an API key each, written before any process starts (PGlite is one process's). */
  accounts?: number
  /** API processes on one database: more than one needs DATABASE_URL. */
  processes?: number
  /** Environment on top of the product's (e.g. WEBHOOK_RETRY_SCHEDULE). */
  env?: Record<string, string>
}

export interface Product {
  /** src/api.ts on the run's DATABASE_URL, else the embedded default one-process/main.ts on PGlite. */
  entry: string
  accounts: TestAccount[]
  processes: Child[]
  /** The environment of process `index`. */
  envOf(index: number): Record<string, string>
  /** Starts process `index` again (after the test killed it) on the same port, database and DATA_DIR. */
  restart(index: number): Promise<Child>
  /** Stops every process still running (SIGTERM). */
  stop(): Promise<void>
}

/**
 * The product on the run's database, as the embedded pass and the services pass give it: src/api.ts on
 * DATABASE_URL when set (ClickHouse as chDB under each process's DATA_DIR), else the embedded default on
 * PGlite. Webhooks may reach loopback over http; retries follow QUICK_RETRY_SCHEDULE unless env says.
 */
export async function startProduct(options: ProductOptions): Promise<Product> {
  const databaseUrl = process.env.DATABASE_URL
  const count = options.processes ?? 1
  if (count > 1 && !databaseUrl) throw new Error('several API processes share a database: they need DATABASE_URL')
  const dir = mkdtempSync(join(tmpdir(), options.prefix))
  const database = await openDatabase({ databaseUrl, dataDir: join(dir, 'data-0') })
  await database.migrate()
  const accounts: TestAccount[] = []
  for (let i = 0; i < (options.accounts ?? 1); i++) accounts.push(await newAccount(database.db, 'pro'))
  await database.close()

  const entry = databaseUrl ? 'src/api.ts' : 'one-process/main.ts'
  // A dispatcher claims only the endpoints sealed under its own INTERNAL_SECRET: with one of their own,
  // these processes send this product's events alone, never those of another test's processes sharing the
  // database (which may refuse loopback targets or retry on another schedule), and leave theirs alone.
  const internalSecret = `e2e-webhooks-${crypto.randomUUID()}`
  const envs: Record<string, string>[] = []
  for (let i = 0; i < count; i++) {
    const port = await freePort()
    envs.push({
      ...TEST_SECRETS,
      INTERNAL_SECRET: internalSecret,
      // The tests read the deliveries through the API as often as they like.
      PLAN_PRO_REQUESTS_PER_MINUTE: '1000000',
      PORT: String(port),
      DATA_DIR: join(dir, `data-${i}`),
      ...(databaseUrl && { DATABASE_URL: databaseUrl }),
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: QUICK_RETRY_SCHEDULE,
      ...options.env,
    })
  }
  const processes: Child[] = []
  const start = async (index: number) => {
    const child = await startEntry(entry, envs[index]!, Number(envs[index]!.PORT))
    processes[index] = child
    return child
  }
  try {
    // One after the other: each migrates at start, and the next then finds nothing to do.
    for (let i = 0; i < count; i++) await start(i)
  } catch (error) {
    await Promise.all(processes.map((child) => child.stop()))
    throw error
  }
  return {
    entry,
    accounts,
    processes,
    envOf: (index) => envs[index]!,
    restart: start,
    stop: async () => void (await Promise.all(processes.map((child) => child.stop()))),
  }
}

/** One call with an API key over HTTP (`body` as JSON); the answer's status and JSON body. */
export async function callOver(baseUrl: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  let parsed: any = null
  try {
    parsed = JSON.parse(text)
  } catch {
    // shown through `text`
  }
  return { status: response.status, body: parsed, text: `${method} ${path} → ${response.status} ${text.slice(0, 500)}` }
}

/** An endpoint of the account for every event, created through the API; its id and secret. */
export async function endpointOver(baseUrl: string, key: string, url: string): Promise<{ id: string; secret: string }> {
  const res = await callOver(baseUrl, key, 'POST', '/api/v1/webhooks', { url, events: ['*'] })
  if (res.status !== 201) throw new Error(`create webhook: ${res.text}`)
  return { id: res.body.data.id, secret: res.body.data.secret }
}

/** Links created through POST /api/v1/links/bulk, 100 a request (each a link.created event): their aliases. */
export async function bulkLinks(baseUrl: string, key: string, count: number, tag: string): Promise<string[]> {
  const aliases: string[] = []
  for (let start = 0; start < count; start += 100) {
    const links = Array.from({ length: Math.min(100, count - start) }, (_, i) => ({ url: `https://example.com/${tag}/${start + i}` }))
    const res = await callOver(baseUrl, key, 'POST', '/api/v1/links/bulk', { links })
    const summary = res.body?.data?.summary
    if (res.status !== 200 || summary?.failed !== 0) throw new Error(`bulk: ${res.text}`)
    for (const item of res.body.data.results) aliases.push(item.data.alias)
  }
  return aliases
}

/** Every delivery of the endpoint, newest first, read page by page through the API. */
export async function deliveriesOver(baseUrl: string, key: string, webhookId: string): Promise<Array<Record<string, any>>> {
  const out: Array<Record<string, any>> = []
  let cursor: string | null = null
  do {
    const query: string = `?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
    const res = await callOver(baseUrl, key, 'GET', `/api/v1/webhooks/${webhookId}/deliveries${query}`)
    if (res.status !== 200) throw new Error(`deliveries: ${res.text}`)
    out.push(...res.body.data.deliveries)
    cursor = res.body.data.next_cursor
  } while (cursor)
  return out
}

/** A request a receiver got, verified with the endpoint's secret. */
export interface Arrival {
  id: string
  alias: string | undefined
  at: number
  status: number | undefined
  /** The verification's error, when the request did not verify. */
  invalid?: string
}

/** The receiver's requests verified as a receiver does (standardwebhooks), in the order they came. */
export function arrivals(receiver: Receiver, secret: string): Arrival[] {
  return receiver.received.map((request) => {
    try {
      const event = verified(secret, request)
      return { id: event.id, alias: event.data.alias as string | undefined, at: request.at, status: request.status }
    } catch (error) {
      return { id: request.headers['webhook-id'] ?? '?', alias: undefined, at: request.at, status: request.status, invalid: (error as Error).message }
    }
  })
}
