// The sign-in pages. Plain forms that work without JavaScript (the CSP allows none); every value from
// the request or the database is escaped.
import { escapeHtml, htmlPage } from '../../lib/html'
import { ApiError } from '../../plugins/errors'
import { DEFAULT_NEXT } from './next'
import { PROVIDER_LABELS, type ProviderName } from './providers'

/** `?next=` for a link back to a page: nothing for the default. */
export function nextQuery(next: string): string {
  return next === DEFAULT_NEXT ? '' : `?next=${encodeURIComponent(next)}`
}

function hidden(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('')
}

function errorLine(error: string | undefined): string {
  return error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''
}

export interface SignInPageInput {
  next: string
  csrf: string
  providers: readonly ProviderName[]
  email?: string
  error?: string
  status?: number
  cookies?: string[]
}

export function signInPage(input: SignInPageInput): Response {
  const buttons = input.providers.map((name) => `<a class="button secondary" href="/signin/${name}${escapeHtml(nextQuery(input.next))}">Sign in with ${PROVIDER_LABELS[name]}</a>`).join(' ')
  return htmlPage(
    'Sign in',
    `<h1>Sign in</h1>
${errorLine(input.error)}
<form method="post" action="/signin">${hidden({ csrf: input.csrf, next: input.next })}
<label for="email">E-mail address of your account</label>
<input type="email" id="email" name="email" required autocomplete="email" value="${escapeHtml(input.email ?? '')}">
<button type="submit">Send me a sign-in code</button>
</form>
${buttons ? `<p>or</p><p>${buttons}</p>` : ''}
<p class="note">We mail a six-digit code to the address of your account. No account yet? Create one with the API (POST /api/v1/guest/register).</p>`,
    { status: input.status, cookies: input.cookies },
  )
}

export interface CodePageInput {
  attemptId: string
  next: string
  csrf: string
  email: string
  validMinutes: number
  error?: string
  status?: number
}

/** The same page whether or not the address has an account. */
export function codePage(input: CodePageInput): Response {
  return htmlPage(
    'Enter your sign-in code',
    `<h1>Check your e-mail</h1>
<p>If an account uses <strong>${escapeHtml(input.email)}</strong>, a six-digit sign-in code is on its way there. It is valid for ${input.validMinutes} minutes.</p>
${errorLine(input.error)}
<form method="post" action="/signin/code">${hidden({ csrf: input.csrf, next: input.next, attempt: input.attemptId, email: input.email })}
<label for="code">Sign-in code</label>
<input type="text" id="code" name="code" required inputmode="numeric" pattern="[0-9 ]{6,7}" maxlength="7" autocomplete="one-time-code">
<button type="submit">Sign in</button>
</form>
<p><a href="/signin${escapeHtml(nextQuery(input.next))}">Use another address, or ask for a new code</a></p>`,
    { status: input.status },
  )
}

export function signedInPage(input: { email: string; csrf: string; method: string; expiresAt: Date }): Response {
  return htmlPage(
    'Signed in',
    `<h1>Signed in</h1>
<p>You are signed in as <strong>${escapeHtml(input.email)}</strong> (${escapeHtml(input.method)}) until ${escapeHtml(input.expiresAt.toUTCString())}.</p>
<form method="post" action="/signout">${hidden({ csrf: input.csrf })}<button type="submit" class="secondary">Sign out</button></form>`,
  )
}

/** A page that explains a refusal, with a way to start again. */
export function messagePage(status: number, title: string, message: string, options: { next?: string; headers?: Record<string, string>; cookies?: string[] } = {}): Response {
  return htmlPage(
    title,
    `<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(message)}</p>
<p><a href="/signin${escapeHtml(nextQuery(options.next ?? DEFAULT_NEXT))}">Back to sign-in</a></p>`,
    { status, headers: options.headers, cookies: options.cookies },
  )
}

/** The rate limit or an unavailable store, as a page; anything else goes on to the error handler. */
export function limitPage(error: unknown, next: string): Response {
  if (error instanceof ApiError && (error.status === 429 || error.status === 503)) {
    const retry = error.extra.retryAfter
    const headers = retry === undefined ? undefined : { 'retry-after': String(Math.max(1, Math.ceil(retry))) }
    return messagePage(error.status, error.status === 429 ? 'Too many requests' : 'Try again shortly', error.hint, { next, headers })
  }
  throw error
}
