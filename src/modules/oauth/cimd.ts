// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, which the MCP
// authorization spec prefers to registration): a client_id that is an https URL names a JSON document of
// RFC 7591 metadata that the client publishes itself. We fetch it, keep what the consent page and the
// authorize endpoint need, and cache it.
//
// The URL is chosen by whoever sends the client_id, so the fetch is guarded against SSRF (public-fetch.ts).
//
// A document declares either no client authentication (`none`: a public client, PKCE binds its codes)
// or `private_key_jwt` with its public keys, inline (`jwks`) or at `jwks_uri` (ChatGPT's does): that
// client then signs a client assertion at the token endpoint (client-auth.ts). A shared secret cannot
// be agreed with a document, so every other method is refused.
import type { JSONWebKeySet } from 'jose'
import type { Config } from '../../../core/config'
import { TtlCache } from '../../../core/ttl-cache'
import { hostKind } from '../../lib/hosts'
import { OAuthError } from '../../plugins/oauth-errors'
import type { Services } from '../../services'
import { fetchPublicJson, type FetchOptions } from './public-fetch'
import { checkRedirectUri } from './register'

/** As registration (register.ts): a URL a browser handles, and a name that fits the consent page. */
const MAX_URL_LENGTH = 2048
const MAX_REDIRECT_URIS = 10
const MAX_TEXT = 200
const MAX_SCOPE_LENGTH = 1000
const MAX_KEYS = 20
/** RFC 6749 3.3 scope-token: printable ASCII but space, '"' and '\'. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/
/**
 * A refusal is remembered this long, so a hostile client_id cannot make us fetch in a loop. (The draft
 * says not to cache error responses: none is ever used as metadata; a fixed document waits 30 s.)
 */
const FAILURE_TTL_MS = 30_000
const CACHE_ENTRIES = 1000

/**
 * The JWS algorithms a client assertion (RFC 7523) may be signed with: asymmetric only. Taking `alg`
 * from the assertion's own header with no list would admit `none`, or HS256 "signed" with the public key.
 */
export const ASSERTION_ALGORITHMS: readonly string[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

/** How the client authenticates at the token endpoint. */
export type ClientAuth = { method: 'none' } | { method: 'private_key_jwt'; jwks: JSONWebKeySet | null; jwks_uri: string | null }

export interface ClientView {
  client_id: string
  client_name: string | null
  redirect_uris: string[]
  /** The scope the document declares, normalized; it may name scopes this server does not have. */
  scope: string | null
  client_uri: string | null
  /** Whether the document lists the refresh_token grant (grant_types; default authorization_code only). */
  refreshable: boolean
  auth: ClientAuth
}

export type { Resolve } from './public-fetch'

export interface CimdOptions extends FetchOptions {
  /** Default: the one cache of this process. */
  cache?: CimdCache
}

const refusal = (description: string) => new OAuthError('invalid_client', description)

/** True for a client_id meant as a metadata document URL (rather than one this server issued). */
export function isMetadataDocumentUrl(clientId: string, config: Pick<Config, 'cimdAllowHttpLoopback'>): boolean {
  if (/^https:\/\//i.test(clientId)) return true
  if (!config.cimdAllowHttpLoopback || !/^http:\/\//i.test(clientId)) return false
  return URL.canParse(clientId) && hostKind(new URL(clientId).hostname) === 'loopback'
}

/** The draft's Client Identifier URL rules (section 3), plus: written exactly as the URL parser writes it. */
function clientIdUrl(clientId: string, allowLoopback: boolean): URL {
  if (clientId.length > MAX_URL_LENGTH) throw refusal(`client_id: a metadata document URL is at most ${MAX_URL_LENGTH} characters.`)
  if (!URL.canParse(clientId)) throw refusal('client_id is not a valid URL.')
  const url = new URL(clientId)
  const testLoopback = allowLoopback && url.protocol === 'http:' && hostKind(url.hostname) === 'loopback'
  if (url.protocol !== 'https:' && !testLoopback) throw refusal('client_id: a metadata document URL must use https.')
  if (url.username !== '' || url.password !== '') throw refusal('client_id: a metadata document URL must not contain credentials.')
  if (clientId.includes('#')) throw refusal('client_id: a metadata document URL must not have a fragment.')
  if (/\/(\.|%2e){1,2}(\/|$)/i.test(clientId.split('?')[0]!)) throw refusal('client_id: a metadata document URL must not contain . or .. path segments.')
  if (url.pathname === '/') throw refusal('client_id: a metadata document URL needs a path, e.g. https://example.com/client.json.')
  // The document must name the URL it was fetched from, compared as strings: fetching the parser's
  // spelling of a URL written otherwise (HTTPS://, :443, %7e) would compare two different strings.
  if (url.href !== clientId) throw refusal('client_id: write the metadata document URL in normalized form (lower-case scheme and host, no default port).')
  return url
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function optionalText(doc: Record<string, unknown>, field: string, check: (value: string) => boolean, rule: string): string | null {
  const value = doc[field]
  if (value === undefined || value === null) return null
  if (typeof value !== 'string' || !check(value)) throw refusal(`client metadata document: ${field} ${rule}`)
  return value
}

/** A URL we may fetch keys from: https (or loopback http under the test setting), no credentials, no fragment. */
function keySetUrl(value: unknown, allowLoopback: boolean): string {
  const invalid = refusal('client metadata document: jwks_uri must be an https URL without credentials or fragment.')
  if (typeof value !== 'string' || value.length > MAX_URL_LENGTH || value.includes('#') || !URL.canParse(value)) throw invalid
  const url = new URL(value)
  const testLoopback = allowLoopback && url.protocol === 'http:' && hostKind(url.hostname) === 'loopback'
  if ((url.protocol !== 'https:' && !testLoopback) || url.username !== '' || url.password !== '') throw invalid
  return url.href
}

/** An inline key set: RFC 7517's {keys: [...]}, each key with its kty (jose checks the rest when it imports them). */
function inlineKeySet(value: unknown): JSONWebKeySet {
  const keys = isObject(value) ? value.keys : undefined
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_KEYS || !keys.every((k) => isObject(k) && typeof k.kty === 'string')) {
    throw refusal(`client metadata document: jwks must be a JWK Set of 1-${MAX_KEYS} keys.`)
  }
  return value as unknown as JSONWebKeySet
}

/** none, or private_key_jwt with exactly one source of keys; any shared-secret method is refused. */
function clientAuth(doc: Record<string, unknown>, allowLoopback: boolean): ClientAuth {
  const method = doc.token_endpoint_auth_method ?? 'none'
  if (method === 'none') return { method: 'none' }
  if (method !== 'private_key_jwt') {
    throw refusal('client metadata document: token_endpoint_auth_method must be none or private_key_jwt (no secret can be agreed with a document).')
  }
  const alg = doc.token_endpoint_auth_signing_alg
  if (alg !== undefined && (typeof alg !== 'string' || !ASSERTION_ALGORITHMS.includes(alg))) {
    throw refusal(`client metadata document: token_endpoint_auth_signing_alg must be one of ${ASSERTION_ALGORITHMS.join(', ')}.`)
  }
  if ((doc.jwks === undefined) === (doc.jwks_uri === undefined)) throw refusal('client metadata document: private_key_jwt needs its public keys, in jwks or at jwks_uri (one of them).')
  if (doc.jwks !== undefined) return { method, jwks: inlineKeySet(doc.jwks), jwks_uri: null }
  return { method, jwks: null, jwks_uri: keySetUrl(doc.jwks_uri, allowLoopback) }
}

/** What a client's document may say, kept as the authorize endpoint, consent page and token endpoint use it. */
function clientView(clientId: string, doc: unknown, allowLoopback: boolean): ClientView {
  if (!isObject(doc)) throw refusal('client metadata document: the document must be a JSON object.')
  if (doc.client_id !== clientId) throw refusal('client metadata document: its client_id must be exactly the URL it is served from.')
  // There is no way to agree on a secret with a document (draft section 4.1).
  if (doc.client_secret !== undefined || doc.client_secret_expires_at !== undefined) throw refusal('client metadata document: must not contain a client_secret.')
  const auth = clientAuth(doc, allowLoopback)
  const uris = doc.redirect_uris
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS) {
    throw refusal(`client metadata document: redirect_uris must list 1-${MAX_REDIRECT_URIS} URIs.`)
  }
  const redirectUris = uris.map((uri) => {
    try {
      return checkRedirectUri(uri)
    } catch (error) {
      throw error instanceof OAuthError ? refusal(`client metadata document: redirect_uris: ${error.description}`) : error
    }
  })
  const name = optionalText(doc, 'client_name', (v) => v.trim() !== '' && v.length <= MAX_TEXT, `must be a string of 1-${MAX_TEXT} characters.`)
  const clientUri = optionalText(doc, 'client_uri', (v) => v.length <= MAX_URL_LENGTH && URL.canParse(v) && new URL(v).protocol === 'https:', 'must be an https URL.')
  const scope = optionalText(doc, 'scope', (v) => v.length <= MAX_SCOPE_LENGTH && v.split(' ').every((s) => s === '' || SCOPE_TOKEN.test(s)), 'must be space-separated scope tokens.')
  const scopes = [...new Set(scope?.split(' ').filter((s) => s !== '') ?? [])]
  return Object.freeze({
    client_id: clientId,
    client_name: name?.trim() ?? null,
    redirect_uris: Object.freeze([...new Set(redirectUris)]) as string[], // frozen: cached views are shared
    scope: scopes.length > 0 ? scopes.join(' ') : null,
    client_uri: clientUri,
    refreshable: Array.isArray(doc.grant_types) && doc.grant_types.includes('refresh_token'),
    auth: Object.freeze(auth),
  })
}

async function load(url: URL, allowLoopback: boolean, options: CimdOptions): Promise<{ value: ClientView; ttlMs: number }> {
  const { json, ttlMs } = await fetchPublicJson(url, allowLoopback, 'client_id: the metadata document', options)
  return { value: clientView(url.href, json, allowLoopback), ttlMs }
}

type Outcome<T> = { value: T } | { error: OAuthError }

/**
 * Documents (or key sets) and refusals by URL, bounded in entries (the oldest goes first) and in age;
 * and the fetches under way, so concurrent lookups of one URL share one fetch.
 */
export class CimdCache<T = ClientView> {
  private readonly settled: TtlCache<Outcome<T>>
  private readonly inFlight = new Map<string, Promise<T>>()

  constructor(maxEntries = CACHE_ENTRIES) {
    this.settled = new TtlCache(maxEntries)
  }

  get(url: string, now: () => number, fetchDocument: () => Promise<{ value: T; ttlMs: number }>): Promise<T> {
    const hit = this.settled.get(url, now())
    if (hit) return 'value' in hit ? Promise.resolve(hit.value) : Promise.reject(hit.error)
    const running = this.inFlight.get(url)
    if (running) return running
    const started = fetchDocument()
      .then(
        ({ value, ttlMs }) => {
          this.settled.set(url, { value }, ttlMs, now())
          return value
        },
        (error: OAuthError) => {
          this.settled.set(url, { error }, FAILURE_TTL_MS, now())
          throw error
        },
      )
      .finally(() => this.inFlight.delete(url))
    this.inFlight.set(url, started)
    return started
  }
}

const processCache = new CimdCache()

/** The client a metadata document URL names, fetched and checked (or cached). Refusals: invalid_client. */
export async function fetchClientMetadataDocument(services: Pick<Services, 'config' | 'now'>, clientId: string, options: CimdOptions = {}): Promise<ClientView> {
  const allowLoopback = services.config.cimdAllowHttpLoopback
  const url = clientIdUrl(clientId, allowLoopback)
  return (options.cache ?? processCache).get(clientId, services.now, () => load(url, allowLoopback, options))
}
