// The few pages a browser may see from the redirector: small, self-contained HTML, no framework.

function page(status: number, title: string, message: string, extraHeaders: Record<string, string> = {}): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${title}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#1f2937}h1{font-size:1.5rem}</style></head><body><h1>${title}</h1><p>${message}</p></body></html>`
  return new Response(html, {
    status,
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', ...extraHeaders },
  })
}

export const notFoundPage = () => page(404, 'Link not found', 'There is no link at this address, or it is not active yet.')
export const expiredPage = () => page(410, 'Link expired', 'This link has expired and no longer redirects.')
export const unavailablePage = () =>
  page(503, 'Temporarily unavailable', 'This link cannot be looked up right now. Please try again in a moment.', { 'Retry-After': '5' })
export const methodNotAllowedPage = () => page(405, 'Method not allowed', 'Short links answer GET and HEAD only.', { Allow: 'GET, HEAD' })
// Password links can only be made by registered accounts; the password form arrives with them. Until
// then such a link is refused rather than redirected without its password.
export const passwordPage = () => page(403, 'Password required', 'This link is password protected.')
