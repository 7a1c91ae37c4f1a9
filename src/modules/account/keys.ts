// mk_ API keys: shown once, stored as SHA-256 (a key is 256 random bits, so a fast hash is enough; a
// slow password hash would only cost every request). Authenticating a key also loads its account.
import { and, eq, isNull } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { accounts, apiKeys, type Plan } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { hashToken, randomId } from '../guest/service'

export const API_KEY_PREFIX = 'mk_'
/** 32 random bytes: 43 base64url characters after the prefix. */
const KEY_BYTES = 32
/** Characters of a key kept in clear to tell keys apart ("mk_AbCd…"). */
const KEY_START = 7

export interface AccountPrincipal {
  id: string
  email: string
  plan: Plan
  keyId: string
}

type Tx = Pick<Db, 'insert'>

/** Creates a key for an account inside the caller's transaction; returns the key in clear, once. */
export async function createApiKey(tx: Tx, accountId: string, now: Date): Promise<string> {
  const key = randomId(API_KEY_PREFIX, KEY_BYTES)
  await tx.insert(apiKeys).values({ id: randomId('key_'), accountId, keyHash: hashToken(key), start: key.slice(0, KEY_START), createdAt: now })
  return key
}

export async function authenticateApiKey(services: Services, key: string): Promise<AccountPrincipal> {
  const [row] = await services.db
    .select({ id: accounts.id, email: accounts.email, plan: accounts.plan, keyId: apiKeys.id })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(and(eq(apiKeys.keyHash, hashToken(key)), isNull(apiKeys.revokedAt)))
    .limit(1)
  if (!row) throw new ApiError('UNAUTHORIZED', 'Unknown or revoked API key.')
  return row
}
