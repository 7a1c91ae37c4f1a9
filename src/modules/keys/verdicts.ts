// mk_ API keys: shown once, stored as their hash (src/lib/secrets.ts). Authenticating a key also loads
// its account and its scopes (null: the account's full access; otherwise plugins/agent-calls.ts holds
// the key to them, as it does an Agent's token). A key found live is reused for KEY_VERDICT_TTL_MS
// without asking Postgres again: a key is revoked by setting revoked_at in Postgres, so that TTL is how
// long a revoked key may still be accepted by another process. This process drops a key it revokes at
// once (announceRevocation `api-key:<hash>`), and an account's keys when it changes one (an upgrade,
// `account:<id>`). The management routes (list, create, revoke) are index.ts.
import { and, eq, isNull, lt, or } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { accounts, apiKeys } from '../../db/schema'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import { ApiError } from '../../plugins/errors'
import type { AccountPrincipal, KeyGrant, Principal } from '../../plugins/principal'
import type { Services } from '../../services'
import { limitCredential } from '../../plugins/request-limit'
import { newId } from '../../lib/ids'
import { hashSecret, newToken, TOKEN_PREFIXES } from '../../lib/secrets'
import { TtlCache } from '../../../core/ttl-cache'
import { onLocalRevocation } from '../../plugins/revocations'

export const API_KEY_PREFIX = TOKEN_PREFIXES.apiKey
/** Characters of a key kept in clear to tell keys apart ("mk_AbCd…"). */
const KEY_START = 7
/** The name of the key verification creates (and of every key made before keys had names: migration 0011). */
export const DEFAULT_KEY_NAME = 'Default key'

export type ApiKeyRow = typeof apiKeys.$inferSelect
type Tx = Pick<Db, 'insert'>

export interface NewKey {
  name: string
  /** null: the account's full access. */
  scopes: readonly string[] | null
}

/** Creates a key inside the caller's transaction: the key in clear (shown once) and its row. */
export async function insertApiKey(tx: Tx, accountId: string, now: Date, spec: NewKey): Promise<{ key: string; row: ApiKeyRow }> {
  const key = newToken('apiKey')
  const [row] = await tx
    .insert(apiKeys)
    .values({ id: newId('apiKey'), accountId, keyHash: hashSecret(key), start: key.slice(0, KEY_START), name: spec.name, scopes: spec.scopes && [...spec.scopes], createdAt: now })
    .returning()
  return { key, row: row! }
}

/** A full-access key named DEFAULT_KEY_NAME (the one verification gives); returns the key in clear, once. */
export async function createApiKey(tx: Tx, accountId: string, now: Date): Promise<string> {
  return (await insertApiKey(tx, accountId, now, { name: DEFAULT_KEY_NAME, scopes: null })).key
}

/**
 * How long a live key is trusted without Postgres: the bound for a revocation to reach every
 * process (1 s). At 10 requests a second per key that is nine lookups saved of ten.
 */
export const KEY_VERDICT_TTL_MS = 1_000
const MAX_KEY_VERDICTS = 10_000
/**
 * last_used_at is written at most once this often per key: a use is seen when the verdict is looked up
 * (at most once a second per process), and written only if the stored time is older than this.
 */
export const LAST_USED_GRANULARITY_MS = 60_000

type KeyVerdict = AccountPrincipal & KeyGrant

export interface ApiKeys {
  /** The principal of an mk_ key: a live key of an existing account, within its plan's requests a minute. */
  principal(token: string): Promise<Principal>
}

/** The revocation message that drops a key's verdict in this process (service.ts announces it). */
export const keyRevocation = (keyHash: string) => `api-key:${keyHash}`

export function apiKeyVerdicts(services: Services): ApiKeys {
  // Only keys found live are kept (by hash, never the key): an unknown or revoked key asks Postgres each time.
  const verdicts = new TtlCache<KeyVerdict>(MAX_KEY_VERDICTS)
  onLocalRevocation(services, (message) => {
    // Only an account's own changes and its keys concern this cache; anything else (an Agent, a token family) does not.
    if (message === '*' || message.startsWith('account:')) verdicts.clear()
    else if (message.startsWith('api-key:')) verdicts.delete(message.slice('api-key:'.length))
  })

  /** Records a use, at most once a LAST_USED_GRANULARITY_MS per key; never delays nor fails the request. */
  function touch(keyId: string, lastUsedAt: Date | null, now: number): void {
    const stale = new Date(now - LAST_USED_GRANULARITY_MS)
    if (lastUsedAt !== null && lastUsedAt > stale) return
    services.db
      .update(apiKeys)
      .set({ lastUsedAt: new Date(now) })
      // Another process may have written it since our read: the condition keeps it one write a minute.
      .where(and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, stale))))
      .then(
        () => undefined,
        (error: unknown) => log.error({ component: 'keys', error: errorSummary(error) }, 'last_used_at not recorded'),
      )
  }

  async function lookup(hash: string): Promise<KeyVerdict> {
    const now = services.now()
    const cached = verdicts.get(hash, now)
    if (cached) return cached
    const [row] = await services.db
      .select({ id: accounts.id, email: accounts.email, plan: accounts.plan, keyId: apiKeys.id, scopes: apiKeys.scopes, lastUsedAt: apiKeys.lastUsedAt })
      .from(apiKeys)
      .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
      // A suspended account's keys are revoked; a key made by a request in flight as the suspension
      // committed is refused here all the same.
      .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt), isNull(accounts.suspendedAt)))
      .limit(1)
    if (!row) throw new ApiError('UNAUTHORIZED', 'Unknown or revoked API key.')
    const { lastUsedAt, ...verdict } = row
    touch(row.keyId, lastUsedAt, now)
    verdicts.set(hash, verdict, KEY_VERDICT_TTL_MS, now)
    return verdict
  }

  return {
    async principal(token) {
      const { keyId, scopes, ...account } = await lookup(hashSecret(token))
      const credentialId = `mk:${keyId}`
      // Counted on every request, cached verdict or not.
      return { kind: 'account', account, key: { keyId, scopes }, rateHeaders: await limitCredential(services, credentialId, account.plan), credentialId }
    },
  }
}
