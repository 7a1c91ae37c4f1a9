// at_ and rt_ tokens: what an Agent holds, however it got them (OAuth consent and the token endpoint in
// src/modules/oauth, or minted by the human for the Agent directly). Opaque, stored as their SHA-256
// only; a family is what one grant issued. Every revocation is announced after it commits
// (src/plugins/revocations.ts), so each process drops the verdicts it cached (verdicts.ts).
import type { Db } from '../../db/client'
import { oauthTokens } from '../../db/schema'
import { newId } from '../../lib/ids'
import { hashSecret, newToken } from '../../lib/secrets'

export const ACCESS_TOKEN_TTL_S = 900
/** A refresh token lives 30 days from its issue; each rotation starts a new one. */
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 3600

export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token?: string
  scope: string
}

type Tx = Pick<Db, 'insert'>

export interface Issue {
  accountId: string
  agentId: string
  clientId: string | null
  scopes: readonly string[]
  /** The refresh token's scopes when they differ from the access token's (a refresh that narrowed `scope`). */
  refreshScopes?: readonly string[]
  resource: string
  familyId: string
  refresh: boolean
  accessTtlS?: number
}

/** Stores a new at_ (and rt_) of a family; the tokens in clear are returned once. */
export async function issueTokens(tx: Tx, issue: Issue, nowMs: number): Promise<TokenResponse> {
  const access = newToken('access')
  const accessTtlS = issue.accessTtlS ?? ACCESS_TOKEN_TTL_S
  const common = {
    familyId: issue.familyId,
    accountId: issue.accountId,
    agentId: issue.agentId,
    clientId: issue.clientId,
    scopes: [...issue.scopes],
    resource: issue.resource,
    createdAt: new Date(nowMs),
  }
  const rows: (typeof oauthTokens.$inferInsert)[] = [{ ...common, id: newId('oauthToken'), tokenHash: hashSecret(access), kind: 'access', expiresAt: new Date(nowMs + accessTtlS * 1000) }]
  let refresh: string | undefined
  if (issue.refresh) {
    refresh = newToken('refresh')
    rows.push({
      ...common,
      scopes: [...(issue.refreshScopes ?? issue.scopes)],
      id: newId('oauthToken'),
      tokenHash: hashSecret(refresh),
      kind: 'refresh',
      expiresAt: new Date(nowMs + REFRESH_TOKEN_TTL_S * 1000),
    })
  }
  await tx.insert(oauthTokens).values(rows)
  return { access_token: access, token_type: 'Bearer', expires_in: accessTtlS, ...(refresh && { refresh_token: refresh }), scope: issue.scopes.join(' ') }
}
