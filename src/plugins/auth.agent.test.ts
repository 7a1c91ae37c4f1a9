// The auth plugin with an Agent's token and a signed-in session, through injected authenticators (the
// real ones are tested with the OAuth flow in test/oauth/). What a user of the API depends on: an at_
// token works within its route's scope only, never on a human-only route; every 401 points an OAuth
// client at the resource metadata; a session's writes need the CSRF token.
import { describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { agentCalls } from './agent-calls'
import { createAuth, type Authenticator, type Principal } from './auth'
import { ApiError, errors } from './errors'

const METADATA = 'https://api.example.test/.well-known/oauth-protected-resource'
const account = { id: 'acct_1', email: 'a@example.test', plan: 'free' as const }
const key: Authenticator = {
  prefix: 'mk_',
  kind: 'account',
  async authenticate(): Promise<Principal> {
    return { kind: 'account', account, rateHeaders: {}, credentialId: 'mk:key_1' }
  },
}
const agentToken: Authenticator = {
  prefix: 'at_',
  kind: 'account',
  async authenticate(token): Promise<Principal> {
    if (token.endsWith('revoked')) throw new ApiError('UNAUTHORIZED', 'Unknown or revoked access token.')
    return { kind: 'account', account, agent: { agentId: 'agt_1', tokenId: 'tok_1', clientId: 'cli_1', scopes: ['links:read'], requireApproval: [] }, rateHeaders: {}, credentialId: 'at:agt_1' }
  },
}
const CSRF = 'csrf-token-of-the-session'
const session = async (request: Request): Promise<Principal | null> =>
  request.headers.get('cookie') === 'ls_session=good' ? { kind: 'account', account, session: { sessionId: 'ses_1', csrfToken: CSRF }, rateHeaders: {}, credentialId: 'ses:ses_1' } : null

const auth = createAuth([key, agentToken], { resourceMetadataUrl: METADATA, session, agentCalls: agentCalls({ resourceMetadataUrl: METADATA, clientIp: () => '' }) })
const app = new Elysia()
  .use(errors)
  .use(auth.plugin)
  .get('/links', ({ principal }) => ({ credential: principal.credentialId }), { account: { scopes: ['links:read'] } })
  .post('/links', ({ principal }) => ({ credential: principal.credentialId }), { account: { scopes: ['links:write'] } })
  .get('/tags', () => ({ ok: true }), { account: { scopes: ['tags:read'] } })
  .get('/human', ({ principal }) => ({ credential: principal.credentialId }), { human: true })
  .post('/human', ({ principal }) => ({ credential: principal.credentialId }), { human: true })
  .get('/unscoped', () => ({ ok: true }), { account: true })

async function send(method: string, path: string, headers: Record<string, string> = {}) {
  const res = await app.handle(new Request(`http://localhost${path}`, { method, headers }))
  const text = await res.text()
  return { status: res.status, challenge: res.headers.get('www-authenticate'), body: JSON.parse(text), text }
}
const at = `at_${'a'.repeat(43)}`
const mk = `mk_${'b'.repeat(43)}`

describe('an Agent token (at_)', () => {
  test('works on a route within its scopes', async () => {
    const r = await send('GET', '/links', { authorization: `Bearer ${at}` })
    expect(r.status, r.text).toBe(200)
    expect(r.body.credential).toBe('at:agt_1')
  })

  test('a route needing a scope it lacks is 403 INSUFFICIENT_SCOPE with the step-up challenge', async () => {
    const r = await send('GET', '/tags', { authorization: `Bearer ${at}` })
    expect(r.status, r.text).toBe(403)
    expect(r.body.error).toBe('INSUFFICIENT_SCOPE')
    expect(r.challenge).toBe(`Bearer error="insufficient_scope", scope="tags:read", resource_metadata="${METADATA}"`)
  })

  test('human-only routes and routes that name no scope refuse it with 403 HUMAN_ONLY', async () => {
    for (const [method, path] of [
      ['GET', '/human'],
      ['POST', '/human'],
      ['GET', '/unscoped'],
    ] as const) {
      const r = await send(method, path, { authorization: `Bearer ${at}` })
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(403)
      expect(r.body.error).toBe('HUMAN_ONLY')
    }
  })

  test('a refused token is 401 with resource_metadata and error="invalid_token"; no token, no error attribute', async () => {
    const refused = await send('GET', '/links', { authorization: `Bearer at_${'x'.repeat(36)}revoked` })
    expect(refused.status, refused.text).toBe(401)
    expect(refused.challenge).toBe(`Bearer resource_metadata="${METADATA}", error="invalid_token"`)
    const none = await send('GET', '/links')
    expect(none.status, none.text).toBe(401)
    expect(none.challenge).toBe(`Bearer resource_metadata="${METADATA}"`)
  })

  test('an API key holds every scope', async () => {
    for (const path of ['/links', '/tags', '/unscoped', '/human']) {
      const r = await send('GET', path, { authorization: `Bearer ${mk}` })
      expect(r.status, `${path}: ${r.text}`).toBe(200)
    }
  })
})

describe("the signed-in session (the dashboard's credential)", () => {
  test('reads with the cookie alone', async () => {
    const r = await send('GET', '/human', { cookie: 'ls_session=good' })
    expect(r.status, r.text).toBe(200)
    expect(r.body.credential).toBe('ses:ses_1')
  })

  test('writes need X-CSRF-Token: missing or wrong is 403 CSRF_TOKEN_INVALID', async () => {
    for (const headers of [{}, { 'x-csrf-token': 'wrong' }, { 'x-csrf-token': '' }] as Record<string, string>[]) {
      const r = await send('POST', '/human', { cookie: 'ls_session=good', ...headers })
      expect(r.status, r.text).toBe(403)
      expect(r.body.error).toBe('CSRF_TOKEN_INVALID')
    }
    const ok = await send('POST', '/human', { cookie: 'ls_session=good', 'x-csrf-token': CSRF })
    expect(ok.status, ok.text).toBe(200)
  })

  test('an unknown cookie is 401, on human and on scoped API routes', async () => {
    for (const path of ['/human', '/links']) {
      const r = await send('GET', path, { cookie: 'ls_session=forged' })
      expect(r.status, `${path}: ${r.text}`).toBe(401)
    }
  })

  test('scoped API routes take the session too: reads with the cookie, writes only with X-CSRF-Token', async () => {
    const read = await send('GET', '/links', { cookie: 'ls_session=good' })
    expect(read.status, read.text).toBe(200)
    const forged = await send('POST', '/links', { cookie: 'ls_session=good' })
    expect(forged.status, forged.text).toBe(403)
    expect(forged.body.error).toBe('CSRF_TOKEN_INVALID')
    const write = await send('POST', '/links', { cookie: 'ls_session=good', 'x-csrf-token': CSRF })
    expect(write.status, write.text).toBe(200)
  })

  test('a bearer token sent with the cookie decides alone: a bad one is 401 even with a good session', async () => {
    const r = await send('GET', '/links', { cookie: 'ls_session=good', authorization: `Bearer at_${'x'.repeat(36)}revoked` })
    expect(r.status, r.text).toBe(401)
  })
})
