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
export const unavailablePage = () => page(503, 'Temporarily unavailable', 'This link cannot be looked up right now. Please try again in a moment.', { 'Retry-After': '5' })
export const methodNotAllowedPage = () => page(405, 'Method not allowed', 'Short links answer GET and HEAD only.', { Allow: 'GET, HEAD' })
export const loopDetectedPage = () => page(508, 'Redirect loop', 'This link points back at this service, so following it would never end. Its owner needs to change its destination.')

/**
 * The form of a password-protected link: posts `password` back to the same address (redirect/password.ts).
 * `notice` is one of our own sentences, never anything a visitor sent. The page may not be framed, so
 * nobody can overlay it to catch what is typed.
 */
export function passwordPage(status = 200, notice = ''): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>Password required</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#1f2937}h1{font-size:1.5rem}.notice{color:#b91c1c}input,button{font:inherit;padding:.4rem .6rem;margin:.25rem 0}</style></head><body><h1>Password required</h1><p>This link is password protected. Enter its password to continue.</p>${notice ? `<p class="notice" role="alert">${notice}</p>` : ''}<form method="post"><label for="password">Password</label><br><input id="password" name="password" type="password" autocomplete="current-password" maxlength="128" required autofocus> <button type="submit">Continue</button></form></body></html>`
  return new Response(html, { status, headers: PAGE_HEADERS })
}
export const tooManyReportsPage = (retryAfterSeconds: number) =>
  page(429, 'Too many reports', `Too many reports came from your address this hour. Try again in ${Math.max(1, Math.ceil(retryAfterSeconds / 60))} minute(s).`, {
    'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
  })
export const tooManyAttemptsPage = (retryAfterSeconds: number) =>
  page(429, 'Too many attempts', `Too many passwords were tried for this link. Try again in ${Math.max(1, Math.ceil(retryAfterSeconds / 60))} minute(s).`, {
    'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
  })

/** Text for HTML: the five characters that could open markup or end an attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

const STYLE =
  '<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:12vh auto;padding:0 1rem;color:#1f2937}h1{font-size:1.5rem}.dest{word-break:break-all;padding:.5rem .75rem;background:#f3f4f6;border-radius:.25rem}a.button,button{font:inherit;padding:.45rem .9rem;margin:.25rem .5rem .25rem 0;display:inline-block}label{display:block;margin-top:.75rem}select,textarea,input{font:inherit;width:100%;box-sizing:border-box;padding:.35rem}.muted{color:#4b5563}</style>'

function document(status: number, title: string, body: string): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${title}</title>${STYLE}</head><body>${body}</body></html>`
  return new Response(html, { status, headers: PAGE_HEADERS })
}

/** A link an operator or a blocklist took down: nothing of where it led. */
export const disabledPage = () => page(410, 'Link disabled', 'This link was disabled for abuse (phishing, malware or spam) and no longer redirects.')

/**
 * A flagged link: where it leads, in full (an internationalised host in its punycode form, which is what
 * the URL parser gives), a Continue link (a short-lived signed one, which redirects and counts the
 * click), and the way to report it. A password link does not show its destination.
 */
export function interstitialPage(destination: string | null, continueHref: string, inspectHref: string): Response {
  const where = destination === null ? '<p>It leads to a password-protected destination.</p>' : `<p>It leads to:</p><p class="dest">${escapeHtml(destination)}</p>`
  return document(
    200,
    'Check this link before you go on',
    `<h1>Check this link before you go on</h1><p>People have reported this link, or it leads to an address that is known to be unsafe. Continue only if you trust where it leads.</p>${where}<p><a class="button" href="${escapeHtml(continueHref)}" rel="noreferrer">Continue</a> <a href="${escapeHtml(inspectHref)}">Report this link</a></p>`,
  )
}

/** What a visitor may learn of a link before following it (`/{alias}+`). */
export interface InspectView {
  /** null for a password-protected link: its destination is not shown. */
  url: string | null
  createdAt: string
  by: 'guest' | 'account'
  state: 'ok' | 'flagged' | 'disabled'
}

const REASONS: [string, string][] = [
  ['phishing', 'Phishing: it imitates another site to take passwords or money'],
  ['malware', 'Malware: it downloads harmful software'],
  ['spam', 'Spam'],
  ['illegal', 'Illegal content'],
  ['other', 'Something else'],
]

/** The inspect page: the link, never followed, and the report form (posted back to the same address). */
export function inspectPage(shortUrl: string, view: InspectView, notice = '', status = 200): Response {
  const dest = view.url === null ? '<p>The destination is password protected.</p>' : `<p>Destination:</p><p class="dest">${escapeHtml(view.url)}</p>`
  const state =
    view.state === 'disabled' ? '<p><strong>This link was disabled for abuse.</strong></p>' : view.state === 'flagged' ? '<p><strong>Visitors of this link see a warning first.</strong></p>' : ''
  const options = REASONS.map(([value, label]) => `<option value="${value}">${label}</option>`).join('')
  return document(
    status,
    'About this short link',
    `<h1>About this short link</h1><p class="muted">${escapeHtml(shortUrl)}</p>${dest}<p>Created ${escapeHtml(view.createdAt.slice(0, 10))} by ${view.by === 'guest' ? 'a guest (no account)' : 'an account holder'}.</p>${state}${notice ? `<p role="status">${notice}</p>` : ''}<h2>Report this link</h2><form method="post"><label for="reason">What is wrong with it</label><select id="reason" name="reason" required>${options}</select><label for="details">Details (optional)</label><textarea id="details" name="details" maxlength="2000" rows="4"></textarea><label for="email">Your e-mail, if we may ask you about it (optional)</label><input id="email" name="email" type="email" maxlength="254" autocomplete="email"><p><button type="submit">Send the report</button></p></form>`,
  )
}
