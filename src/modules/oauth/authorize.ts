// GET /oauth/authorize (OAuth 2.1 with PKCE, RFC 9207 `iss`, RFC 8707 `resource`). Two phases, as the
// RFC demands: until the client and its redirect URI are known good, an error is a page shown to the
// human (never a redirect: an attacker's redirect_uri must not receive anything); after, an error goes
// back to the client's redirect URI with `error`, `state` and `iss`. A good request becomes a consent
// request (oreq_…, 10 minutes) and the browser goes to the consent page.
import { oauthRequests } from '../../db/schema'
import { newId } from '../../lib/ids'
import { OAuthError } from '../../plugins/oauth-errors'
import type { Services } from '../../services'
import { loadClient, redirectUriMatches, type OAuthClient } from './clients'
import { resolveResource } from '../agents/audience'
import { isScope } from '../../lib/agent-access'

export const CONSENT_TTL_MS = 10 * 60 * 1000
export const CONSENT_PAGE_PATH = '/consent'
/** The authorization endpoint (RFC 6749 3.1): it answers a repeated parameter itself, as a page or at the redirect URI. */
export const AUTHORIZE_PATH = '/oauth/authorize'

/** RFC 7636: 43-128 characters of base64url (an S256 challenge is exactly 43). */
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43,128}$/
const MAX_STATE = 1024

export type AuthorizeOutcome =
  /** The request is not one we may redirect for: shown to the human as a 400 page. */
  | { kind: 'page'; error: string; description: string }
  /** To the consent page, or back to the client with an error. */
  | { kind: 'redirect'; location: string }

/** The issuer (RFC 9207 `iss`). */
export function issuerOf(services: Pick<Services, 'config'>): string {
  return services.config.publicApiUrl
}

/** The client's redirect URI with the response parameters added (its own query kept). */
export function withParams(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri)
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(key, value)
  return url.href
}

/**
 * Every parameter once: a repeated one is invalid_request (RFC 6749 3.1). All of them are read, so that a
 * repeated client_id or redirect_uri is known even when another parameter is repeated before it.
 */
function single(query: URLSearchParams): { values: Record<string, string>; repeated: string[] } {
  const values: Record<string, string> = {}
  const repeated: string[] = []
  for (const [key, value] of query) {
    if (!Object.hasOwn(values, key)) values[key] = value
    else if (!repeated.includes(key)) repeated.push(key)
  }
  return { values, repeated }
}

/** The scopes asked for: `scope`, else what the client registered; unknown or outside its registration is invalid_scope. */
function requestedScopes(client: OAuthClient, scope: string | undefined): string[] | { error: string } {
  const words = (value: string) => [...new Set(value.split(' ').filter((s) => s !== ''))]
  const asked = scope !== undefined && scope.trim() !== '' ? words(scope) : client.scope ? words(client.scope) : []
  if (asked.length === 0) return { error: 'scope is required (this client registered none); see scopes_supported.' }
  const unknown = asked.find((s) => !isScope(s))
  if (unknown !== undefined) return { error: `unknown scope ${unknown.slice(0, 40)}; see scopes_supported.` }
  if (client.scope) {
    const registered = new Set(words(client.scope))
    const outside = asked.find((s) => !registered.has(s))
    if (outside !== undefined) return { error: `scope ${outside} is outside the scopes this client registered.` }
  }
  return asked
}

export async function authorize(services: Pick<Services, 'db' | 'config' | 'now'>, query: URLSearchParams): Promise<AuthorizeOutcome> {
  const { values: q, repeated } = single(query)
  const page = (description: string, error = 'invalid_request'): AuthorizeOutcome => ({ kind: 'page', error, description })

  // Phase 1: who is asking, and where may the answer go.
  if (q.client_id === undefined || q.client_id === '') return page('client_id is missing.')
  const untrusted = repeated.find((key) => key === 'client_id' || key === 'redirect_uri')
  if (untrusted !== undefined) return page(`${untrusted} is repeated.`)
  let client: OAuthClient | null
  try {
    client = await loadClient(services, q.client_id)
  } catch (error) {
    // A metadata document that cannot be used (unreachable, not public, not naming itself, …).
    if (error instanceof OAuthError) return page(error.description, error.code)
    throw error
  }
  if (!client) return page('Unknown client_id: register the client first (POST /oauth/register).', 'invalid_client')
  let redirectUri = q.redirect_uri
  if (redirectUri === undefined) {
    if (client.redirect_uris.length !== 1) return page('redirect_uri is missing, and the client registered more than one.')
    redirectUri = client.redirect_uris[0]!
  } else if (redirectUri.includes('#')) {
    return page('redirect_uri must not have a fragment.')
  } else if (!redirectUriMatches(client.redirect_uris, redirectUri)) {
    return page('redirect_uri is not one this client registered (compared exactly).')
  }

  // Phase 2: errors go back to the client.
  const iss = issuerOf(services)
  const state = q.state !== undefined && q.state.length <= MAX_STATE ? q.state : undefined
  const back = (error: string, description: string): AuthorizeOutcome => ({
    kind: 'redirect',
    location: withParams(redirectUri, { error, error_description: description, state, iss }),
  })
  if (repeated.length > 0) return back('invalid_request', `${repeated[0]!.slice(0, 40)} is repeated.`)
  if (q.state !== undefined && q.state.length > MAX_STATE) return back('invalid_request', `state is longer than ${MAX_STATE} characters.`)
  if (q.response_type !== 'code') return back('unsupported_response_type', 'response_type must be "code".')
  if (q.code_challenge === undefined) return back('invalid_request', 'code_challenge is required (PKCE with S256).')
  if (q.code_challenge_method !== 'S256') return back('invalid_request', 'code_challenge_method must be S256 (plain is not accepted).')
  if (!CODE_CHALLENGE.test(q.code_challenge)) return back('invalid_request', 'code_challenge must be 43-128 base64url characters.')
  const resource = resolveResource(services.config, q.resource)
  if (resource === null) return back('invalid_target', `resource must be ${iss} (the REST API and /mcp) or ${iss}/mcp (/mcp only).`)
  const scopes = requestedScopes(client, q.scope)
  if ('error' in scopes) return back('invalid_scope', scopes.error)

  const id = newId('oauthRequest')
  const now = services.now()
  await services.db.insert(oauthRequests).values({
    id,
    clientId: client.client_id,
    redirectUri,
    scopes,
    resource,
    state: state ?? null,
    codeChallenge: q.code_challenge,
    expiresAt: new Date(now + CONSENT_TTL_MS),
    createdAt: new Date(now),
  })
  return { kind: 'redirect', location: `${CONSENT_PAGE_PATH}?request_id=${id}` }
}
