// Dynamic client registration (RFC 7591) for public clients, the way AI clients (MCP hosts) register
// themselves. There is no client secret: whatever token_endpoint_auth_method a client asks for (real
// clients send client_secret_post) it is registered as "none", and the answer says so; PKCE (S256) at
// authorization is what binds a code to its client.
//
// Redirect URIs (RFC 8252): https anywhere; http only on a loopback host (any port: native apps listen on
// one they choose); or a private-use scheme. RFC 8252 7.1 recommends reverse-DNS names for those, but
// real hosts do not all follow it (`cursor://anysphere.cursor-mcp/…`, `vscode://…`), so any scheme
// passes except those a browser runs or handles itself (javascript:, data:, file:, …). Never a fragment.
// One refused URI refuses the registration: a client must not find out later which of its URIs work.
//
// Grant types (RFC 7591 3.2.1): the server may register less than was asked and says so in its answer.
// Hosts list grants this server lacks (Claude's jwt-bearer, VS Code's device_code); those are dropped,
// and only a registration left without authorization_code is refused.
import { oauthClients } from '../../db/schema'
import { hostKind } from '../../lib/hosts'
import { newId } from '../../lib/ids'
import { OAuthError } from '../../plugins/oauth-errors'
import type { Services } from '../../services'
import { isScope } from '../../lib/agent-access'

const MAX_REDIRECT_URIS = 10
const MAX_URI_LENGTH = 2048
const MAX_TEXT = 200
const GRANT_TYPES = new Set(['authorization_code', 'refresh_token'])
/** Schemes a browser runs, reads locally or handles itself: never a place to send a code. */
const BROWSER_SCHEMES = new Set(['javascript', 'data', 'file', 'blob', 'about', 'vbscript', 'filesystem', 'view-source', 'ftp', 'ws', 'wss', 'mailto'])

export interface RegisteredClient {
  client_id: string
  client_id_issued_at: number
  client_name?: string
  redirect_uris: string[]
  grant_types: string[]
  response_types: ['code']
  token_endpoint_auth_method: 'none'
  scope?: string
  client_uri?: string
  logo_uri?: string
  software_id?: string
  software_version?: string
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function metadataError(description: string): OAuthError {
  return new OAuthError('invalid_client_metadata', description)
}

/** An optional text field: absent, or a string of 1..MAX_TEXT characters. */
function text(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_TEXT) throw metadataError(`${field} must be a string of 1-${MAX_TEXT} characters.`)
  return value.trim()
}

/** An optional https URL (client_uri, logo_uri: shown to the human, so never http or a script). */
function httpsUrl(body: Record<string, unknown>, field: string): string | undefined {
  const value = text({ [field]: body[field] }, field)
  if (value === undefined) return undefined
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw metadataError(`${field} must be an absolute https URL.`)
  }
  if (url.protocol !== 'https:') throw metadataError(`${field} must be an https URL.`)
  return url.href
}

/** One redirect URI checked against RFC 8252's three kinds; returned as given (matched exactly later). */
export function checkRedirectUri(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_URI_LENGTH) {
    throw new OAuthError('invalid_redirect_uri', `each redirect URI must be a string of at most ${MAX_URI_LENGTH} characters.`)
  }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new OAuthError('invalid_redirect_uri', 'a redirect URI must be absolute.')
  }
  if (url.hash !== '' || raw.includes('#')) throw new OAuthError('invalid_redirect_uri', 'a redirect URI must not have a fragment.')
  const scheme = url.protocol.slice(0, -1)
  if (scheme === 'https') {
    if (url.hostname === '') throw new OAuthError('invalid_redirect_uri', 'an https redirect URI needs a host.')
    return raw
  }
  if (scheme === 'http') {
    if (hostKind(url.hostname) !== 'loopback') throw new OAuthError('invalid_redirect_uri', 'http is allowed only on a loopback host (127.0.0.1, [::1], localhost); use https.')
    return raw
  }
  if (!BROWSER_SCHEMES.has(scheme)) return raw // a private-use scheme (the URL parser has checked its syntax)
  throw new OAuthError('invalid_redirect_uri', `the scheme ${scheme.slice(0, 40)}: is not allowed; use https, http on loopback, or a private-use scheme such as com.example.app:.`)
}

/** The grants asked for that this server has; the others are dropped (the answer lists what was kept). */
function grantTypes(body: Record<string, unknown>): string[] {
  const value = body.grant_types ?? ['authorization_code']
  if (!Array.isArray(value) || !value.every((g) => typeof g === 'string')) throw metadataError('grant_types must be a list of grant type names.')
  const kept = [...new Set(value as string[])].filter((g) => GRANT_TYPES.has(g))
  if (!kept.includes('authorization_code')) throw metadataError('grant_types must include authorization_code (this server supports authorization_code and refresh_token).')
  return kept
}

function responseTypes(body: Record<string, unknown>): void {
  const value = body.response_types ?? ['code']
  if (!Array.isArray(value) || value.length !== 1 || value[0] !== 'code') throw metadataError('response_types must be ["code"].')
}

function scope(body: Record<string, unknown>): string | undefined {
  const value = body.scope
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw metadataError('scope must be a space-separated string.')
  const scopes = [...new Set(value.split(' ').filter((s) => s !== ''))]
  const unknown = scopes.find((s) => !isScope(s))
  if (unknown !== undefined) throw metadataError(`unknown scope ${unknown.slice(0, 40)}; see scopes_supported.`)
  return scopes.length > 0 ? scopes.join(' ') : undefined
}

/** Validates RFC 7591 metadata and stores the client. */
export async function registerClient(services: Pick<Services, 'db' | 'now'>, body: unknown): Promise<RegisteredClient> {
  if (!isObject(body)) throw metadataError('the body must be a JSON object of client metadata.')
  const uris = body.redirect_uris
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS) {
    throw new OAuthError('invalid_redirect_uri', `redirect_uris must list 1-${MAX_REDIRECT_URIS} URIs.`)
  }
  const redirectUris = [...new Set(uris.map(checkRedirectUri))]
  responseTypes(body)
  const client = {
    id: newId('oauthClient'),
    clientName: text(body, 'client_name') ?? null,
    redirectUris,
    grantTypes: grantTypes(body),
    scope: scope(body) ?? null,
    clientUri: httpsUrl(body, 'client_uri') ?? null,
    logoUri: httpsUrl(body, 'logo_uri') ?? null,
    softwareId: text(body, 'software_id') ?? null,
    softwareVersion: text(body, 'software_version') ?? null,
    createdAt: new Date(services.now()),
  }
  await services.db.insert(oauthClients).values(client)
  return {
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    ...(client.clientName && { client_name: client.clientName }),
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...(client.scope && { scope: client.scope }),
    ...(client.clientUri && { client_uri: client.clientUri }),
    ...(client.logoUri && { logo_uri: client.logoUri }),
    ...(client.softwareId && { software_id: client.softwareId }),
    ...(client.softwareVersion && { software_version: client.softwareVersion }),
  }
}
