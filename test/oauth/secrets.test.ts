// DESIGN "Secrets at rest" for the OAuth flow: codes, at_ and rt_ tokens are stored as their SHA-256
// only, and neither they nor the PKCE verifier are written to any column or printed to the log. The flow
// runs its good path and its refusals (a wrong verifier, a replayed code, a reused refresh token, a
// revoked token), since error paths are where secrets leak into messages.
import { beforeAll, describe, expect, test } from 'bun:test'
import { eq, or } from 'drizzle-orm'
import * as oauth from 'oauth4webapi'
import { agents, humanSessions, oauthClients, oauthCodes, oauthRequests, oauthTokens } from '../../src/db/schema'
import { log, logTo, setLogLevel, type LogLevel } from '../../src/lib/log'
import { testApi } from '../support/api'
import { newAccount } from '../support/fixtures'
import { appFetch, approved, discoverAndRegister, exchange, ISSUER, oauthFailure, refresh, revoke, withToken } from '../support/oauth'
import { sha256 } from './context'

let api: Awaited<ReturnType<typeof testApi>>

beforeAll(async () => {
  api = await testApi()
})

/**
 * Everything written to the console (and to stdout/stderr directly) while `run` runs, passed through too;
 * and every line of the process log (src/lib/log.ts), at its most talkative level.
 */
async function captured(run: () => Promise<void>): Promise<string> {
  const lines: string[] = []
  const logged = { destination: logTo({ write: (line: string) => void lines.push(line) }), level: log.level as LogLevel }
  setLogLevel('trace')
  const saved = { log: console.log, error: console.error, warn: console.warn, info: console.info, debug: console.debug }
  const writes = { out: process.stdout.write, err: process.stderr.write }
  for (const name of Object.keys(saved) as (keyof typeof saved)[]) {
    console[name] = (...args: unknown[]) => {
      lines.push(args.map((a) => (typeof a === 'string' ? a : Bun.inspect(a))).join(' '))
      saved[name](...args)
    }
  }
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => (
    lines.push(String(chunk)), (writes.out as (...a: unknown[]) => boolean).call(process.stdout, chunk, ...rest)
  )) as typeof process.stdout.write
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => (
    lines.push(String(chunk)), (writes.err as (...a: unknown[]) => boolean).call(process.stderr, chunk, ...rest)
  )) as typeof process.stderr.write
  try {
    await run()
  } finally {
    Object.assign(console, saved)
    process.stdout.write = writes.out
    process.stderr.write = writes.err
    logTo(logged.destination)
    setLogLevel(logged.level)
  }
  return lines.join('\n')
}

describe('secrets of the OAuth flow', () => {
  test('stored only as SHA-256, in no column in clear, and never printed', async () => {
    const human = await newAccount(api.deps.db, 'pro')
    const secrets: { what: string; value: string }[] = []
    const issued: { token: string; kind: 'access' | 'refresh' }[] = []
    const keep = (tokens: oauth.TokenEndpointResponse) => {
      issued.push({ token: tokens.access_token, kind: 'access' }, { token: tokens.refresh_token!, kind: 'refresh' })
      secrets.push({ what: 'access token', value: tokens.access_token }, { what: 'refresh token', value: tokens.refresh_token! })
    }
    const codes: string[] = []
    let clientId = ''

    const log = await captured(async () => {
      const flow = await discoverAndRegister(appFetch(api.app))
      clientId = flow.client.client_id

      // The good path: a code, its tokens, a rotation, a link created with the token.
      const first = await approved(flow, human.key, 'links:read links:write')
      codes.push(first.redirect.searchParams.get('code')!)
      secrets.push({ what: 'PKCE verifier', value: first.started.verifier })
      const tokens = await exchange(flow, first.started, first.redirect)
      keep(tokens)
      expect((await withToken(flow, tokens.access_token, 'POST', '/api/v1/shorten', { url: 'https://example.com/secrets' })).status).toBe(200)
      const rotated = await refresh(flow, tokens.refresh_token!)
      keep(rotated)

      // The refusals: a replayed code, a reused refresh token, a revoked token, a wrong verifier.
      await oauthFailure(exchange(flow, first.started, first.redirect))
      await oauthFailure(refresh(flow, tokens.refresh_token!))
      await withToken(flow, rotated.access_token, 'GET', '/api/v1/links')
      const second = await approved(flow, human.key, 'links:read')
      codes.push(second.redirect.searchParams.get('code')!)
      secrets.push({ what: 'PKCE verifier', value: second.started.verifier })
      await oauthFailure(exchange(flow, { ...second.started, verifier: oauth.generateRandomCodeVerifier() }, second.redirect))
      const third = await exchange(flow, second.started, second.redirect)
      keep(third)
      await revoke(flow, third.access_token)
      await withToken(flow, third.access_token, 'GET', '/api/v1/links')
      await withToken(flow, `${third.access_token.slice(0, -4)}AAAA`, 'GET', '/api/v1/links')
    })
    for (const code of codes) secrets.push({ what: 'code', value: code })

    // Every row the flow wrote, as JSON.
    const db = api.deps.db
    const rows = {
      oauth_tokens: await db.select().from(oauthTokens).where(eq(oauthTokens.accountId, human.id)),
      oauth_codes: await db.select().from(oauthCodes).where(eq(oauthCodes.clientId, clientId)),
      oauth_requests: await db.select().from(oauthRequests).where(eq(oauthRequests.clientId, clientId)),
      oauth_clients: await db.select().from(oauthClients).where(eq(oauthClients.id, clientId)),
      agents: await db.select().from(agents).where(eq(agents.accountId, human.id)),
      human_sessions: await db.select().from(humanSessions).where(eq(humanSessions.accountId, human.id)),
    }
    const stored = JSON.stringify(rows)
    for (const { what, value } of secrets) {
      expect(stored.includes(value), `${what} stored in clear`).toBe(false)
      expect(log.includes(value), `${what} printed`).toBe(false)
    }
    expect(stored, 'a token-shaped string in a row').not.toMatch(/\b(at|rt)_[A-Za-z0-9_-]{20,}/)
    expect(log, 'a token-shaped string in the log').not.toMatch(/\b(at|rt)_[A-Za-z0-9_-]{20,}/)

    // What is stored is the SHA-256 (hex) of each secret, one row per token issued.
    expect(rows.oauth_tokens.length).toBe(issued.length)
    for (const { token, kind } of issued) {
      const [row] = await db
        .select()
        .from(oauthTokens)
        .where(eq(oauthTokens.tokenHash, sha256(token)))
      expect(row?.kind, `the row of a ${kind} token, by its SHA-256`).toBe(kind)
      expect(row?.accountId).toBe(human.id)
      expect(row?.resource).toBe(ISSUER)
    }
    const codeRows = await db
      .select()
      .from(oauthCodes)
      .where(or(...codes.map((c) => eq(oauthCodes.codeHash, sha256(c)))))
    expect(codeRows.length, 'each code has its row, by its SHA-256').toBe(codes.length)
    expect(rows.oauth_codes.length).toBe(codes.length)
  })
})
