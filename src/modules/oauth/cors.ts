// CORS for the OAuth endpoints browser-based hosts call from their page (the MCP Inspector runs the
// whole flow in the browser): discovery, registration, token and revocation. Any origin, never with
// credentials: these paths read no cookie, a page can only send what any client could send, and every
// answer is the client's own (its registration, its code's tokens). Authorization and consent are
// navigations, not fetches, and get no CORS; nor does the REST API.
import { Elysia } from 'elysia'
import { AUTHORIZATION_SERVER_PATH, PROTECTED_RESOURCE_PATH } from './discovery'

/** Each path and the method a page calls it with. */
const CORS_PATHS = new Map([
  [AUTHORIZATION_SERVER_PATH, 'GET'],
  [PROTECTED_RESOURCE_PATH, 'GET'],
  [`${PROTECTED_RESOURCE_PATH}/mcp`, 'GET'],
  ['/oauth/register', 'POST'],
  ['/oauth/token', 'POST'],
  ['/oauth/revoke', 'POST'],
])

/** What the SDKs send: MCP-Protocol-Version on discovery, Authorization (Basic client_id) at the token endpoint. */
const ALLOWED_HEADERS = 'Authorization, Content-Type, MCP-Protocol-Version'
/** Preflights are cached a day (browsers cap it lower): the answer never changes. */
const MAX_AGE_S = 86_400

const ANSWER_HEADERS = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Retry-After, WWW-Authenticate' }

/** The path of a request URL when it is one of CORS_PATHS (a cheap test first: this runs for every request). */
function corsPath(url: string): string | undefined {
  if (!url.includes('/oauth/') && !url.includes('/.well-known/')) return undefined
  const path = new URL(url).pathname
  return CORS_PATHS.has(path) ? path : undefined
}

export function oauthCors() {
  let app = new Elysia({ name: 'modules.oauth.cors' })
    // Before routing, so that every answer on these paths carries it: errors, 429s and parse failures
    // too (the error handler keeps the headers set here), or the page could not read why it failed.
    .onRequest(({ request, set }) => {
      if (corsPath(request.url) !== undefined) Object.assign(set.headers, ANSWER_HEADERS)
    })
  for (const [path, method] of CORS_PATHS) {
    app = app.options(
      path,
      () =>
        new Response(null, {
          status: 204,
          headers: { ...ANSWER_HEADERS, 'access-control-allow-methods': `${method}, OPTIONS`, 'access-control-allow-headers': ALLOWED_HEADERS, 'access-control-max-age': String(MAX_AGE_S) },
        }),
      { detail: { hide: true } },
    )
  }
  return app
}
