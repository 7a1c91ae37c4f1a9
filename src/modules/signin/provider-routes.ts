// GET /signin/{github,google} → the provider (302), GET /signin/{github,google}/callback → the session.
// The state (and Google's PKCE verifier, and `next`) wait in a short-lived HttpOnly cookie of this
// browser: a callback whose state is not that cookie's is refused, so nobody can complete a sign-in
// they did not start in this browser. A provider that is not configured answers 404 on both routes.
import { generateCodeVerifier, generateState } from 'arctic'
import { eq } from 'drizzle-orm'
import { Elysia } from 'elysia'
import { redirect } from '../../lib/html'
import { accounts } from '../../db/schema'
import { sameSecret } from '../../lib/secrets'
import { enforceIpLimit } from '../../plugins/client'
import type { Services } from '../../services'
import { clearCookie, readCookieOf, setCookie } from './cookies'
import { htmlDoc, NEXT_PARAM } from './docs'
import { returnPath } from './next'
import { limitPage, messagePage } from './pages'
import { IdentityProviderError, PROVIDER_LABELS, PROVIDER_NAMES, type IdentityProvider, type ProviderName } from './providers'
import { log } from '../../lib/log'

/** Ten minutes to sign in at the provider. */
const STATE_TTL_SECONDS = 600
/** Callbacks per client IP: each costs two calls to the provider. */
const CALLBACK_RATE = { limit: 30, windowMs: 3_600_000 } as const

type SignIn = (request: Request, accountId: string, method: ProviderName, next: string, cookies?: string[]) => Promise<Response>

interface Pending {
  provider: string
  state: string
  verifier: string
  next: string
}

function encodePending(p: Pending): string {
  return [p.provider, p.state, p.verifier, Buffer.from(p.next).toString('base64url')].join('.')
}

function decodePending(value: string | null): Pending | null {
  const parts = value?.split('.')
  if (parts?.length !== 4 || !parts.every((part) => /^[A-Za-z0-9_-]+$/.test(part))) return null
  const next = returnPath(Buffer.from(parts[3]!, 'base64url').toString())
  return { provider: parts[0]!, state: parts[1]!, verifier: parts[2]!, next }
}

export function providerRoutes(services: Services, providers: Partial<Record<ProviderName, IdentityProvider>>, signIn: SignIn) {
  const routes = new Elysia({ name: 'modules.signin.providers' })
  for (const name of PROVIDER_NAMES) routes.use(providerRoute(services, name, providers[name], signIn))
  return routes
}

function providerRoute(services: Services, name: ProviderName, provider: IdentityProvider | undefined, signIn: SignIn) {
  const { config } = services
  const label = PROVIDER_LABELS[name]
  const notConfigured = () => messagePage(404, 'Not available', `Sign-in with ${label} is not configured on this server; sign in with a code by e-mail.`)

  return new Elysia({ name: `modules.signin.${name}` })
    .get(
      `/signin/${name}`,
      ({ query }) => {
        if (!provider) return notConfigured()
        const next = returnPath(query.next)
        const pending: Pending = { provider: name, state: generateState(), verifier: generateCodeVerifier(), next }
        return redirect(provider.authorizationUrl(pending.state, pending.verifier).href, {
          status: 302,
          cookies: [setCookie(config, 'provider', encodePending(pending), STATE_TTL_SECONDS)],
        })
      },
      htmlDoc(
        `signInWith${label}`,
        `Sign in with ${label}`,
        `302 to ${label} (state, ${name === 'google' ? 'PKCE, ' : ''}and next kept in a 10-minute HttpOnly cookie). 404 page when ${name.toUpperCase()}_CLIENT_ID is not set.`,
        [302, 404],
        [NEXT_PARAM],
      ),
    )
    .get(
      `/signin/${name}/callback`,
      async ({ request, query, server }) => {
        if (!provider) return notConfigured()
        const clear = [clearCookie(config, 'provider')]
        const pending = decodePending(readCookieOf(config, request, 'provider'))
        const state = typeof query.state === 'string' ? query.state : ''
        if (!pending || pending.provider !== name || state === '' || !sameSecret(state, pending.state)) {
          return messagePage(400, 'Please start again', `This answer from ${label} does not belong to a sign-in started in this browser (or it took longer than ten minutes).`, { cookies: clear })
        }
        const { next } = pending
        if (typeof query.error === 'string') {
          return messagePage(403, 'Sign-in cancelled', `${label} did not sign you in (${query.error.slice(0, 60)}).`, { next, cookies: clear })
        }
        if (typeof query.code !== 'string' || query.code === '') return messagePage(400, 'Please start again', `${label} sent no code.`, { next, cookies: clear })
        let email: string | null
        try {
          await enforceIpLimit(services, request, server, 'signin-provider', CALLBACK_RATE)
          email = await provider.verifiedEmail(query.code, pending.verifier)
        } catch (error) {
          if (error instanceof IdentityProviderError) {
            if (error.kind === 'refused') return messagePage(400, 'Please start again', `${label} refused this sign-in (the code is stale or was used); try again.`, { next, cookies: clear })
            log.error({ component: 'signin', provider: name, error: error.message }, 'identity provider did not answer as expected')
            return messagePage(502, 'Try again shortly', `${label} did not answer as expected; try again in a moment, or sign in with a code by e-mail.`, { next, cookies: clear })
          }
          return limitPage(error, next)
        }
        if (email === null) {
          return messagePage(
            403,
            'No verified e-mail address',
            `${label} has no verified ${name === 'github' ? 'primary ' : ''}e-mail address for you, so it cannot tell us who you are. Verify it there, or sign in with a code by e-mail.`,
            { next, cookies: clear },
          )
        }
        const [account] = await services.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.email, email)).limit(1)
        if (!account) {
          return messagePage(
            404,
            'No account',
            `No account uses ${email}, the address ${label} verified for you. Sign-in does not create accounts; register with the API first (POST /api/v1/guest/register).`,
            { next, cookies: clear },
          )
        }
        return signIn(request, account.id, name, next, clear)
      },
      htmlDoc(
        `signInWith${label}Callback`,
        `${label}'s answer`,
        `Where ${label} sends the browser back. Checks the state against this browser's cookie, exchanges the code, reads the verified e-mail and signs in to the account that uses it (none is created): Set-Cookie of the session, 303 to next. Refusals are pages: a state that is not this browser's (400), no verified e-mail (403), no account with it (404), ${label} unreachable (502).`,
        [303, 400, 403, 404, 429, 502],
        [
          { name: 'code', description: `${label}'s authorization code` },
          { name: 'state', description: 'The state this browser was sent with' },
          { name: 'error', description: `${label}'s error, when the sign-in was not completed` },
        ],
      ),
    )
}
