// mk_ API keys: shown once, stored as their hash (src/lib/secrets.ts). Authenticating a key also loads
// its account. A key found live is reused for KEY_VERDICT_TTL_MS without asking Postgres again: a key is
// revoked by setting revoked_at in Postgres (no route announces it), so that TTL is how long a revoked
// key may still be accepted, by any process. A change this process makes to an account (an upgrade)
// drops its keys at once (announceRevocation `account:<id>`).
import { and, eq, isNull } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { accounts, apiKeys } from '../../db/schema'
import { ApiError } from '../../plugins/errors'
import type { AccountPrincipal, Principal } from '../../plugins/auth'
import type { Services } from '../../services'
import { limitCredential } from './request-limit'
import { newId } from '../../lib/ids'
import { hashSecret, newToken, TOKEN_PREFIXES } from '../../lib/secrets'
import { TtlCache } from '../../core/ttl-cache'
import { onLocalRevocation } from '../../plugins/revocations'

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

/**
 * How long a live key is trusted without Postgres: the bound for a revocation to reach every
 * process (1 s). At 10 requests a second per key that is nine lookups saved of ten.
 */
export const KEY_VERDICT_TTL_MS = 1_000
const MAX_KEY_VERDICTS = 10_000

type KeyVerdict = AccountPrincipal & { keyId: string }

export interface ApiKeys {
  /** The principal of an mk_ key: a live key of an existing account, within its plan's requests a minute. */
  principal(token: string): Promise<Principal>
}

export function apiKeyVerdicts(services: Services): ApiKeys {
  // Only keys found live are kept (by hash, never the key): an unknown or revoked key asks Postgres each time.
  const verdicts = new TtlCache<KeyVerdict>(MAX_KEY_VERDICTS)
  onLocalRevocation(services, (message) => {
    // Only an account's own changes concern keys; anything else (an Agent, a token family) does not.
    if (message === '*' || message.startsWith('account:')) verdicts.clear()
  })

  async function lookup(hash: string): Promise<KeyVerdict> {
    const now = services.now()
    const cached = verdicts.get(hash, now)
    if (cached) return cached
    const [row] = await services.db
      .select({ id: accounts.id, email: accounts.email, plan: accounts.plan, keyId: apiKeys.id })
      .from(apiKeys)
      .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
      .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
      .limit(1)
    if (!row) throw new ApiError('UNAUTHORIZED', 'Unknown or revoked API key.')
    verdicts.set(hash, row, KEY_VERDICT_TTL_MS, now)
    return row
  }

  return {
    async principal(token) {
      const { keyId, ...account } = await lookup(hashSecret(token))
      const credentialId = `mk:${keyId}`
      // Counted on every request, cached verdict or not.
      return { kind: 'account', account, rateHeaders: await limitCredential(services, credentialId, account.plan), credentialId }
    },
  }
}
