// OAuth across real server processes on real Postgres and Redis (DESIGN "Machine access": tokens are
// opaque and stored hashed "so revocation and kill take effect at once in every process"; "a revoked
// token is refused within 1 s"). Two API processes (src/api.ts) share the database and Redis and have
// the same PUBLIC_API_URL, so a token of one is good at the other:
// - the flow runs on A, the token works on B (which caches its verdict for 10 s), A revokes it, and B
//   refuses it long before that cache expires: only the pub/sub message can do that (how long it took is
//   printed; the test waits up to half the cache's lifetime, REVOCATION_DEADLINE_MS);
// - the same for a refresh token reused on A (the family revoked), and for a code replayed on B, seen
//   by A;
// - every negative case of test/oauth/{authorize,tokens}.cases.ts runs against process A, with
//   a third process of another issuer (https://other.sho.rt) for the audience case;
// - an Agent killed on A is refused by B the same way while it calls B in a loop; scopes narrowed on A
//   bind its token on B the same way; 20 approvals of one held call split over A and B run it once;
// - no token is printed by the servers.
// Skipped without DATABASE_URL and REDIS_URL: the default pass has neither (PGlite and in-process
// adapters belong to one process). CI's services pass sets both and runs it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as oauth from 'oauth4webapi'
import { openDatabase, type Database } from '../../src/db/client'
import { TEST_IP_HEADER } from '../support/api'
import { spawnChdbHttp, type ChdbHttpProcess } from '../support/chdb-http-process'
import { newAccount } from '../support/fixtures'
import {
  approved,
  asHuman,
  connect,
  discoverAndRegister,
  exchange,
  ISSUER,
  oauthFailure,
  refresh,
  REVOCATION_DEADLINE_MS,
  revoke,
  serverFetch,
  shown,
  untilRefused,
  withToken,
  type Flow,
} from '../support/oauth'
import { freePort, startEntry, TEST_SECRETS, type Child } from '../support/processes'
import { until } from '../support/wait'
import { authorizeCases } from './authorize.cases'
import { expectInvalidToken, OTHER_ISSUER, type OAuthCaseContext } from './context'
import { tokenCases } from './tokens.cases'

const shared = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL)
if (!shared) console.info('test/oauth/two-process.test.ts skipped: it needs DATABASE_URL and REDIS_URL (the services pass) for two processes to share')

/** How often B is asked while the revocation travels (the brief's ~50 ms). */
const POLL_MS = 50

describe.skipIf(!shared)('OAuth across two API processes (DATABASE_URL + REDIS_URL)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'oauth-two-process-'))
  let chdb: ChdbHttpProcess | undefined
  const servers: Child[] = []
  let a: Child
  let b: Child
  let other: Child
  let database: Database
  let ctx: OAuthCaseContext

  beforeAll(async () => {
    // Every API reaches one ClickHouse over HTTP, as in production (chDB binds a directory per process).
    chdb = await spawnChdbHttp({ path: join(dir, 'chdb') })
    const env = {
      ...TEST_SECRETS,
      DATABASE_URL: process.env.DATABASE_URL!,
      REDIS_URL: process.env.REDIS_URL!,
      CLICKHOUSE_URL: chdb.url,
      PUBLIC_API_URL: ISSUER,
      SHORT_DOMAIN: 'sho.rt',
      // Each test client its own address: registration is limited per IP (20 an hour).
      TRUSTED_IP_HEADER: TEST_IP_HEADER,
    }
    const start = async (extra: Record<string, string> = {}) => {
      const port = await freePort()
      // Each its own DATA_DIR: the click and audit spools are per process.
      const child = await startEntry('src/api.ts', { ...env, PORT: String(port), DATA_DIR: join(dir, `data-${servers.length}-${port}`), ...extra }, port)
      servers.push(child)
      return child
    }
    a = await start() // first and alone: it migrates
    ;[b, other] = await Promise.all([start(), start({ PUBLIC_API_URL: OTHER_ISSUER })])
    database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: dir })
    ctx = { fetch: () => serverFetch(a.url), db: database.db, otherResource: () => serverFetch(other.url, OTHER_ISSUER) }
  }, 90_000)

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
    await chdb?.stop()
    await database?.close()
  }, 60_000)

  /** The same client talking to process B. */
  const onB = (flow: Flow): Flow => {
    const fetch = serverFetch(b.url)
    return { ...flow, fetch, options: { ...flow.options, [oauth.customFetch]: fetch } }
  }
  const logs = () => servers.map((s) => s.output()).join('\n')

  /** The process of `flow` accepts the token now (and so holds its verdict), twice to be sure. */
  async function acceptedBy(flow: Flow, token: string) {
    for (let i = 0; i < 2; i++) {
      const res = await withToken(flow, token, 'GET', '/api/v1/links')
      expect(res.status, `${shown(res)}\n${logs()}`).toBe(200)
    }
  }

  /** Polls the process of `flow` (not the one that revoked) until it refuses `token`, before its cached verdict expires. */
  async function refusedByTheOther(flow: Flow, token: string, what: string, who = 'the second process') {
    const { answer, ms } = await untilRefused(flow, token, { everyMs: POLL_MS, withinMs: REVOCATION_DEADLINE_MS })
    console.info(`${what} seen by ${who} after ${Math.round(ms)} ms`)
    expectInvalidToken(answer)
  }

  test('a token revoked on A is refused by B, though B had cached it', async () => {
    const flowA = await discoverAndRegister(serverFetch(a.url))
    const flowB = onB(flowA)
    const human = await newAccount(database.db, 'pro')
    const tokens = await connect(flowA, human.key, 'links:read links:write')
    const created = await withToken(flowB, tokens.access_token, 'POST', '/api/v1/shorten', { url: 'https://example.com/two-process' })
    expect(created.status, shown(created)).toBe(200)
    await acceptedBy(flowB, tokens.access_token)
    await revoke(flowA, tokens.access_token)
    await refusedByTheOther(flowB, tokens.access_token, 'revocation')
    expectInvalidToken(await withToken(flowA, tokens.access_token, 'GET', '/api/v1/links'))
  })

  test('a refresh token reused on A revokes its family: B refuses the newest access token', async () => {
    const flowA = await discoverAndRegister(serverFetch(a.url))
    const flowB = onB(flowA)
    const human = await newAccount(database.db, 'pro')
    const first = await connect(flowA, human.key, 'links:read')
    const second = await refresh(flowA, first.refresh_token!)
    await acceptedBy(flowB, second.access_token)
    expect(await oauthFailure(refresh(flowA, first.refresh_token!))).toMatchObject({ status: 400, error: 'invalid_grant' })
    await refusedByTheOther(flowB, second.access_token, 'refresh-token reuse (family revocation)')
    // The newest refresh token died with it, on either process.
    expect(await oauthFailure(refresh(flowB, second.refresh_token!))).toMatchObject({ status: 400, error: 'invalid_grant' })
  })

  test('a code exchanged on A and replayed on B: invalid_grant, and A refuses what the first exchange issued', async () => {
    const flowA = await discoverAndRegister(serverFetch(a.url))
    const flowB = onB(flowA)
    const human = await newAccount(database.db, 'pro')
    const { started, redirect } = await approved(flowA, human.key, 'links:read')
    const tokens = await exchange(flowA, started, redirect)
    await acceptedBy(flowA, tokens.access_token)
    expect(await oauthFailure(exchange(flowB, started, redirect))).toMatchObject({ status: 400, error: 'invalid_grant' })
    await refusedByTheOther(flowA, tokens.access_token, 'code replay on B (family revocation)', 'the first process (A)')
  })

  describe('authorization and consent, refused (process A)', () => authorizeCases(() => ctx))
  describe('tokens and the resource server, refused (process A)', () => tokenCases(() => ctx))

  /** An Agent made on A by the human, and a token of it minted on A. */
  async function agentOnA(flowA: Flow, key: string, scopes: string[]) {
    const agent = await asHuman(flowA, key, 'POST', '/api/v1/agents', { name: 'two-process', scopes })
    expect(agent.status, shown(agent)).toBe(201)
    const minted = await asHuman(flowA, key, 'POST', `/api/v1/agents/${agent.body.data.id}/tokens`, {})
    expect(minted.status, shown(minted)).toBe(201)
    return { agentId: agent.body.data.id as string, token: minted.body.data.token as string }
  }

  test('kill under load: an Agent calling B in a loop is refused after the kill on A, and never served after', async () => {
    const flowA = await discoverAndRegister(serverFetch(a.url))
    const flowB = onB(flowA)
    const human = await newAccount(database.db, 'pro')
    const { agentId, token } = await agentOnA(flowA, human.key, ['links:read'])
    const answers: { at: number; status: number }[] = []
    let running = true
    const loop = (async () => {
      while (running) {
        const res = await withToken(flowB, token, 'GET', '/api/v1/links')
        answers.push({ at: performance.now(), status: res.status })
        await Bun.sleep(20)
      }
    })()
    await until(
      () => answers.length >= 4,
      () => `four answers from B before the kill: ${JSON.stringify(answers)}`,
    )
    const killed = await asHuman(flowA, human.key, 'POST', `/api/v1/agents/${agentId}/kill`)
    expect(killed.body.data?.status, shown(killed)).toBe('killed')
    const killedAt = performance.now()
    const refused = () => answers.some((x) => x.at >= killedAt && x.status === 401)
    while (!refused() && performance.now() - killedAt < REVOCATION_DEADLINE_MS) await Bun.sleep(POLL_MS)
    // Once refused, a dozen answers more, none of which may be served (never refused: the expect below says so).
    const afterFirstRefusal = () => answers.length - answers.findIndex((x) => x.at >= killedAt && x.status === 401) - 1
    if (refused())
      await until(
        () => afterFirstRefusal() >= 12,
        () => `a dozen answers after the first refusal: ${JSON.stringify(answers.slice(-5))}`,
      )
    running = false
    await loop
    const before = answers.filter((x) => x.at < killedAt)
    expect(before.length).toBeGreaterThan(3)
    expect(
      before.every((x) => x.status === 200),
      JSON.stringify(before),
    ).toBe(true)
    const firstRefusal = answers.find((x) => x.at >= killedAt && x.status === 401)
    expect(firstRefusal, JSON.stringify(answers.slice(-10))).toBeDefined()
    const ms = firstRefusal!.at - killedAt
    console.info(`kill seen by the second process (an Agent calling it in a loop) after ${Math.round(ms)} ms`)
    const servedAfter = answers.filter((x) => x.at > firstRefusal!.at && x.status !== 401)
    expect(servedAfter, 'answers other than 401 after the first refusal').toEqual([])
  })

  test('scopes narrowed on A bind the token on B, though B had cached its verdict', async () => {
    const flowA = await discoverAndRegister(serverFetch(a.url))
    const flowB = onB(flowA)
    const human = await newAccount(database.db, 'pro')
    const { agentId, token } = await agentOnA(flowA, human.key, ['links:read', 'tags:read'])
    for (let i = 0; i < 2; i++) expect((await withToken(flowB, token, 'GET', '/api/v1/tags')).status).toBe(200)
    const patched = await asHuman(flowA, human.key, 'PATCH', `/api/v1/agents/${agentId}`, { scopes: ['links:read'] })
    expect(patched.status, shown(patched)).toBe(200)
    const started = performance.now()
    let answer = await withToken(flowB, token, 'GET', '/api/v1/tags')
    while (answer.status === 200 && performance.now() - started < REVOCATION_DEADLINE_MS) {
      await Bun.sleep(POLL_MS)
      answer = await withToken(flowB, token, 'GET', '/api/v1/tags')
    }
    const ms = performance.now() - started
    console.info(`scope narrowing seen by the second process after ${Math.round(ms)} ms`)
    expect(answer.status, shown(answer)).toBe(403)
    expect(answer.body.error).toBe('INSUFFICIENT_SCOPE')
    expect((await withToken(flowB, token, 'GET', '/api/v1/links')).status).toBe(200)
  })

  test('20 concurrent approvals of one held call, 10 on each process, run it exactly once', async () => {
    const flowA = await discoverAndRegister(serverFetch(a.url))
    const flowB = onB(flowA)
    const human = await newAccount(database.db, 'pro')
    const { token } = await agentOnA(flowA, human.key, ['links:write', 'links:delete'])
    const created = await withToken(flowA, token, 'POST', '/api/v1/shorten', { url: 'https://example.com/approved-once' })
    const alias = created.body.data.alias as string
    const held = await withToken(flowA, token, 'DELETE', `/api/v1/links/${alias}`)
    expect(held.status, shown(held)).toBe(202)
    const id = held.body.data.approval.id as string
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => asHuman(i % 2 === 0 ? flowA : flowB, human.key, 'POST', `/api/v1/agent/approvals/${id}/approve`)))
    const statuses = answers.map((x) => x.status)
    expect(statuses.filter((x) => x === 200).length, JSON.stringify(statuses)).toBe(1)
    expect(statuses.filter((x) => x === 409).length, JSON.stringify(statuses)).toBe(19)
    expect(answers.find((x) => x.status === 200)!.body.data.result.status).toBe(200)
    expect((await asHuman(flowB, human.key, 'GET', `/api/v1/links/${alias}`)).status).toBe(404)
  })

  test('no token is printed by the servers', () => {
    const printed = logs().match(/\b(at|rt)_[A-Za-z0-9_-]{20,}/)
    expect(printed?.[0] ?? null, "a token-shaped string in the servers' output").toBeNull()
  })
})
