// The cookies of human sign-in. All HttpOnly and SameSite=Lax: Lax, not Strict, because the consent page
// is reached by a redirect from the client's site and a provider's callback from the provider's, and
// both must see them. When the API is served over https (PUBLIC_API_URL) they are Secure and carry the
// __Host- prefix: the browser then refuses one set by another host (a sibling subdomain) or for another
// path, so nobody can plant a session or a login token in it.
import type { Config } from '../../../core/config'

export type CookieKind = 'session' | 'login' | 'provider'

/** session: the signed-in human; login: the double-submit token of the sign-in forms; provider: GitHub/Google state. */
const BASE_NAMES: Record<CookieKind, string> = { session: 'ls_session', login: 'ls_login', provider: 'ls_provider' }

export function isSecure(config: Pick<Config, 'publicApiUrl'>): boolean {
  return config.publicApiUrl.startsWith('https:')
}

export function cookieName(config: Pick<Config, 'publicApiUrl'>, kind: CookieKind): string {
  return (isSecure(config) ? '__Host-' : '') + BASE_NAMES[kind]
}

/** The value of a cookie in the request's Cookie header (the first one of that name), or null. */
export function readCookie(request: Request, name: string): string | null {
  const header = request.headers.get('cookie')
  if (!header) return null
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue
    return part.slice(eq + 1).trim()
  }
  return null
}

export function readCookieOf(config: Pick<Config, 'publicApiUrl'>, request: Request, kind: CookieKind): string | null {
  return readCookie(request, cookieName(config, kind))
}

/**
 * A Set-Cookie value. The values this module sets are base64url and dots, never in need of quoting.
 * `maxAgeSeconds` undefined: a browser-session cookie; 0: deleted.
 */
export function setCookie(config: Pick<Config, 'publicApiUrl'>, kind: CookieKind, value: string, maxAgeSeconds?: number): string {
  const parts = [`${cookieName(config, kind)}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax']
  if (maxAgeSeconds !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`)
  if (isSecure(config)) parts.push('Secure')
  return parts.join('; ')
}

export function clearCookie(config: Pick<Config, 'publicApiUrl'>, kind: CookieKind): string {
  return setCookie(config, kind, '', 0)
}
