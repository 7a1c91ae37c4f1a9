// A loopback fake of GitHub's or Google's OAuth side, for sign-in tests: the authorize endpoint (302
// back to the redirect URI with a code and the state, as the provider does once the person agrees), the
// token endpoint (client credentials by HTTP Basic, single-use codes bound to the redirect URI, PKCE
// S256 checked when the authorization carried a challenge) and the endpoint our code reads the e-mail
// from (GitHub's /user/emails, Google's userinfo). Errors in each provider's manner: GitHub answers a
// bad code with 200 and an `error` field, Google with 400.
import { createHash } from 'node:crypto'

export type Flavor = 'github' | 'google'

export interface GithubEmail {
  email: string
  primary: boolean
  verified: boolean
}

/** Who signs in at the provider next: GitHub's e-mail list, or Google's userinfo. */
export type FakeUser = { emails: GithubEmail[] } | { email: string; email_verified: boolean }

interface Grant {
  redirectUri: string
  challenge: string | null
  user: FakeUser
  used: boolean
}

export interface FakeIdentityProvider {
  url: string
  clientId: string
  clientSecret: string
  /** The settings that point this service at the fake (GITHUB_* or GOOGLE_*). */
  env: Record<string, string>
  /** The user the next authorization signs in, or `deny` to send error=access_denied back. */
  next(user: FakeUser | 'deny'): void
  /** Every request, "METHOD /path", in order. */
  requests: string[]
  /** The authorization requests' query parameters, in order. */
  authorizations: URLSearchParams[]
  close(): void
}

const PATHS: Record<Flavor, { authorize: string; token: string; user: string }> = {
  github: { authorize: '/login/oauth/authorize', token: '/login/oauth/access_token', user: '/user/emails' },
  google: { authorize: '/o/oauth2/v2/auth', token: '/token', user: '/v1/userinfo' },
}

const random = () => Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64url')

export function startFakeIdentityProvider(flavor: Flavor): FakeIdentityProvider {
  const clientId = `fake-${flavor}-${random()}`
  const clientSecret = `secret-${random()}`
  const paths = PATHS[flavor]
  const grants = new Map<string, Grant>()
  const tokens = new Map<string, FakeUser>()
  const requests: string[] = []
  const authorizations: URLSearchParams[] = []
  let upcoming: FakeUser | 'deny' | null = null

  const json = (body: unknown, status = 200) => Response.json(body, { status })
  const tokenError = (error: string) => json({ error, error_description: `fake ${flavor}: ${error}` }, flavor === 'github' ? 200 : 400)

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url)
      requests.push(`${request.method} ${url.pathname}`)
      if (request.method === 'GET' && url.pathname === paths.authorize) {
        const q = url.searchParams
        authorizations.push(q)
        const redirectUri = q.get('redirect_uri')
        if (q.get('client_id') !== clientId || !redirectUri || q.get('response_type') !== 'code' || !q.get('state')) return json({ error: 'invalid_request' }, 400)
        if (flavor === 'google' && (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge'))) return json({ error: 'invalid_request', error_description: 'PKCE required' }, 400)
        const back = new URL(redirectUri)
        back.searchParams.set('state', q.get('state')!)
        if (upcoming === 'deny' || upcoming === null) {
          back.searchParams.set('error', 'access_denied')
        } else {
          const code = random()
          grants.set(code, { redirectUri, challenge: q.get('code_challenge'), user: upcoming, used: false })
          back.searchParams.set('code', code)
        }
        upcoming = null
        return new Response(null, { status: 302, headers: { location: back.href } })
      }
      if (request.method === 'POST' && url.pathname === paths.token) {
        const expected = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`
        if (request.headers.get('authorization') !== expected) return json({ error: 'invalid_client' }, 401)
        const form = new URLSearchParams(await request.text())
        const grant = grants.get(form.get('code') ?? '')
        if (form.get('grant_type') !== 'authorization_code' || !grant || grant.used) return tokenError(flavor === 'github' ? 'bad_verification_code' : 'invalid_grant')
        grant.used = true
        if (form.get('redirect_uri') !== grant.redirectUri) return tokenError(flavor === 'github' ? 'redirect_uri_mismatch' : 'invalid_grant')
        if (grant.challenge !== null) {
          const verifier = form.get('code_verifier') ?? ''
          if (createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) return tokenError('invalid_grant')
        }
        const accessToken = `fake-token-${random()}`
        tokens.set(accessToken, grant.user)
        return json({ access_token: accessToken, token_type: 'Bearer', expires_in: 3600, scope: flavor === 'github' ? 'user:email' : 'openid email' })
      }
      if (request.method === 'GET' && url.pathname === paths.user) {
        const user = tokens.get((request.headers.get('authorization') ?? '').replace(/^Bearer /, ''))
        if (!user) return json({ message: 'Bad credentials' }, 401)
        if (flavor === 'github') return json('emails' in user ? user.emails : [])
        return json('email' in user ? { sub: random(), email: user.email, email_verified: user.email_verified } : {})
      }
      return json({ error: 'not_found' }, 404)
    },
  })
  const url = server.url.origin
  const prefix = flavor.toUpperCase()
  return {
    url,
    clientId,
    clientSecret,
    env: {
      [`${prefix}_CLIENT_ID`]: clientId,
      [`${prefix}_CLIENT_SECRET`]: clientSecret,
      [`${prefix}_AUTHORIZATION_URL`]: url + paths.authorize,
      [`${prefix}_TOKEN_URL`]: url + paths.token,
      // GitHub's setting is the API base (our code appends /user/emails); Google's the userinfo URL itself.
      [`${prefix}_USER_URL`]: flavor === 'github' ? url : url + paths.user,
    },
    next(user) {
      upcoming = user
    },
    requests,
    authorizations,
    close: () => void server.stop(true),
  }
}
