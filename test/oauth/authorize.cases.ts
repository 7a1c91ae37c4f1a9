// Negative cases of GET /oauth/authorize and of the human's consent API (DESIGN "Machine access"), as a
// function of where the API runs (see context.ts). Each case is its own test; each starts from a
// newly registered client and a new human.
import { expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { oauthRequests } from '../../src/db/schema'
import { newAccount } from '../support/fixtures'
import { approveAsHuman, approved, asHuman, authorizationFailure, authorizationUrl, connect, exchange, ISSUER, openAuthorization, openRaw, shown, withToken } from '../support/oauth'
import { clientAndHuman, expectErrorPage, redirectOf, requestsOf, type OAuthCaseContext } from './context'

export function authorizeCases(context: () => OAuthCaseContext) {
  /** An authorization URL changed by `edit`, opened: the error it redirects back with (state and iss checked). */
  async function refusedWith(edit: (url: URL, verifier: string) => void, scope = 'links:read') {
    const ctx = context()
    const { flow } = await clientAndHuman(ctx)
    const started = await authorizationUrl(flow, scope)
    edit(started.url, started.verifier)
    const res = await openRaw(flow, started.url)
    const failure = authorizationFailure(flow, redirectOf(res, flow), started.state)
    expect(failure.params.get('iss'), shown(res)).toBe(ISSUER)
    expect(failure.params.get('state'), shown(res)).toBe(started.state)
    expect(await requestsOf(ctx.db, flow.client.client_id), 'no consent request is created').toEqual([])
    return failure.error
  }

  test('authorize without code_challenge: invalid_request back to the client', async () => {
    expect(await refusedWith((url) => url.searchParams.delete('code_challenge'))).toBe('invalid_request')
  })

  test('authorize with code_challenge_method=plain: invalid_request', async () => {
    const error = await refusedWith((url, verifier) => {
      url.searchParams.set('code_challenge_method', 'plain')
      url.searchParams.set('code_challenge', verifier)
    })
    expect(error).toBe('invalid_request')
  })

  test('authorize without code_challenge_method (RFC 7636 would default to plain): invalid_request', async () => {
    expect(await refusedWith((url) => url.searchParams.delete('code_challenge_method'))).toBe('invalid_request')
  })

  test('authorize for another resource (RFC 8707): invalid_target', async () => {
    expect(await refusedWith((url) => url.searchParams.set('resource', 'https://other.example'))).toBe('invalid_target')
  })

  test('authorize with an unknown scope: invalid_scope', async () => {
    expect(await refusedWith(() => {}, 'links:read admin:all')).toBe('invalid_scope')
  })

  test('authorize with a scope outside the ones the client registered: invalid_scope', async () => {
    const ctx = context()
    const { flow } = await clientAndHuman(ctx, { scope: 'links:read' })
    const started = await authorizationUrl(flow, 'links:read links:delete')
    expect(authorizationFailure(flow, redirectOf(await openRaw(flow, started.url), flow), started.state).error).toBe('invalid_scope')
  })

  test('authorize with a repeated parameter: invalid_request', async () => {
    expect(await refusedWith((url) => url.searchParams.append('scope', 'links:write'))).toBe('invalid_request')
    // Repeated before client_id and redirect_uri are read: still an error for the client, not a page.
    const error = await refusedWith((url) => {
      const params = [...url.searchParams]
      url.search = ''
      url.searchParams.append('scope', 'links:write')
      for (const [k, v] of params) url.searchParams.append(k, v)
    })
    expect(error).toBe('invalid_request')
  })

  test('authorize with a redirect_uri the client did not register: a 400 page, never a redirect', async () => {
    const ctx = context()
    const { flow } = await clientAndHuman(ctx)
    for (const uri of ['https://attacker.example/callback', flow.redirectUri.replace('/callback', '/other'), `${flow.redirectUri}?x=1`]) {
      const started = await authorizationUrl(flow, 'links:read', { redirect_uri: uri })
      expectErrorPage(await openRaw(flow, started.url), 'invalid_request')
    }
    // A repeated redirect_uri cannot be trusted either, whatever else is repeated before it.
    for (const before of [[], [['scope', 'links:write']]]) {
      const started = await authorizationUrl(flow, 'links:read')
      for (const [k, v] of before) started.url.searchParams.append(k!, v!)
      started.url.searchParams.append('redirect_uri', 'https://attacker.example/callback')
      expectErrorPage(await openRaw(flow, started.url), 'invalid_request')
    }
    expect(await requestsOf(ctx.db, flow.client.client_id)).toEqual([])
  })

  test('authorize with an unknown client_id: a 400 page, never a redirect', async () => {
    const ctx = context()
    const { flow } = await clientAndHuman(ctx)
    // (An https client_id is a metadata document: one on a non-public address is refused before any connection.)
    for (const clientId of ['cli_AAAAAAAAAAAAAAAAAAAAAA', 'https://127.0.0.1/metadata.json', '']) {
      const started = await authorizationUrl(flow, 'links:read', { client_id: clientId })
      expectErrorPage(await openRaw(flow, started.url), clientId === '' ? 'invalid_request' : 'invalid_client')
    }
  })

  test('the human denies: access_denied back to the client with state and iss, and no code', async () => {
    const ctx = context()
    const { flow, human } = await clientAndHuman(ctx)
    const started = await authorizationUrl(flow, 'links:read')
    const requestId = await openAuthorization(flow, started)
    const redirect = await approveAsHuman(flow, human.key, requestId, { approve: false })
    expect(redirect.searchParams.get('code'), redirect.href).toBeNull()
    const failure = authorizationFailure(flow, redirect, started.state)
    expect(failure.error, redirect.href).toBe('access_denied')
    expect(failure.params.get('state')).toBe(started.state)
    expect(failure.params.get('iss')).toBe(ISSUER)
    const view = await asHuman(flow, human.key, 'GET', `/api/v1/oauth/request/${requestId}`)
    expect(view.body?.data?.status, shown(view)).toBe('denied')
  })

  test("another account's decided consent request: 404 to read it, 404 to approve it", async () => {
    const ctx = context()
    const { flow, human: a } = await clientAndHuman(ctx)
    const b = await newAccount(ctx.db, 'pro')
    const { requestId } = await approved(flow, a.key, 'links:read')
    const read = await asHuman(flow, b.key, 'GET', `/api/v1/oauth/request/${requestId}`)
    expect(read.status, shown(read)).toBe(404)
    expect(read.body?.error, shown(read)).toBe('OAUTH_REQUEST_NOT_FOUND')
    for (const approve of [true, false]) {
      const decide = await asHuman(flow, b.key, 'POST', '/api/v1/oauth/approve', { request_id: requestId, approve })
      expect(decide.status, shown(decide)).toBe(404)
      expect(decide.body?.error, shown(decide)).toBe('OAUTH_REQUEST_NOT_FOUND')
    }
    const own = await asHuman(flow, a.key, 'GET', `/api/v1/oauth/request/${requestId}`)
    expect(own.status, shown(own)).toBe(200)
  })

  test('a decided request decided again: 409 OAUTH_REQUEST_DECIDED, and no second code', async () => {
    const ctx = context()
    const { flow, human } = await clientAndHuman(ctx)
    const { requestId } = await approved(flow, human.key, 'links:read')
    for (const approve of [true, false]) {
      const again = await asHuman(flow, human.key, 'POST', '/api/v1/oauth/approve', { request_id: requestId, approve })
      expect(again.status, shown(again)).toBe(409)
      expect(again.body?.error, shown(again)).toBe('OAUTH_REQUEST_DECIDED')
    }
  })

  test('an unknown or malformed request id: 404 OAUTH_REQUEST_NOT_FOUND', async () => {
    const { flow, human } = await clientAndHuman(context())
    for (const id of ['oreq_AAAAAAAAAAAAAAAAAAAAAA', 'nope']) {
      const res = await asHuman(flow, human.key, 'GET', `/api/v1/oauth/request/${id}`)
      expect(res.status, shown(res)).toBe(404)
      expect(res.body?.error, shown(res)).toBe('OAUTH_REQUEST_NOT_FOUND')
    }
  })

  test('approving a subset of the scopes: the token holds only that subset', async () => {
    const { flow, human } = await clientAndHuman(context())
    const { started, redirect } = await approved(flow, human.key, 'links:read tags:read', { scopes: ['links:read'] })
    const tokens = await exchange(flow, started, redirect)
    expect(tokens.scope).toBe('links:read')
    const links = await withToken(flow, tokens.access_token, 'GET', '/api/v1/links')
    expect(links.status, shown(links)).toBe(200)
    const tags = await withToken(flow, tokens.access_token, 'GET', '/api/v1/tags')
    expect(tags.status, shown(tags)).toBe(403)
    expect(tags.body?.error, shown(tags)).toBe('INSUFFICIENT_SCOPE')
  })

  test('approving a scope twice: granted once, to the token and to the Agent', async () => {
    const { flow, human } = await clientAndHuman(context())
    const { started, redirect } = await approved(flow, human.key, 'links:read tags:read', { scopes: ['tags:read', 'tags:read'] })
    expect((await exchange(flow, started, redirect)).scope).toBe('tags:read')
    const list = await asHuman(flow, human.key, 'GET', '/api/v1/agents')
    const agent = list.body?.data?.agents?.find((a: { client_id: string | null }) => a.client_id === flow.client.client_id)
    expect(agent?.scopes, shown(list)).toEqual(['tags:read'])
  })

  test('approving a scope that was not requested: 400, and the request stays pending', async () => {
    const ctx = context()
    const { flow, human } = await clientAndHuman(ctx)
    const started = await authorizationUrl(flow, 'links:read')
    const requestId = await openAuthorization(flow, started)
    for (const scopes of [['links:read', 'links:delete'], []]) {
      const res = await asHuman(flow, human.key, 'POST', '/api/v1/oauth/approve', { request_id: requestId, scopes })
      expect(res.status, shown(res)).toBe(400)
      expect(res.body?.error, shown(res)).toBe('VALIDATION_FAILED')
    }
    const [row] = await ctx.db.select().from(oauthRequests).where(eq(oauthRequests.id, requestId))
    expect(row?.status).toBe('pending')
  })

  test('an at_ token on the human-only consent routes: 403 HUMAN_ONLY', async () => {
    const { flow, human } = await clientAndHuman(context())
    const tokens = await connect(flow, human.key, 'links:read links:write')
    const started = await authorizationUrl(flow, 'links:read links:write links:delete')
    const requestId = await openAuthorization(flow, started)
    const view = await withToken(flow, tokens.access_token, 'GET', `/api/v1/oauth/request/${requestId}`)
    expect(view.status, shown(view)).toBe(403)
    expect(view.body?.error, shown(view)).toBe('HUMAN_ONLY')
    const approve = await withToken(flow, tokens.access_token, 'POST', '/api/v1/oauth/approve', { request_id: requestId })
    expect(approve.status, shown(approve)).toBe(403)
    expect(approve.body?.error, shown(approve)).toBe('HUMAN_ONLY')
    // The Agent did not approve its own wider request.
    const still = await asHuman(flow, human.key, 'GET', `/api/v1/oauth/request/${requestId}`)
    expect(still.body?.data?.status, shown(still)).toBe('pending')
  })

  test('a consent request past its 10 minutes: expired, and approving it is 409', async () => {
    const ctx = context()
    const { flow, human } = await clientAndHuman(ctx)
    const started = await authorizationUrl(flow, 'links:read')
    const requestId = await openAuthorization(flow, started)
    // Aged in the database: the servers' clocks are their own.
    await ctx.db
      .update(oauthRequests)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(oauthRequests.id, requestId))
    const view = await asHuman(flow, human.key, 'GET', `/api/v1/oauth/request/${requestId}`)
    expect(view.body?.data?.status, shown(view)).toBe('expired')
    const res = await asHuman(flow, human.key, 'POST', '/api/v1/oauth/approve', { request_id: requestId })
    expect(res.status, shown(res)).toBe(409)
    expect(res.body?.error, shown(res)).toBe('OAUTH_REQUEST_DECIDED')
  })
}
