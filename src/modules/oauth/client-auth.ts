// Client authentication at the token and revocation endpoints. Registered clients, and metadata-document
// clients that declare `none`, are public: the client_id names them and PKCE binds their codes. A
// document that declares private_key_jwt (ChatGPT's does) makes its client prove itself on every token
// request with a client assertion (RFC 7523 2.2 and 3): a JWT signed with one of the document's keys,
// iss = sub = the client_id, aud = the token endpoint or the issuer, exp within minutes, and a jti used
// once. Verified with jose; the key set at jwks_uri is fetched under the SSRF guard of the documents.
import { createHash } from 'node:crypto'
import { createLocalJWKSet, decodeJwt, errors as jose, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose'
import { OAuthError } from '../../plugins/oauth-errors'
import type { Services } from '../../services'
import { ASSERTION_ALGORITHMS, CimdCache } from './cimd'
import type { OAuthClient } from './clients'
import { fetchPublicJson } from './public-fetch'

export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
/** Clock difference tolerated between the client and us, on exp, nbf and iat. */
const CLOCK_TOLERANCE_S = 30
/** "exp in the near future": an assertion is made for one request; a long-lived one is a stolen-token risk. */
const MAX_LIFETIME_S = 600
const MAX_KEYS = 20
const MAX_JTI_LENGTH = 256

/** Key sets by jwks_uri: cached like the documents (max-age within 1 min-1 h; refusals 30 s). */
const keySets = new CimdCache<JSONWebKeySet>()

export interface Assertion {
  type: string | undefined
  assertion: string | undefined
}

const refused = (why: string) => new OAuthError('invalid_client', `Client authentication failed: ${why}`, 401)

/** The client_id an assertion claims (unverified: it only says which client's keys to verify it with). */
export function assertedClientId(assertion: string | undefined): string | undefined {
  if (assertion === undefined) return undefined
  try {
    const { iss } = decodeJwt(assertion)
    return typeof iss === 'string' && iss !== '' ? iss : undefined
  } catch {
    return undefined
  }
}

async function keySet(services: Pick<Services, 'config' | 'now'>, uri: string): Promise<JSONWebKeySet> {
  try {
    return await keySets.get(uri, services.now, async () => {
      const { json, ttlMs } = await fetchPublicJson(new URL(uri), services.config.cimdAllowHttpLoopback, 'jwks_uri: the key set')
      const keys = (json as { keys?: unknown } | null)?.keys
      if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_KEYS) throw new OAuthError('invalid_client', `jwks_uri: the key set must be a JWK Set of 1-${MAX_KEYS} keys.`)
      return { value: json as JSONWebKeySet, ttlMs }
    })
  } catch (error) {
    throw error instanceof OAuthError ? refused(error.description) : error
  }
}

async function verified(services: Pick<Services, 'config' | 'now'>, client: OAuthClient, assertion: string, keys: JSONWebKeySet): Promise<JWTPayload> {
  const issuer = services.config.publicApiUrl
  try {
    const { payload } = await jwtVerify(assertion, createLocalJWKSet(keys), {
      issuer: client.client_id,
      subject: client.client_id,
      audience: [`${issuer}/oauth/token`, issuer],
      algorithms: [...ASSERTION_ALGORITHMS],
      requiredClaims: ['exp', 'jti'],
      clockTolerance: CLOCK_TOLERANCE_S,
      currentDate: new Date(services.now()),
    })
    return payload
  } catch (error) {
    if (error instanceof jose.JOSEError) throw refused(`${error.message} (${error.code}).`)
    throw refused('the client_assertion is not a valid JWT.')
  }
}

/** Nothing for a public client; for a private_key_jwt one, its assertion verified and its jti spent. */
export async function authenticateClient(services: Pick<Services, 'config' | 'now' | 'limiter'>, client: OAuthClient, sent: Assertion): Promise<void> {
  const auth = client.auth
  if (auth.method === 'none') return
  if (sent.type !== ASSERTION_TYPE || sent.assertion === undefined) {
    throw refused(`this client declares private_key_jwt: send client_assertion_type=${ASSERTION_TYPE} and a signed client_assertion.`)
  }
  const keys = auth.jwks ?? (await keySet(services, auth.jwks_uri!))
  const payload = await verified(services, client, sent.assertion, keys)
  const nowS = services.now() / 1000
  if (payload.exp! > nowS + MAX_LIFETIME_S + CLOCK_TOLERANCE_S) throw refused(`exp must be within ${MAX_LIFETIME_S / 60} minutes.`)
  if (typeof payload.jti !== 'string' || payload.jti === '' || payload.jti.length > MAX_JTI_LENGTH) throw refused('jti must be a non-empty string.')
  // Single use across every process: the first hit on (client, jti) opens a window that lasts until the
  // assertion expires; any later hit in it is a replay. After that, exp refuses the assertion anyway.
  const key = `oauth-jti:${createHash('sha256').update(`${client.client_id} ${payload.jti}`).digest('base64url')}`
  const windowMs = Math.max(1000, (payload.exp! + CLOCK_TOLERANCE_S - nowS) * 1000)
  let first: boolean
  try {
    first = (await services.limiter.hit(key, 1, windowMs)).allowed
  } catch {
    throw new OAuthError('temporarily_unavailable', 'Client assertions cannot be checked for replay right now; retry shortly.', 503, { 'retry-after': '1' })
  }
  if (!first) throw refused('this client_assertion was already used (its jti); sign a new one for each request.')
}
