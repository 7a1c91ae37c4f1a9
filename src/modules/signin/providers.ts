// Sign-in with GitHub or Google: the OAuth 2.0 authorization code flow through arctic's generic client,
// with the endpoints from config (the providers' own unless overridden, which tests do to run this same
// code against a loopback fake). What we take from a provider is one thing: an e-mail address it has
// verified. GitHub: the primary address of /user/emails, when verified. Google: the userinfo endpoint's
// email, when email_verified (fetched with the access token just issued to us over TLS, so no ID token
// signature needs checking).
import { CodeChallengeMethod, OAuth2Client, OAuth2RequestError } from 'arctic'
import type { Config, IdentityProviderConfig } from '../../../core/config'
import { errorSummary } from '../../lib/errors'

export const PROVIDER_NAMES = ['github', 'google'] as const
export type ProviderName = (typeof PROVIDER_NAMES)[number]

export const PROVIDER_LABELS: Record<ProviderName, string> = { github: 'GitHub', google: 'Google' }

/** Budget of each call to a provider (token exchange, e-mail lookup): the person is waiting. */
const PROVIDER_TIMEOUT_MS = 10_000

export interface IdentityProvider {
  readonly name: ProviderName
  /** Whether the flow uses PKCE (Google); the verifier is kept with the state either way. */
  readonly pkce: boolean
  /** Where the browser goes to sign in at the provider. */
  authorizationUrl(state: string, codeVerifier: string): URL
  /**
   * Exchanges the callback's code and returns the verified e-mail address (lower-case), or null when
   * the provider vouches for none. Throws IdentityProviderError.
   */
  verifiedEmail(code: string, codeVerifier: string): Promise<string | null>
}

export class IdentityProviderError extends Error {
  constructor(
    /** refused: the provider turned the code down (stale, reused, forged); unavailable: no usable answer. */
    readonly kind: 'refused' | 'unavailable',
    detail: string,
  ) {
    super(detail)
    this.name = 'IdentityProviderError'
  }
}

/** The callback URL registered at the provider: `<PUBLIC_API_URL>/signin/<name>/callback`. */
export function callbackUrl(config: Pick<Config, 'publicApiUrl'>, name: ProviderName): string {
  return `${config.publicApiUrl}/signin/${name}/callback`
}

/** The configured providers, by name. */
export function identityProviders(config: Pick<Config, 'publicApiUrl' | 'identityProviders'>): Partial<Record<ProviderName, IdentityProvider>> {
  const providers: Partial<Record<ProviderName, IdentityProvider>> = {}
  for (const name of PROVIDER_NAMES) {
    const settings = config.identityProviders[name]
    if (settings) providers[name] = oauthProvider(name, settings, callbackUrl(config, name))
  }
  return providers
}

const SCOPES: Record<ProviderName, string[]> = { github: ['user:email'], google: ['openid', 'email'] }

export function oauthProvider(name: ProviderName, settings: IdentityProviderConfig, redirectUri: string): IdentityProvider {
  const client = new OAuth2Client(settings.clientId, settings.clientSecret, redirectUri)
  const pkce = name === 'google'
  return {
    name,
    pkce,
    authorizationUrl(state, codeVerifier) {
      return pkce
        ? client.createAuthorizationURLWithPKCE(settings.authorizationUrl, state, CodeChallengeMethod.S256, codeVerifier, SCOPES[name])
        : client.createAuthorizationURL(settings.authorizationUrl, state, SCOPES[name])
    },
    async verifiedEmail(code, codeVerifier) {
      const accessToken = await exchange(client, settings.tokenUrl, code, pkce ? codeVerifier : null)
      return name === 'github' ? githubEmail(settings.userUrl, accessToken) : googleEmail(settings.userUrl, accessToken)
    },
  }
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new IdentityProviderError('unavailable', `${what}: no answer within ${PROVIDER_TIMEOUT_MS} ms`)), PROVIDER_TIMEOUT_MS)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

async function exchange(client: OAuth2Client, tokenUrl: string, code: string, codeVerifier: string | null): Promise<string> {
  let tokens: Awaited<ReturnType<OAuth2Client['validateAuthorizationCode']>>
  try {
    tokens = await withTimeout(client.validateAuthorizationCode(tokenUrl, code, codeVerifier), 'token exchange')
  } catch (error) {
    if (error instanceof IdentityProviderError) throw error
    if (error instanceof OAuth2RequestError) throw new IdentityProviderError('refused', `token exchange refused: ${error.code}`)
    throw new IdentityProviderError('unavailable', `token exchange failed: ${errorSummary(error)}`)
  }
  // GitHub answers a refused exchange with 200 and an `error` field, which arctic's generic client
  // hands back as tokens without an access token.
  const data = tokens.data as { error?: unknown; access_token?: unknown }
  if (typeof data.error === 'string') throw new IdentityProviderError('refused', `token exchange refused: ${data.error.slice(0, 60)}`)
  if (typeof data.access_token !== 'string' || data.access_token === '') throw new IdentityProviderError('unavailable', 'token response without an access_token')
  return data.access_token
}

async function getJson(url: string, accessToken: string): Promise<unknown> {
  let response: Response
  try {
    response = await fetch(url, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': 'linkservice-signin' },
      signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
      redirect: 'error',
    })
  } catch (error) {
    throw new IdentityProviderError('unavailable', `${new URL(url).pathname}: ${errorSummary(error)}`)
  }
  if (!response.ok) {
    await response.body?.cancel()
    throw new IdentityProviderError('unavailable', `${new URL(url).pathname}: HTTP ${response.status}`)
  }
  try {
    return await response.json()
  } catch {
    throw new IdentityProviderError('unavailable', `${new URL(url).pathname}: not JSON`)
  }
}

/** GitHub: the primary address, if GitHub has verified it (GET /user/emails, scope user:email). */
async function githubEmail(apiUrl: string, accessToken: string): Promise<string | null> {
  const emails = await getJson(`${apiUrl}/user/emails`, accessToken)
  if (!Array.isArray(emails)) throw new IdentityProviderError('unavailable', '/user/emails: not a list')
  const primary = emails.find((e): e is { email: string; verified: unknown } => typeof e === 'object' && e !== null && e.primary === true && typeof e.email === 'string')
  return primary && primary.verified === true ? primary.email.trim().toLowerCase() : null
}

/** Google: the OpenID Connect userinfo's email, if email_verified. */
async function googleEmail(userinfoUrl: string, accessToken: string): Promise<string | null> {
  const info = (await getJson(userinfoUrl, accessToken)) as { email?: unknown; email_verified?: unknown } | null
  if (typeof info !== 'object' || info === null) throw new IdentityProviderError('unavailable', 'userinfo: not an object')
  const verified = info.email_verified === true || info.email_verified === 'true'
  return verified && typeof info.email === 'string' && info.email !== '' ? info.email.trim().toLowerCase() : null
}
