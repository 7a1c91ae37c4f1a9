// The account's API keys as its owner manages them (index.ts): list the live ones, create one
// (shown once), revoke one. Another account's key is "not found", never "forbidden".
import { and, count, desc, eq, isNull } from 'drizzle-orm'
import { apiKeys } from '../../db/schema'
import { lockFor } from '../../db/locks'
import { isId } from '../../lib/ids'
import { ApiError } from '../../plugins/errors'
import { announceRevocation } from '../../plugins/revocations'
import type { Services } from '../../services'
import { ADMIN_SCOPE } from './admin-scope'
import { KEY_NAME_MAX, KEY_SCOPES, MAX_LIVE_KEYS } from './model'
import { insertApiKey, keyRevocation, type ApiKeyRow } from './verdicts'

// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/

/** A key as its owner sees it: never the key nor its hash; `prefix` is the start kept in clear. */
export function keyView(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.start,
    scopes: row.scopes,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
  }
}

export type KeyView = ReturnType<typeof keyView>

function keyName(raw: string): string {
  const name = raw.trim()
  if (name.length === 0 || name.length > KEY_NAME_MAX) throw new ApiError('VALIDATION_FAILED', `body.name: 1-${KEY_NAME_MAX} characters once trimmed.`)
  if (CONTROL_CHARS.test(name)) throw new ApiError('VALIDATION_FAILED', 'body.name: control characters are not allowed.')
  return name
}

/**
 * The scopes of a new key: OAuth scopes, and `admin` for an operator only (admin-scope.ts);
 * anyone else asking for `admin` is answered as for any scope that does not exist.
 */
function keyScopes(raw: readonly string[] | null | undefined, operator: boolean): string[] | null {
  if (raw === null || raw === undefined) return null
  const holdable: readonly string[] = operator ? [...KEY_SCOPES, ADMIN_SCOPE] : KEY_SCOPES
  const unknown = raw.find((scope) => !holdable.includes(scope))
  if (unknown !== undefined) throw new ApiError('VALIDATION_FAILED', `body.scopes: "${unknown.slice(0, 40)}" is not a scope a key can hold; one of ${holdable.join(', ')}.`)
  // Ordered as the scope table, without repeats: the stored list reads the same however it was asked for.
  return holdable.filter((scope) => raw.includes(scope))
}

/** The account's live keys, newest first. */
export async function listKeys(services: Pick<Services, 'db'>, accountId: string): Promise<KeyView[]> {
  const rows = await services.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
  return rows.map(keyView)
}

/**
 * A new key, at most MAX_LIVE_KEYS live ones per account: creations of one account are serialised by
 * an advisory lock, so the count and the insert cannot interleave.
 */
export async function createKey(
  services: Pick<Services, 'db' | 'now'>,
  accountId: string,
  input: { name: string; scopes?: readonly string[] | null },
  /** The caller is an operator: the key may carry `admin`. */
  operator = false,
): Promise<KeyView & { key: string }> {
  const spec = { name: keyName(input.name), scopes: keyScopes(input.scopes, operator) }
  const now = new Date(services.now())
  return services.db.transaction(async (tx) => {
    await lockFor(tx, 'apiKeyCreate', accountId)
    const [live] = await tx
      .select({ n: count() })
      .from(apiKeys)
      .where(and(eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
    if (Number(live?.n ?? 0) >= MAX_LIVE_KEYS) {
      throw new ApiError('API_KEY_LIMIT_REACHED', `An account can have at most ${MAX_LIVE_KEYS} live API keys; revoke one to make room.`, { limit: MAX_LIVE_KEYS, remaining: 0 })
    }
    const { key, row } = await insertApiKey(tx, accountId, now, spec)
    return { ...keyView(row), key }
  })
}

/** Revokes a live key of the account: refused at once by this process, within a second by every other. */
export async function revokeKey(services: Pick<Services, 'db' | 'now' | 'kv'>, accountId: string, keyId: string): Promise<KeyView & { revoked_at: string }> {
  if (!isId('apiKey', keyId)) throw new ApiError('API_KEY_NOT_FOUND')
  const [row] = await services.db
    .update(apiKeys)
    .set({ revokedAt: new Date(services.now()) })
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
    .returning()
  if (!row) throw new ApiError('API_KEY_NOT_FOUND')
  await announceRevocation(services, keyRevocation(row.keyHash))
  return { ...keyView(row), revoked_at: row.revokedAt!.toISOString() }
}
