// Human sign-in pages (server-rendered HTML, no script):
//   GET  /signin?next=            the e-mail form (and GitHub / Google when configured)
//   POST /signin                  mails a code when an account uses the address; the code form either way
//   POST /signin/code             checks the code, starts the session, 303 to next
//   GET  /signin/done             who is signed in, with a sign-out button
//   POST /signout                 ends the session
//   GET  /signin/{github,google}  and …/callback: sign-in at the provider, matched by verified e-mail
// The forms before a session exists carry a double-submit token (login cookie = hidden field), so
// another site cannot sign a browser in to an account of its choosing; the sign-out form carries the
// session's CSRF token.
import { Elysia } from 'elysia'
import { createMailer } from '../../mail/mailer'
import { formField, redirect } from '../../lib/html'
import { randomBase64url, sameSecret } from '../../lib/secrets'
import { clientIp, enforceIpLimit } from '../../plugins/client'
import { errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { normalizeEmail } from '../registration/service'
import { checkSignInCode, MAX_SIGN_IN_ATTEMPTS, requestSignInCode, SIGN_IN_CODE_TTL_MS, SIGN_IN_RATES } from './codes'
import { readCookieOf, setCookie } from './cookies'
import { DEFAULT_NEXT, FALLBACK_NEXT, returnPath } from './next'
import { codePage, limitPage, messagePage, nextQuery, signedInPage, signInPage } from './pages'
import { identityProviders, PROVIDER_NAMES } from './providers'
import { providerRoutes } from './provider-routes'
import { AccountSuspendedError, checkCsrf, clearSessionCookie, createSession, readSession, revokeSession, sessionCookie, type SignInMethod } from './service'
import { formDoc, htmlDoc, NEXT_PARAM } from './docs'

/** Paths whose POST body is a form (the body plugin's formPaths). */
export const SIGNIN_FORM_PATHS = ['/signin', '/signin/code', '/signout'] as const

const LOGIN_TOKEN = /^[A-Za-z0-9_-]{43}$/
const MAX_EMAIL_LENGTH = 254

function staleForm(next: string): Response {
  return messagePage(
    403,
    'Please start again',
    'This form was not sent from this site’s sign-in page, or your browser did not keep its cookie. Open the sign-in page again (cookies must be allowed).',
    { next },
  )
}

export function signinModule(services: Services) {
  const { config } = services
  const mailer = createMailer(config.mail)
  const providers = identityProviders(config)
  const configured = PROVIDER_NAMES.filter((name) => providers[name])

  /** The double-submit token: the browser's login cookie, or a new one set with this page. */
  const loginToken = (request: Request) => {
    const current = readCookieOf(config, request, 'login')
    if (current !== null && LOGIN_TOKEN.test(current)) return { token: current, cookies: [] }
    const token = randomBase64url(32)
    return { token, cookies: [setCookie(config, 'login', token)] }
  }
  const loginFormOk = (request: Request, body: unknown) => {
    const cookie = readCookieOf(config, request, 'login')
    const sent = formField(body, 'csrf')
    return cookie !== null && LOGIN_TOKEN.test(cookie) && sent !== undefined && sameSecret(sent, cookie)
  }
  /** A new session for the account; the browser's previous one (if any) ends. */
  const signIn = async (request: Request, accountId: string, method: SignInMethod, next: string, cookies: string[] = []) => {
    const previous = await readSession(services, request)
    if (previous) await revokeSession(services, previous.id)
    let session: Awaited<ReturnType<typeof createSession>>
    try {
      session = await createSession(services, accountId, method)
    } catch (error) {
      if (!(error instanceof AccountSuspendedError)) throw error
      return messagePage(
        403,
        'Account suspended',
        'The operators of this service have suspended this account, so it cannot sign in. Its owner was told by e-mail; reply to that message to ask for it back.',
        { cookies },
      )
    }
    return redirect(next, { cookies: [...cookies, sessionCookie(config, session.token)] })
  }

  return new Elysia({ name: 'modules.signin' })
    .use(errors)
    .get(
      '/signin',
      async ({ request, query }) => {
        const next = returnPath(query.next)
        if (await readSession(services, request)) return redirect(next)
        const { token, cookies } = loginToken(request)
        return signInPage({ next, csrf: token, providers: configured, cookies })
      },
      htmlDoc(
        'signInPage',
        'The sign-in page',
        `The e-mail form (and "Sign in with GitHub / Google" when configured). next: a path on this site to go to once signed in (default ${DEFAULT_NEXT}); anything else, once normalised, leads to ${FALLBACK_NEXT} instead. Already signed in: 303 to next.`,
        [200, 303],
        [NEXT_PARAM],
      ),
    )
    .post(
      '/signin',
      async ({ request, body, server }) => {
        const next = returnPath(formField(body, 'next'))
        if (!loginFormOk(request, body)) return staleForm(next)
        const csrf = formField(body, 'csrf')!
        const email = normalizeEmail(formField(body, 'email') ?? '')
        if (email.length > MAX_EMAIL_LENGTH || !/^[^\s@]+@[^\s@]+$/.test(email)) {
          return signInPage({ next, csrf, providers: configured, email: email.slice(0, MAX_EMAIL_LENGTH), error: 'Enter the e-mail address of your account.', status: 400 })
        }
        try {
          await enforceIpLimit(services, request, server, 'signin-request', SIGN_IN_RATES.requestsPerIp)
          const { attemptId } = await requestSignInCode(services, mailer, email, clientIp(services, request, server))
          return codePage({ attemptId, next, csrf, email, validMinutes: SIGN_IN_CODE_TTL_MS / 60_000 })
        } catch (error) {
          return limitPage(error, next)
        }
      },
      formDoc(
        'requestSignInCode',
        'Mail a sign-in code',
        `Form: email, next, csrf (the sign-in page's token, which must match its cookie). Answers the code form whether or not an account uses the address (and mails a code only when one does). Per address and requesting network: ${SIGN_IN_RATES.perAddressNetworkHour.limit} codes an hour, and a repeat within a minute mails the pending code again; per address from every network ${SIGN_IN_RATES.perAddressHour.limit} codes an hour; ${SIGN_IN_RATES.requestsPerIp.limit} requests an hour per client IP (429 page). Asking again never retires a code already mailed.`,
        [200, 400, 403, 429],
        ['email', 'next', 'csrf'],
      ),
    )
    .post(
      '/signin/code',
      async ({ request, body, server }) => {
        const next = returnPath(formField(body, 'next'))
        if (!loginFormOk(request, body)) return staleForm(next)
        const page = { attemptId: formField(body, 'attempt') ?? '', next, csrf: formField(body, 'csrf')!, email: formField(body, 'email') ?? '', validMinutes: SIGN_IN_CODE_TTL_MS / 60_000 }
        let check: Awaited<ReturnType<typeof checkSignInCode>>
        try {
          await enforceIpLimit(services, request, server, 'signin-code', SIGN_IN_RATES.codesPerIp)
          check = await checkSignInCode(services, page.attemptId, formField(body, 'code') ?? '')
        } catch (error) {
          return limitPage(error, next)
        }
        if (check.ok) return signIn(request, check.accountId, 'email-code', next)
        if (check.reason === 'malformed') return codePage({ ...page, status: 400, error: 'The code is the six digits from the e-mail.' })
        if (check.reason === 'exhausted') {
          return messagePage(429, 'Too many wrong codes', `This code took ${MAX_SIGN_IN_ATTEMPTS} wrong attempts and no longer works; ask for a new one.`, { next, headers: { 'retry-after': '60' } })
        }
        const left = `${check.remaining} attempt${check.remaining === 1 ? '' : 's'} left`
        return codePage({ ...page, status: 400, error: `That code is wrong or has expired (codes last ${page.validMinutes} minutes); ${left}.` })
      },
      formDoc(
        'signInWithCode',
        'Sign in with the mailed code',
        `Form: attempt, code, next, csrf. The right code (single-use, ${SIGN_IN_CODE_TTL_MS / 60_000} minutes, ${MAX_SIGN_IN_ATTEMPTS} attempts) starts a session: Set-Cookie of an HttpOnly, SameSite=Lax session cookie (Secure on https), then 303 to next. A wrong or expired code is the code form again (400).`,
        [303, 400, 403, 429],
        ['attempt', 'code', 'next', 'csrf'],
      ),
    )
    .get(
      '/signin/done',
      async ({ request }) => {
        const session = await readSession(services, request)
        if (!session) return redirect('/signin')
        return signedInPage({ email: session.account.email, csrf: session.csrfToken, method: session.method, expiresAt: session.expiresAt })
      },
      htmlDoc('signedInPage', 'Who is signed in', 'The account of the session cookie and a sign-out button; without a session, 303 to /signin.', [200, 303]),
    )
    .post(
      '/signout',
      async ({ request, body }) => {
        const next = returnPath(formField(body, 'next'))
        const session = await readSession(services, request)
        if (!session) return redirect(`/signin${nextQuery(next)}`, { cookies: [clearSessionCookie(config)] })
        if (!checkCsrf(session, formField(body, 'csrf')))
          return messagePage(403, 'Please start again', 'This sign-out form was not sent from this site; sign out from the page that shows who is signed in.', { next: DEFAULT_NEXT })
        await revokeSession(services, session.id)
        return redirect(`/signin${nextQuery(next)}`, { cookies: [clearSessionCookie(config)] })
      },
      formDoc(
        'signOut',
        'Sign out',
        "Form: csrf (the session's CSRF token), next (optional: where sign-in leads afterwards). Ends the session at once (its cookie no longer works anywhere), clears the cookie, 303 to /signin. A missing or wrong token is a 403 page.",
        [303, 403],
        ['csrf', 'next'],
      ),
    )
    .use(providerRoutes(services, providers, signIn))
}
