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

// The dashboard's look (dashboard/src/styles.css: its fonts, colours, fields, buttons and focus ring), so
// signing in, consenting and approving feel like the same product. A form's first action is the primary
// (accent) button here; .secondary is the dashboard's plain button.
const STYLE = `:root{--fg:#1f2937;--muted:#4b5563;--line:#d1d5db;--accent:#1d4ed8;--danger:#b91c1c}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:var(--fg);background:#f9fafb}
h1{font-size:1.6rem;line-height:1.25}a{color:var(--accent)}:focus-visible{outline:3px solid #93c5fd;outline-offset:2px}
label{display:block;margin:1rem 0 .25rem;font-weight:600;font-size:.95rem}ul.scopes label{display:inline;font-weight:400;font-size:1rem}
input[type=email],input[type=text]{font:inherit;width:100%;box-sizing:border-box;padding:.45rem .6rem;border:1px solid var(--line);border-radius:.375rem;background:#fff;color:var(--fg)}
button,.button{display:inline-block;font:inherit;padding:.45rem .9rem;margin:.75rem .5rem 0 0;border:1px solid var(--accent);border-radius:.375rem;background:var(--accent);color:#fff;cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:#fff;border-color:var(--line);color:var(--fg)}
.error{color:var(--danger);border-left:4px solid var(--danger);padding:.25rem .75rem;background:#fef2f2}.note{color:var(--muted);font-size:.875rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#fff;border:1px solid var(--line);border-radius:.25rem;padding:.4rem .6rem;font-size:.9rem}
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
