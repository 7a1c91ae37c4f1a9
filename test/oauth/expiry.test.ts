// The lifetimes of DESIGN "Machine access", on a clock the test moves (testApi({ now })): an access token
// lives 900 s, a code 60 s, a consent request 10 minutes, a refresh token 30 days. Each is good just
// before its end and refused just after.
import { beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { testApi } from '../support/api'
import { newAccount, type TestAccount } from '../support/fixtures'
import { appFetch, approved, asHuman, authorizationUrl, connect, discoverAndRegister, exchange, oauthFailure, openAuthorization, refresh, shown, withToken, type Flow } from '../support/oauth'
import { expectInvalidToken } from './context'

let clock = Date.now()
const later = (seconds: number) => {
  clock += seconds * 1000
}

let flow: Flow
let human: TestAccount

beforeAll(async () => {
  const api = await testApi({ now: () => clock })
  flow = await discoverAndRegister(appFetch(api.app))
  human = await newAccount(api.deps.db, 'pro')
})

beforeEach(() => {
  // Forward only, from the real time: rate windows and cached verdicts of earlier tests stay behind.
  clock = Math.max(clock, Date.now()) + 3600_000
})

describe('lifetimes on a moving clock', () => {
  test('an access token: good at 899 s, refused at 901 s (invalid_token); the refresh token still works', async () => {
    const tokens = await connect(flow, human.key, 'links:read')
    later(899)
    const good = await withToken(flow, tokens.access_token, 'GET', '/api/v1/links')
    expect(good.status, shown(good)).toBe(200)
    later(2)
    expectInvalidToken(await withToken(flow, tokens.access_token, 'GET', '/api/v1/links'))
    const fresh = await refresh(flow, tokens.refresh_token!)
    const again = await withToken(flow, fresh.access_token, 'GET', '/api/v1/links')
    expect(again.status, shown(again)).toBe(200)
  })

  test('a code: exchanged at 59 s; another one at 61 s is invalid_grant', async () => {
    const first = await approved(flow, human.key, 'links:read')
    later(59)
    expect((await exchange(flow, first.started, first.redirect)).access_token).toStartWith('at_')
    const second = await approved(flow, human.key, 'links:read')
    later(61)
    expect(await oauthFailure(exchange(flow, second.started, second.redirect))).toMatchObject({ status: 400, error: 'invalid_grant' })
  })

  test('a consent request: pending at 9:59, expired at 10:01, and then not approvable (409)', async () => {
    const started = await authorizationUrl(flow, 'links:read')
    const requestId = await openAuthorization(flow, started)
    later(599)
    const pending = await asHuman(flow, human.key, 'GET', `/api/v1/oauth/request/${requestId}`)
    expect(pending.body?.data?.status, shown(pending)).toBe('pending')
    later(2)
    const expired = await asHuman(flow, human.key, 'GET', `/api/v1/oauth/request/${requestId}`)
    expect(expired.body?.data?.status, shown(expired)).toBe('expired')
    const approve = await asHuman(flow, human.key, 'POST', '/api/v1/oauth/approve', { request_id: requestId })
    expect(approve.status, shown(approve)).toBe(409)
    expect(approve.body?.error, shown(approve)).toBe('OAUTH_REQUEST_DECIDED')
  })

  test('a refresh token: rotates at 30 days less a second; its successor is invalid_grant 30 days and a second later', async () => {
    const tokens = await connect(flow, human.key, 'links:read')
    later(30 * 86400 - 1)
    const rotated = await refresh(flow, tokens.refresh_token!)
    later(30 * 86400 + 1)
    expect(await oauthFailure(refresh(flow, rotated.refresh_token!))).toMatchObject({ status: 400, error: 'invalid_grant' })
  })
})
