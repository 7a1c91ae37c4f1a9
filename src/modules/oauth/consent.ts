// The human's side of an authorization: reading a consent request and deciding it. Used by the API pair
// (GET /api/v1/oauth/request/{id}, POST /api/v1/oauth/approve: API key or signed-in session) and by the
// consent page. An approval creates (or reuses) the Agent of (account, client) and a single-use code.
//
// A pending request belongs to nobody yet: whoever holds its unguessable id (the human the client sent
// to the consent page) may decide it. Once decided it is the deciding account's; to any other account
// it is "not found".
import { and, eq } from 'drizzle-orm'
import { oauthCodes, oauthRequests } from '../../db/schema'
import { isId, newId } from '../../lib/ids'
import { hashSecret, randomBase64url } from '../../lib/secrets'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { agentForClient } from '../agents/service'
import { issuerOf, withParams } from './authorize'
import { loadClient } from './clients'

/** An authorization code lives 60 s and is used once. */
export const CODE_TTL_MS = 60_000
const CODE_BYTES = 32

export type ConsentStatus = 'pending' | 'approved' | 'denied' | 'expired'

export interface ConsentView {
  request_id: string
  client: { client_id: string; client_name: string | null; redirect_uri: string }
  scopes: string[]
  resource: string
  status: ConsentStatus
  expires_at: string
}

type RequestRow = typeof oauthRequests.$inferSelect

function statusOf(row: RequestRow, now: number): ConsentStatus {
  if (row.status === 'pending' && row.expiresAt.getTime() <= now) return 'expired'
  return row.status
}

async function visibleRequest(services: Pick<Services, 'db'>, accountId: string, requestId: string): Promise<RequestRow> {
  if (!isId('oauthRequest', requestId)) throw new ApiError('OAUTH_REQUEST_NOT_FOUND')
  const [row] = await services.db.select().from(oauthRequests).where(eq(oauthRequests.id, requestId)).limit(1)
  if (!row || (row.accountId !== null && row.accountId !== accountId)) throw new ApiError('OAUTH_REQUEST_NOT_FOUND')
  return row
}

export async function consentView(services: Pick<Services, 'db' | 'config' | 'now'>, accountId: string, requestId: string): Promise<ConsentView> {
  const row = await visibleRequest(services, accountId, requestId)
  const client = await loadClient(services, row.clientId)
  return {
    request_id: row.id,
    client: { client_id: row.clientId, client_name: client?.client_name ?? null, redirect_uri: row.redirectUri },
    scopes: row.scopes,
    resource: row.resource,
    status: statusOf(row, services.now()),
    expires_at: row.expiresAt.toISOString(),
  }
}

export interface ConsentDecision {
  request_id: string
  approve: boolean
  /** A subset of the requested scopes; absent: all of them. */
  scopes?: string[]
}

/**
 * Decides a pending request once (the row is locked: two decisions race to one winner, the other gets
 * 409) and returns where the human's browser goes next: the client's redirect URI with a code, or with
 * error=access_denied.
 */
export async function decideConsent(services: Pick<Services, 'db' | 'config' | 'now'>, accountId: string, decision: ConsentDecision): Promise<{ redirect_to: string }> {
  const seen = await visibleRequest(services, accountId, decision.request_id)
  // Read before the transaction: PGlite has one connection, which the transaction holds.
  const client = await loadClient(services, seen.clientId)
  const iss = issuerOf(services)
  const now = new Date(services.now())
  return services.db.transaction(async (tx) => {
    const [row] = await tx.select().from(oauthRequests).where(eq(oauthRequests.id, decision.request_id)).for('update').limit(1)
    if (!row || (row.accountId !== null && row.accountId !== accountId)) throw new ApiError('OAUTH_REQUEST_NOT_FOUND')
    const status = statusOf(row, now.getTime())
    if (status !== 'pending') throw new ApiError('OAUTH_REQUEST_DECIDED', `This consent request is ${status}; the client has to start the authorization again.`)
    const state = row.state ?? undefined
    const deny = async (description: string) => {
      await tx.update(oauthRequests).set({ status: 'denied', accountId, decidedAt: now }).where(eq(oauthRequests.id, row.id))
      return { redirect_to: withParams(row.redirectUri, { error: 'access_denied', error_description: description, state, iss }) }
    }
    if (!decision.approve) return deny('The user denied the request.')

    const scopes = [...new Set(decision.scopes ?? row.scopes)]
    const outside = scopes.find((s) => !row.scopes.includes(s))
    if (outside !== undefined) throw new ApiError('VALIDATION_FAILED', `body.scopes: ${outside.slice(0, 40)} was not requested; choose among ${row.scopes.join(' ')}.`)
    if (scopes.length === 0) throw new ApiError('VALIDATION_FAILED', 'body.scopes: choose at least one scope, or deny the request.')
    if (!client) return deny('The client no longer exists.')
    const agent = await agentForClient(tx, accountId, client, scopes, now)
    if (agent.status !== 'active') return deny("This client's Agent was stopped by the account owner; it gets no new tokens.")

    const code = randomBase64url(CODE_BYTES)
    await tx.insert(oauthCodes).values({
      codeHash: hashSecret(code),
      requestId: row.id,
      clientId: row.clientId,
      accountId,
      agentId: agent.id,
      redirectUri: row.redirectUri,
      codeChallenge: row.codeChallenge,
      resource: row.resource,
      scopes,
      familyId: newId('tokenFamily'),
      expiresAt: new Date(now.getTime() + CODE_TTL_MS),
      createdAt: now,
    })
    await tx
      .update(oauthRequests)
      .set({ status: 'approved', accountId, decidedAt: now })
      .where(and(eq(oauthRequests.id, row.id), eq(oauthRequests.status, 'pending')))
    return { redirect_to: withParams(row.redirectUri, { code, state, iss }) }
  })
}
