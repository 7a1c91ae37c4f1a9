// The management API under test: one database and one pair of adapters per test process (PGlite in
// memory and in-process adapters by default; real Postgres and Redis when DATABASE_URL / REDIS_URL are
// set, as in CI's second pass). Tests never truncate: each makes its own tokens, IPs and links.
import { DOCUMENT_ENV } from '../../scripts/generate-client'
import { openAdapters, type Adapters } from '../../src/adapters'
import { testClickHouse } from './clickhouse'
import { createApi, type ApiDeps } from '../../src/app'
import { parseConfig, type Config } from '../../core/config'
import { openDatabase, type Database } from '../../src/db/client'
import { randomBase64url } from '../../src/lib/secrets'
import { createAuditRecorder, type AuditRecorder } from '../../src/modules/audit/recorder'

/** The header tests use to choose their client IP (config.clientIpHeader). */
export const TEST_IP_HEADER = DOCUMENT_ENV.TRUSTED_IP_HEADER
export const TEST_INTERNAL_SECRET = DOCUMENT_ENV.INTERNAL_SECRET

/** The settings the API document is built with (its hosts are the ones the tests call), and `env`. */
export function testConfig(env: Record<string, string> = {}): Config {
  return parseConfig({ ...DOCUMENT_ENV, ...env })
}

let engines: Promise<{ database: Database; adapters: Adapters; audit: AuditRecorder }> | null = null

/**
 * Opened once per process (PGlite takes seconds to start) and left to the process exit; the audit
 * recorder ships to the process's chDB (its spool in a temporary directory).
 */
export function testEngines(): Promise<{ database: Database; adapters: Adapters; audit: AuditRecorder }> {
  engines ??= (async () => {
    const database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: ':memory:' })
    await database.migrate()
    const adapters = await openAdapters({ redisUrl: process.env.REDIS_URL })
    const audit = createAuditRecorder({ clickhouse: await testClickHouse(), config: testConfig({ DATA_DIR: ':memory:' }) })
    return { database, adapters, audit }
  })()
  return engines
}

export async function testApi(overrides: Partial<ApiDeps> = {}) {
  const { database, adapters, audit } = await testEngines()
  const deps: ApiDeps = {
    config: testConfig(),
    db: database.db,
    kv: adapters.kv,
    limiter: adapters.limiter,
    idempotency: adapters.idempotency,
    clickhouse: await testClickHouse(),
    audit,
    ...overrides,
  }
  // The recorder itself (flush, counters), unless the test replaced or removed it.
  return { app: createApi(deps), deps, database, adapters, audit: 'audit' in overrides ? undefined : audit }
}

export type TestApp = { handle(request: Request): Promise<Response> }

/** An IP no other test (or earlier run against the same Redis) has used. */
export function uniqueIp(): string {
  return `test-${crypto.randomUUID()}`
}

export interface CallOptions {
  token?: string
  /** Sent as JSON unless it is already a string (sent as is). */
  body?: unknown
  headers?: Record<string, string>
  ip?: string
}

export interface CallResult {
  status: number
  headers: Headers
  text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
}

export async function call(app: TestApp, method: string, path: string, opts: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { [TEST_IP_HEADER]: opts.ip ?? uniqueIp(), ...opts.headers }
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`
  let body: string | undefined
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body)
    headers['content-type'] ??= 'application/json'
  }
  const response = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }))
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    // not JSON: left undefined, the test looks at `text`
  }
  return { status: response.status, headers: response.headers, text, body: parsed }
}

/** A short description of a response for assertion messages. */
export function show(result: CallResult): string {
  return `${result.status} ${result.text.slice(0, 600)}`
}

export async function newGuestToken(app: TestApp): Promise<string> {
  const result = await call(app, 'POST', '/api/v1/guest/token')
  if (result.status !== 200) throw new Error(`guest token: ${show(result)}`)
  return result.body.data.guest_token as string
}

/** A random name for test data (`evt_…`, `order_…`) that no other test or earlier run has used. */
export function uniqueName(prefix: string, bytes = 16): string {
  return prefix + randomBase64url(bytes)
}
