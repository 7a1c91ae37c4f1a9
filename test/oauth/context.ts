// What the OAuth case lists (authorize.cases.ts, tokens.cases.ts) run against: an API reached through a
// fetch (in-process app.handle, or a real server process), its database, and an API of another issuer
// on the same database. test/oauth/*.test.ts run them in-process; test/oauth/two-process.test.ts runs
// them against spawned servers on real Postgres and Redis.
import { createHash } from 'node:crypto'
import { expect } from 'bun:test'
import { eq } from 'drizzle-orm'
import type * as oauth from 'oauth4webapi'
import type { Db } from '../../src/db/client'
import { oauthRequests } from '../../src/db/schema'
import { newAccount, type TestAccount } from '../support/fixtures'
import { discoverAndRegister, ISSUER, shown, type Answer, type Fetch, type Flow } from '../support/oauth'

export interface OAuthCaseContext {
  /** A fetch to the API under test (each call to this function: a client IP of its own). */
  fetch(): Fetch
  db: Db
  /** The same service with another issuer (PUBLIC_API_URL https://other.sho.rt), on the same database. */
  otherResource(): Fetch
}

export const OTHER_ISSUER = 'https://other.sho.rt'
export const RESOURCE_METADATA = `${ISSUER}/.well-known/oauth-protected-resource`
export const INVALID_TOKEN = `Bearer resource_metadata="${RESOURCE_METADATA}", error="invalid_token"`

/** A newly registered client and a new human (Pro: room for many calls a minute). */
export async function clientAndHuman(ctx: OAuthCaseContext, metadata: Partial<oauth.Client> = {}): Promise<{ flow: Flow; human: TestAccount }> {
  return { flow: await discoverAndRegister(ctx.fetch(), ISSUER, metadata), human: await newAccount(ctx.db, 'pro') }
}

export const sha256 = (secret: string) => createHash('sha256').update(secret).digest('hex')

/** The consent requests a client has: none may exist after a refused authorization. */
export async function requestsOf(db: Db, clientId: string) {
  return db.select().from(oauthRequests).where(eq(oauthRequests.clientId, clientId))
}

/** A 302 back to the client: its Location, parsed. */
export function redirectOf(res: Answer, flow: Flow): URL {
  expect(res.status, shown(res)).toBe(302)
  const location = new URL(res.headers.get('location') ?? 'about:blank')
  expect(`${location.origin}${location.pathname}`, shown(res)).toBe(flow.redirectUri)
  return location
}

/** The refusal page of authorize: 400 HTML, and nothing sent anywhere (no Location). */
export function expectErrorPage(res: Answer, error: string): void {
  expect(res.status, shown(res)).toBe(400)
  expect(res.headers.get('location'), shown(res)).toBeNull()
  expect(res.headers.get('content-type'), shown(res)).toStartWith('text/html')
  expect(res.text, shown(res)).toContain(`<code>${error}</code>`)
}

/** An at_ token refused as invalid (401 with the challenge naming the resource metadata). */
export function expectInvalidToken(res: Answer, challenge = INVALID_TOKEN): void {
  expect(res.status, shown(res)).toBe(401)
  expect(res.headers.get('www-authenticate'), shown(res)).toBe(challenge)
  expect(res.body?.error, shown(res)).toBe('UNAUTHORIZED')
}
