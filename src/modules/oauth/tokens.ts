// POST /oauth/token and POST /oauth/revoke (RFC 6749, 7636, 8707, 7009). What they hand out are the
// Agent's at_ and rt_ tokens (src/modules/agents/tokens.ts); a family is what one grant issued (the
// code's exchange and each rotation after it).
//
// - authorization_code: the code is used once, within 60 s, by the client it was issued to, with its
//   redirect URI, its PKCE verifier (S256) and its resource. A replayed code revokes the family it issued.
// - refresh_token: rotation. The presented token is marked rotated and a new pair is issued in the same
//   family; a rotated token presented again (stolen, or a client bug) revokes the whole family.
// Every revocation is announced on REVOCATION_CHANNEL after it commits, so each process drops the
// verdicts it cached (src/modules/agents/verdicts.ts).
import { createHash } from 'node:crypto'
import { and, eq, isNull } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { agents, oauthCodes, oauthTokens } from '../../db/schema'
import { hashSecret, tokenKind } from '../../lib/secrets'
import { OAuthError } from '../../plugins/oauth-errors'
import type { Services } from '../../services'
import { announceRevocation } from '../../plugins/revocations'
import { issueTokens, type TokenResponse } from '../agents/tokens'
import { narrowResource, resolveResource } from '../agents/audience'
import { assertedClientId, authenticateClient } from './client-auth'
import { loadClient, type OAuthClient } from './clients'
import { markClientUsed } from './unused-clients'

type Tx = Pick<Db, 'insert' | 'update' | 'select'>
type Form = Record<string, string | string[] | undefined>

/** A form parameter sent at most once (RFC 6749 3.2: parameters must not be repeated). */
function param(form: Form, name: string): string | undefined {
  const value = form[name]
  if (Array.isArray(value)) throw new OAuthError('invalid_request', `${name} is repeated.`)
  return value === undefined || value === '' ? undefined : value
}

function required(form: Form, name: string): string {
  const value = param(form, name)
  if (value === undefined) throw new OAuthError('invalid_request', `${name} is missing.`)
  return value
}

/**
 * The client_id: in the body, or as the user name of HTTP Basic (some libraries do), or the issuer of
 * the client assertion (RFC 7523 3: client_id may be left out; the assertion is verified as that client's).
 */
function clientIdOf(form: Form, authorization: string | null): string {
  const inBody = param(form, 'client_id') ?? assertedClientId(param(form, 'client_assertion'))
  if (inBody !== undefined) return inBody
  const basic = authorization ? /^Basic +([A-Za-z0-9+/=]+)$/i.exec(authorization)?.[1] : undefined
  if (basic) {
    const user = Buffer.from(basic, 'base64').toString('utf8').split(':', 1)[0]
    if (user) return decodeURIComponent(user)
  }
  throw new OAuthError('invalid_request', 'client_id is missing.')
}

async function revokeFamily(tx: Tx, familyId: string, now: Date): Promise<void> {
  await tx
    .update(oauthTokens)
    .set({ revokedAt: now })
    .where(and(eq(oauthTokens.familyId, familyId), isNull(oauthTokens.revokedAt)))
}

/** RFC 7636 S256: BASE64URL(SHA256(verifier)) = challenge; the verifier is 43-128 unreserved characters. */
function pkceHolds(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false
  return createHash('sha256').update(verifier).digest('base64url') === challenge
}

const grantFailed = (description: string) => new OAuthError('invalid_grant', description)

type TokenServices = Pick<Services, 'db' | 'config' | 'now' | 'kv' | 'limiter'>

/** The client of a token request, authenticated as it declared (client-auth.ts); unknown is invalid_client. */
async function authenticatedClient(services: TokenServices, form: Form, clientId: string): Promise<OAuthClient> {
  const client = await loadClient(services, clientId)
  if (!client) throw new OAuthError('invalid_client', 'Unknown client_id.', 401)
  await authenticateClient(services, client, { type: param(form, 'client_assertion_type'), assertion: param(form, 'client_assertion') })
  return client
}

async function exchangeCode(services: TokenServices, form: Form, client: OAuthClient): Promise<TokenResponse> {
  const clientId = client.client_id
  const code = required(form, 'code')
  const verifier = required(form, 'code_verifier')
  const redirectUri = param(form, 'redirect_uri')
  const resource = param(form, 'resource')
  const now = services.now()
  let replayedFamily: string | null = null
  const result = await services.db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(oauthCodes)
      .where(eq(oauthCodes.codeHash, hashSecret(code)))
      .for('update')
      .limit(1)
    if (!row || row.clientId !== clientId) throw grantFailed('The code is unknown, or was issued to another client.')
    if (row.usedAt !== null) {
      // RFC 6749 4.1.2 / OAuth 2.1: a code used twice revokes what its first use issued.
      await revokeFamily(tx, row.familyId, new Date(now))
      replayedFamily = row.familyId
      return null
    }
    if (row.expiresAt.getTime() <= now) throw grantFailed('The code expired (codes live 60 seconds); authorize again.')
    if (redirectUri !== undefined && redirectUri !== row.redirectUri) throw grantFailed('redirect_uri differs from the one of the authorization request.')
    if (!pkceHolds(verifier, row.codeChallenge)) throw grantFailed('code_verifier does not match the code_challenge.')
    const audience = narrowResource(services.config, row.resource, resource)
    if (audience === null)
      throw new OAuthError('invalid_target', `resource must be ${row.resource}, the one the code was issued for${row.resource === services.config.publicApiUrl ? `, or ${row.resource}/mcp` : ''}.`)
    await tx
      .update(oauthCodes)
      .set({ usedAt: new Date(now) })
      .where(eq(oauthCodes.codeHash, row.codeHash))
    await markClientUsed(tx, clientId, new Date(now))
    const [agent] = await tx.select({ status: agents.status, scopes: agents.scopes }).from(agents).where(eq(agents.id, row.agentId)).limit(1)
    if (agent?.status !== 'active') throw grantFailed('The Agent of this grant was stopped by the account owner.')
    const scopes = row.scopes.filter((s) => agent.scopes.includes(s))
    return issueTokens(
      tx,
      {
        accountId: row.accountId,
        agentId: row.agentId,
        clientId,
        scopes,
        resource: audience,
        familyId: row.familyId,
        refresh: client.refreshable || scopes.includes('offline_access'),
      },
      now,
    )
  })
  if (result === null) {
    await announceRevocation(services, `family:${replayedFamily}`)
    throw grantFailed('The code was already used; the tokens it issued are revoked.')
  }
  return result
}

async function refresh(services: TokenServices, form: Form, clientId: string): Promise<TokenResponse> {
  const presented = required(form, 'refresh_token')
  const scope = param(form, 'scope')
  const resource = param(form, 'resource')
  const now = services.now()
  let reusedFamily: string | null = null
  const result = await services.db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(oauthTokens)
      .where(and(eq(oauthTokens.tokenHash, hashSecret(presented)), eq(oauthTokens.kind, 'refresh')))
      .for('update')
      .limit(1)
    if (!row || row.clientId !== clientId) throw grantFailed('The refresh token is unknown, or was issued to another client.')
    if (row.revokedAt !== null) throw grantFailed('The refresh token was revoked.')
    if (row.rotatedAt !== null) {
      await revokeFamily(tx, row.familyId, new Date(now))
      reusedFamily = row.familyId
      return null
    }
    if (row.expiresAt.getTime() <= now) throw grantFailed('The refresh token expired; authorize again.')
    // A refresh keeps the audience its grant was issued for: never wider, and asked for again as it was.
    if (resource !== undefined && resolveResource(services.config, resource) !== row.resource) throw new OAuthError('invalid_target', `resource must be ${row.resource}.`)
    const [agent] = await tx.select({ status: agents.status, scopes: agents.scopes }).from(agents).where(eq(agents.id, row.agentId)).limit(1)
    if (agent?.status !== 'active') throw grantFailed('The Agent of this grant was stopped by the account owner.')
    const granted = row.scopes.filter((s) => agent.scopes.includes(s))
    let scopes = granted
    if (scope !== undefined) {
      const asked = [...new Set(scope.split(' ').filter((s) => s !== ''))]
      const outside = asked.find((s) => !granted.includes(s))
      if (outside !== undefined) throw new OAuthError('invalid_scope', `${outside.slice(0, 40)} was not granted to this refresh token.`)
      scopes = asked
    }
    await tx
      .update(oauthTokens)
      .set({ rotatedAt: new Date(now) })
      .where(eq(oauthTokens.id, row.id))
    // RFC 6749 6: `scope` narrows the access token; the new refresh token keeps the grant's scopes.
    return issueTokens(tx, { accountId: row.accountId, agentId: row.agentId, clientId, scopes, refreshScopes: granted, resource: row.resource, familyId: row.familyId, refresh: true }, now)
  })
  if (result === null) {
    await announceRevocation(services, `family:${reusedFamily}`)
    throw grantFailed('The refresh token was already used; every token of its grant is revoked. Authorize again.')
  }
  return result
}

/** POST /oauth/token. */
export async function tokenRequest(services: TokenServices, form: Form, authorization: string | null): Promise<TokenResponse> {
  const grantType = required(form, 'grant_type')
  const clientId = clientIdOf(form, authorization)
  if (grantType !== 'authorization_code' && grantType !== 'refresh_token') throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.')
  const client = await authenticatedClient(services, form, clientId)
  return grantType === 'authorization_code' ? exchangeCode(services, form, client) : refresh(services, form, client.client_id)
}

/**
 * POST /oauth/revoke (RFC 7009): an access token alone, or a refresh token with its whole family (the
 * access tokens of the same grant included). Unknown, expired or already revoked tokens answer 200 too;
 * a token of another client is refused.
 */
export async function revokeRequest(services: TokenServices, form: Form, authorization: string | null): Promise<void> {
  const token = required(form, 'token')
  const clientId = clientIdOf(form, authorization)
  // RFC 7009 2.1: a client that authenticates does so here too. An unknown client_id is not refused:
  // the token's own client is checked below, and an unknown token is a 200 whoever asks.
  const client = await loadClient(services, clientId)
  if (client) await authenticateClient(services, client, { type: param(form, 'client_assertion_type'), assertion: param(form, 'client_assertion') })
  const hint = param(form, 'token_type_hint')
  if (hint !== undefined && hint !== 'access_token' && hint !== 'refresh_token') {
    throw new OAuthError('unsupported_token_type', 'token_type_hint must be access_token or refresh_token.')
  }
  const kind = tokenKind(token)
  if (kind !== 'access' && kind !== 'refresh') return
  const hash = hashSecret(token)
  const [row] = await services.db.select().from(oauthTokens).where(eq(oauthTokens.tokenHash, hash)).limit(1)
  if (!row) return
  if (row.clientId !== clientId) throw new OAuthError('invalid_client', 'This token was not issued to this client.', 401)
  const now = new Date(services.now())
  if (row.kind === 'refresh') {
    await revokeFamily(services.db, row.familyId, now)
    await announceRevocation(services, `family:${row.familyId}`)
  } else {
    await services.db
      .update(oauthTokens)
      .set({ revokedAt: now })
      .where(and(eq(oauthTokens.id, row.id), isNull(oauthTokens.revokedAt)))
    await announceRevocation(services, `token:${hash}`)
  }
}
