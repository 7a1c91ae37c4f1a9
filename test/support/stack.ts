// The production shape for end-to-end tests: the API (src/api.ts) and the redirector (redirect/main.ts)
// as two processes, sharing links through a Redis of the test's own (so a test may stop it): one server,
// or with STACK_REDIS=cluster a three-node Redis Cluster (CI's services pass runs every stack so), with
// ClickHouse as chDB behind its HTTP stand-in (test/support/chdb-http.ts; so a test may stop and restart
// it). Postgres is the run's DATABASE_URL, or else PGlite under the API's DATA_DIR.
// Also the small HTTP, ClickHouse and polling helpers the end-to-end tests share.
import { createClient, type ClickHouseClient } from '@clickhouse/client'
import { expect } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnChdbHttp, type ChdbHttpProcess } from './chdb-http-process'
import { freePort, startEntry, startOwnRedis, TEST_SECRETS, type Child } from './processes'
import { startRedisCluster } from './redis-topologies'

/** The stack needs a redis-server binary (.ci/run installs it before both passes, and fails a pass that skips this). */
export const redisServerBinary = Bun.which('redis-server')

export type OwnRedis = NonNullable<Awaited<ReturnType<typeof startOwnRedis>>>

/** What the stacks' Redis is: STACK_REDIS=cluster (three nodes, test/support/redis-topologies.ts) or one server. */
export const stackRedis: 'server' | 'cluster' = process.env.STACK_REDIS === 'cluster' ? 'cluster' : 'server'
if (!['', 'server', 'cluster', undefined].includes(process.env.STACK_REDIS)) throw new Error(`STACK_REDIS must be server or cluster, not ${process.env.STACK_REDIS}`)

export interface StackOptions {
  /** Prefix of the temporary directory that holds Redis's, chDB's and the API's data. */
  prefix: string
  /**
   * Runs before any process starts, with the API's database: PGlite belongs to one process at a time,
   * so whatever a test writes straight to the database (an account, its API key, a link) goes here.
   */
  prepare?: (where: { dataDir: string; databaseUrl: string | undefined }) => Promise<void>
  /** Environment of both processes on top of the shared one (e.g. L1_TTL_MS, or CLICK_FLUSH_MS instead of 200). */
  env?: Record<string, string>
  /** Environment of the API only (e.g. DNS_SERVERS). */
  apiEnv?: Record<string, string>
  /** One Redis server or a three-node cluster; default stackRedis (STACK_REDIS). */
  redis?: 'server' | 'cluster'
}

export interface Stack {
  dir: string
  /** The API's DATA_DIR (PGlite when there is no DATABASE_URL). */
  dataDir: string
  /** The run's DATABASE_URL, which the API uses when it is set. */
  databaseUrl: string | undefined
  api: Child
  redirector: Child
  redis: OwnRedis
  /** The chDB stand-in running now (restartChdb() replaces it). */
  readonly chdb: ChdbHttpProcess
  /** A client of the stand-in; its URL survives restartChdb() (same port). */
  clickhouse: ClickHouseClient
  /** The environment both processes share (each adds its own port). */
  env: Record<string, string>
  /** Stops the stand-in if it is still running, and starts it again on the same port and data directory. */
  restartChdb(): Promise<ChdbHttpProcess>
  /** Stops everything, last started first; a step over 5 s is reported. */
  stop(): Promise<void>
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), options.prefix))
  const dataDir = join(dir, 'data')
  const chdbPath = join(dir, 'chdb')
  const databaseUrl = process.env.DATABASE_URL
  await options.prepare?.({ dataDir, databaseUrl })

  let redis: OwnRedis | undefined
  let chdb: ChdbHttpProcess | undefined
  let api: Child | undefined
  let redirector: Child | undefined
  let clickhouse: ClickHouseClient | undefined
  const stop = async () => {
    const timed = async (what: string, step: () => Promise<unknown>) => {
      const started = Date.now()
      await step()
      if (Date.now() - started > 5000) console.warn(`e2e teardown: ${what} took ${Date.now() - started} ms`)
    }
    await timed('clickhouse client', async () => clickhouse?.close())
    await timed('redirector', async () => redirector?.stop())
    await timed('api', async () => api?.stop())
    await timed('chdb', async () => chdb?.stop())
    await timed('redis', async () => redis?.stop())
  }

  try {
    redis = ((options.redis ?? stackRedis) === 'cluster' ? await startRedisCluster(join(dir, 'redis')) : await startOwnRedis(dir)) ?? undefined
    if (!redis) throw new Error('startStack needs a redis-server binary: skip the test without one (redisServerBinary)')
    chdb = await spawnChdbHttp({ path: chdbPath })
    const apiPort = await freePort()
    const redirectPort = await freePort()
    const env: Record<string, string> = {
      ...TEST_SECRETS,
      REDIS_URL: redis.url,
      CLICKHOUSE_URL: chdb.url,
      DATA_DIR: dataDir,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      SHORT_DOMAIN: `127.0.0.1:${redirectPort}`,
      CLICK_FLUSH_MS: '200',
      // One redirector process (what most tests look into: its spool, its counters); the workers' own
      // test sets REDIRECT_WORKERS.
      REDIRECT_WORKERS: '1',
      ...options.env,
    }
    api = await startEntry('src/api.ts', { ...env, PORT: String(apiPort), ...options.apiEnv }, apiPort)
    redirector = await startEntry('redirect/main.ts', { ...env, REDIRECT_PORT: String(redirectPort), API_INTERNAL_URL: api.url }, redirectPort)
    clickhouse = createClient({ url: chdb.url, request_timeout: 5000 })
    const current = chdb
    return {
      dir,
      dataDir,
      databaseUrl,
      api,
      redirector,
      redis,
      get chdb() {
        return chdb ?? current
      },
      clickhouse,
      env,
      async restartChdb() {
        const port = (chdb ?? current).port
        await chdb?.stop()
        chdb = undefined // not to be stopped twice should the start fail
        chdb = await spawnChdbHttp({ path: chdbPath, port })
        return chdb
      },
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}

/** The body of a response as JSON; when it is not JSON, an error that shows the status and the text. */
export async function json(response: Response) {
  return parseJson(await response.text(), response.status)
}

function parseJson(text: string, status: number) {
  try {
    return JSON.parse(text)
  } catch {
    throw new Error(`not JSON (${status}): ${text}`)
  }
}

/** A guest token, then POST /api/v1/shorten with it: the new link (both must succeed). */
export async function shorten(apiUrl: string, url: string) {
  const token = await json(await fetch(`${apiUrl}/api/v1/guest/token`, { method: 'POST' }))
  expect(token.data?.guest_token, JSON.stringify(token)).toStartWith('gt_')
  const created = await fetch(`${apiUrl}/api/v1/shorten`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token.data.guest_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  })
  const body = await json(created)
  expect(created.status, JSON.stringify(body)).toBe(200)
  return body.data as { alias: string; short_url: string; full_url: string }
}

/** One call to the API with an API key (`body` sent as JSON); the answer must be JSON. */
export async function apiCall(base: string, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, text, body: parseJson(text, response.status) }
}

/** Clicks stored for `alias` (on `domain` only, when given). */
export async function clicksOf(client: ClickHouseClient, alias: string, domain?: string): Promise<number> {
  const result = await client.query({
    query: `SELECT count() AS n FROM clicks_v1 WHERE ${domain === undefined ? '' : 'domain = {domain:String} AND '}alias = {alias:String}`,
    query_params: { alias, ...(domain !== undefined && { domain }) },
    format: 'JSONEachRow',
  })
  const [row] = await result.json<{ n: string | number }>()
  return Number(row?.n ?? 0)
}

/**
 * Runs `probe` every `everyMs` (50) until `done` holds for its value; returns that value and how long it
 * took (ms). Throws once `timeoutMs` have passed, with `what` and the last value.
 */
export async function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, options: { what?: string; everyMs?: number } = {}): Promise<{ value: T; ms: number }> {
  const started = performance.now()
  for (;;) {
    const value = await probe()
    if (done(value)) return { value, ms: performance.now() - started }
    if (performance.now() - started > timeoutMs) {
      throw new Error(`${options.what ?? 'condition'}: not within ${timeoutMs} ms (last: ${JSON.stringify(value)})`)
    }
    await Bun.sleep(options.everyMs ?? 50)
  }
}
