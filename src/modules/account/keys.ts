// mk_ API keys: shown once, stored as their hash (src/lib/secrets.ts). Authenticating a key also loads
// its account.
import { and, eq, isNull } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { accounts, apiKeys } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { AccountPrincipal, Principal } from '../../plugins/auth'
import type { Services } from '../../services'
import { limitCredential } from './request-limit'
import { newId } from '../../lib/ids'
import { hashSecret, newToken, TOKEN_PREFIXES } from '../../lib/secrets'

export const API_KEY_PREFIX = TOKEN_PREFIXES.apiKey
/** Characters of a key kept in clear to tell keys apart ("mk_AbCd…"). */
const KEY_START = 7

type Tx = Pick<Db, 'insert'>

/** Creates a key for an account inside the caller's transaction; returns the key in clear, once. */
export async function createApiKey(tx: Tx, accountId: string, now: Date): Promise<string> {
  const key = newToken('apiKey')
  await tx.insert(apiKeys).values({ id: newId('apiKey'), accountId, keyHash: hashSecret(key), start: key.slice(0, KEY_START), createdAt: now })
  return key
}

async function authenticateApiKey(services: Services, key: string): Promise<AccountPrincipal & { keyId: string }> {
  const [row] = await services.db
    .select({ id: accounts.id, email: accounts.email, plan: accounts.plan, keyId: apiKeys.id })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(and(eq(apiKeys.keyHash, hashSecret(key)), isNull(apiKeys.revokedAt)))
    .limit(1)
  if (!row) throw new ApiError('UNAUTHORIZED', 'Unknown or revoked API key.')
  return row
}

/** The principal of an mk_ key: a live key of an existing account, within its plan's requests a minute. */
export async function apiKeyPrincipal(services: Services, token: string): Promise<Principal> {
  const { keyId, ...account } = await authenticateApiKey(services, token)
  const credentialId = `mk:${keyId}`
  return { kind: 'account', account, rateHeaders: await limitCredential(services, credentialId, account.plan), credentialId }
}
