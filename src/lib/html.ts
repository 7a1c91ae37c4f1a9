// The few server-rendered pages for people (sign-in, consent): one escape function and one layout with
// the headers every such page carries. No script at all (the CSP allows none), inline style only, no
// framing (a consent button must not be clickjacked), no Referer (URLs carry request ids), not cached.

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

export interface PageOptions {
  status?: number
  headers?: Record<string, string>
  /** Set-Cookie values, one header each. */
  cookies?: readonly string[]
  /**
   * Where this page's forms may lead besides this origin. A browser applies form-action to the
   * redirects after a submission too, so a form answered by a redirect to another origin (the consent
   * page's, to the client's redirect URI) must name that origin or scheme here.
   */
  formTargets?: readonly string[]
}

/** A form field sent once (the body plugin's form parser); a repeated or non-string field is absent. */
export function formField(body: unknown, name: string): string | undefined {
  const value = body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined
  return typeof value === 'string' ? value : undefined
}

/** A CSP source for a URL a form may end up at: its origin, or `scheme:` for a private-use scheme. */
export function formTargetOf(url: string): string | null {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return null
  }
  if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return parsed.origin
  // A private-use scheme (RFC 8252 7.1): the scheme alone is a valid CSP scheme-source.
  return /^[a-z][a-z0-9+.-]*:$/.test(parsed.protocol) ? parsed.protocol : null
}

export function pageHeaders(formTargets: readonly string[] = []): Record<string, string> {
  const formAction = ["'self'", ...formTargets].join(' ')
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  }
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#111}
label{display:block;margin:1rem 0 .25rem}input[type=email],input[type=text]{font:inherit;width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #bbb;border-radius:.3rem}
button,.button{display:inline-block;font:inherit;padding:.6rem 1.2rem;margin:.75rem .5rem 0 0;border:0;border-radius:.4rem;background:#3b82f6;color:#fff;cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:#e5e7eb;color:#111}.error{color:#b91c1c}.note{color:#555;font-size:.875rem}
ul.scopes{list-style:none;padding:0}ul.scopes li{margin:.4rem 0}`

/** A whole page: `body` is HTML the caller has escaped; `title` is text. */
export function htmlPage(title: string, body: string, options: PageOptions = {}): Response {
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>${STYLE}</style></head>
<body>${body}</body></html>`
  return new Response(page, { status: options.status ?? 200, headers: withCookies({ ...pageHeaders(options.formTargets), ...options.headers }, options.cookies) })
}

/** A redirect a page answers with: 303 after a form (the browser follows with GET), 302 to a provider. */
export function redirect(location: string, options: { status?: 302 | 303; cookies?: readonly string[] } = {}): Response {
  const headers = withCookies({ location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }, options.cookies)
  return new Response(null, { status: options.status ?? 303, headers })
}

function withCookies(headers: Record<string, string>, cookies: readonly string[] = []): Headers {
  const result = new Headers(headers)
  for (const cookie of cookies) result.append('set-cookie', cookie)
  return result
}
