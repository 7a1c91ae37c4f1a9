import { beforeAll, describe, expect, test } from 'bun:test'
import { ApiError, errors } from './errors'
import { Elysia } from 'elysia'
import { agentCalls } from './agent-calls'
import { createAuth, readBearer, type Authenticator, type Principal } from './auth'
import { call, newGuestToken, show, testApi, type TestApp } from '../../test/support/api'

function refusal(header: string | null): string {
  try {
    readBearer(header)
    return 'accepted'
  } catch (err) {
    return err instanceof ApiError ? `${err.status} ${err.code}` : `unexpected ${String(err)}`
  }
}

describe('readBearer', () => {
  test('accepts "Bearer <token>" in any case of the scheme', () => {
    const token = `gt_${'a'.repeat(43)}`
    expect(readBearer(`Bearer ${token}`)).toBe(token)
    expect(readBearer(`bearer ${token}`)).toBe(token)
    expect(readBearer(`BEARER   ${token} `)).toBe(token)
  })

  test('refuses missing, empty, other schemes, several tokens and malformed tokens with 401', () => {
    const bad = [
      null,
      '',
      ' ',
      'Bearer',
      'Bearer ',
      'Basic dXNlcjpwYXNz',
      `gt_${'a'.repeat(43)}`,
      `Bearer gt_${'a'.repeat(43)} extra`,
      'Bearer gt_short',
      `Bearer x_${'a'.repeat(43)}`,
      `Bearer XX_${'a'.repeat(43)}`,
      `Bearer gt_${'a'.repeat(40)}é`,
      `Bearer gt_${'a'.repeat(40)}%00`,
      `Bearer gt_${'a'.repeat(5000)}`,
    ]
    for (const header of bad) expect(refusal(header), String(header)).toBe('401 UNAUTHORIZED')
  })
})

describe('auth on routes', () => {
  let app: TestApp
  beforeAll(async () => {
    app = (await testApi()).app
  })

  test('odd Authorization headers are 401 JSON, never 500', async () => {
    const headers = ['Bearer', 'Bearer ', 'Bearer \u00e9\u00e8', 'Token abc', `Bearer gt_\u00ff${'a'.repeat(40)}`, `Bearer ${'x'.repeat(8000)}`, 'Bearer null', 'Bearer undefined']
    for (const authorization of headers) {
      const res = await call(app, 'GET', '/api/v1/account/status', { headers: { authorization } })
      expect(res.status, `${authorization.slice(0, 30)}: ${show(res)}`).toBe(401)
      expect(res.body, show(res)).toMatchObject({ success: false, error: 'UNAUTHORIZED' })
      expect(typeof res.body.hint, show(res)).toBe('string')
    }
  })

  test('a valid guest token is accepted and gets X-RateLimit headers', async () => {
    const token = await newGuestToken(app)
    const res = await call(app, 'GET', '/api/v1/account/status', { token })
    expect(res.status, show(res)).toBe(200)
    expect(res.headers.get('x-ratelimit-remaining'), show(res)).toBe('99')
  })

  test('a refused request is not counted against the token', async () => {
    const token = await newGuestToken(app)
    await call(app, 'GET', '/api/v1/account/status', { token: `${token}x` })
    const res = await call(app, 'GET', '/api/v1/account/status', { token })
    expect(res.body.data.usage.requests_made, show(res)).toBe(1)
  })
})

describe('createAuth: authenticators are injected, one per token prefix', () => {
  const account = { id: 'acct_1', email: 'a@example.test', plan: 'free' as const }
  const seen: string[] = []
  const zz: Authenticator = {
    prefix: 'zz_',
    kind: 'account',
    async authenticate(token): Promise<Principal> {
      seen.push(token)
      return { kind: 'account', account, rateHeaders: { 'x-ratelimit-limit': '5' }, credentialId: 'zz:1' }
    },
  }
  const resourceMetadataUrl = 'https://api.example.test/.well-known/oauth-protected-resource'
  const auth = createAuth([zz], { resourceMetadataUrl, agentCalls: agentCalls({ resourceMetadataUrl, clientIp: () => '' }) })
  const app = new Elysia()
    .use(errors)
    .use(auth.plugin)
    .get('/a', ({ account, principal }) => ({ id: account.id, credential: principal.credentialId }), { account: true })
    .get('/g', ({ guest }) => ({ id: guest.id }), { guest: true })
  const get = (path: string, token: string) => app.handle(new Request(`http://localhost${path}`, { headers: { authorization: `Bearer ${token}` } }))
  const token = `zz_${'b'.repeat(43)}`

  test('a new prefix is one more authenticator: the route gets its account and the rate headers', async () => {
    const res = await get('/a', token)
    const text = await res.text()
    expect(res.status, text).toBe(200)
    expect(JSON.parse(text)).toEqual({ id: 'acct_1', credential: 'zz:1' })
    expect(res.headers.get('x-ratelimit-limit')).toBe('5')
    expect(seen).toContain(token)
  })

  test('a prefix no authenticator answers for, or a kind the route does not accept, is 401 without a lookup', async () => {
    const before = seen.length
    for (const [path, t] of [
      ['/a', `mk_${'c'.repeat(43)}`],
      ['/g', token],
    ] as const) {
      const res = await get(path, t)
      const body = (await res.json()) as { error: string }
      expect(res.status, JSON.stringify(body)).toBe(401)
      expect(body.error).toBe('UNAUTHORIZED')
    }
    expect(seen.length).toBe(before)
  })
})
