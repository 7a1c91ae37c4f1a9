// The few pages a browser may see from the redirector: small, self-contained HTML, no framework. Every
// one carries the same locked-down headers: nothing loads but the inline style, nothing is sniffed,
// nothing frames it, and the short link's address is not handed on as a referrer.

export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
}

function page(status: number, title: string, message: string, extraHeaders: Record<string, string> = {}): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${title}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#1f2937}h1{font-size:1.5rem}</style></head><body><h1>${title}</h1><p>${message}</p></body></html>`
  return new Response(html, { status, headers: { ...PAGE_HEADERS, ...extraHeaders } })
}

export const notFoundPage = () => page(404, 'Link not found', 'There is no link at this address, or it is not active yet.')
/** The root of a custom domain whose owner set nowhere to send it: says what the host is, nothing more. */
export const domainRootPage = () => page(200, 'Short links', 'This address serves short links. Open a full short link to be taken to its destination.')
export const expiredPage = () => page(410, 'Link expired', 'This link has expired and no longer redirects.')
export const unavailablePage = () =>
  page(503, 'Temporarily unavailable', 'This link cannot be looked up right now. Please try again in a moment.', { 'Retry-After': '5' })
export const methodNotAllowedPage = () => page(405, 'Method not allowed', 'Short links answer GET and HEAD only.', { Allow: 'GET, HEAD' })
export const loopDetectedPage = () =>
  page(508, 'Redirect loop', 'This link points back at this service, so following it would never end. Its owner needs to change its destination.')

/**
 * The form of a password-protected link: posts `password` back to the same address (redirect/password.ts).
 * `notice` is one of our own sentences, never anything a visitor sent. The page may not be framed, so
 * nobody can overlay it to catch what is typed.
 */
export function passwordPage(status = 200, notice = ''): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>Password required</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#1f2937}h1{font-size:1.5rem}.notice{color:#b91c1c}input,button{font:inherit;padding:.4rem .6rem;margin:.25rem 0}</style></head><body><h1>Password required</h1><p>This link is password protected. Enter its password to continue.</p>${notice ? `<p class="notice" role="alert">${notice}</p>` : ''}<form method="post"><label for="password">Password</label><br><input id="password" name="password" type="password" autocomplete="current-password" maxlength="128" required autofocus> <button type="submit">Continue</button></form></body></html>`
  return new Response(html, { status, headers: PAGE_HEADERS })
}
export const tooManyAttemptsPage = (retryAfterSeconds: number) =>
  page(429, 'Too many attempts', `Too many passwords were tried for this link. Try again in ${Math.max(1, Math.ceil(retryAfterSeconds / 60))} minute(s).`, {
    'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
  })
