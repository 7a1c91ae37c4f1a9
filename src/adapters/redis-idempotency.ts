// Idempotency-Key records on Redis: a key claimed in one API process is claimed for all of them.
//
// One Redis key per record, always with an expiry:
//   in flight  `p|<token>`                         PX leaseMs  (SET NX PX: only one request claims it)
//   done       `d|{"fingerprint":…,"response":…}`  PX ttlMs    (replaced only by its own claim)
// Each step is one Lua script, so no crash or timeout between two round trips can leave a record
// without expiry, and a claim never reads a record that vanished between its SET and its GET.
import type { RedisClient } from '../../core/redis'
import { assertMs, claimToken, tokenFingerprint } from './memory-idempotency'
import type { IdempotencyClaim, IdempotencyStore, StoredResponse } from './ports'
import { scriptedRedis } from './redis-kv'

export const IDEMPOTENCY_PREFIX = 'idem:'

/** Returns { 1 } when claimed, else { 0, current value }. */
const CLAIM_SCRIPT = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return { 1 } end
return { 0, redis.call('GET', KEYS[1]) }
`

/** Stores the response when the record is still our claim or gone (lease over); 1 when stored. */
const COMPLETE_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`

/** Deletes the record only while it is still our claim. */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`

type WithScripts = RedisClient & {
  idempotencyClaim(key: string, value: string, leaseMs: number): Promise<[1] | [0, string | null]>
  idempotencyComplete(key: string, pending: string, done: string, ttlMs: number): Promise<number>
  idempotencyRelease(key: string, pending: string): Promise<number>
}

const pendingValue = (token: string) => `p|${token}`

export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly client: WithScripts
  readonly close: () => Promise<void>

  /** A URL opens a connection this store owns; a client is borrowed and left open by close(). */
  constructor(connection: string | RedisClient, opts: { commandTimeoutMs?: number } = {}) {
    const scripted = scriptedRedis<WithScripts>(connection, opts.commandTimeoutMs, {
      idempotencyClaim: CLAIM_SCRIPT,
      idempotencyComplete: COMPLETE_SCRIPT,
      idempotencyRelease: RELEASE_SCRIPT,
    })
    this.client = scripted.client
    this.close = scripted.close
  }

  async claim(key: string, fingerprint: string, leaseMs: number): Promise<IdempotencyClaim> {
    assertMs('leaseMs', leaseMs)
    const token = claimToken(fingerprint)
    const reply = await this.client.idempotencyClaim(IDEMPOTENCY_PREFIX + key, pendingValue(token), leaseMs)
    if (reply[0] === 1) return { state: 'claimed', token }
    return parseRecord(reply[1] ?? null, key)
  }

  async complete(key: string, token: string, response: StoredResponse, ttlMs: number): Promise<boolean> {
    assertMs('ttlMs', ttlMs)
    const done = `d|${JSON.stringify({ fingerprint: tokenFingerprint(token), response })}`
    return (await this.client.idempotencyComplete(IDEMPOTENCY_PREFIX + key, pendingValue(token), done, ttlMs)) === 1
  }

  async release(key: string, token: string): Promise<void> {
    await this.client.idempotencyRelease(IDEMPOTENCY_PREFIX + key, pendingValue(token))
  }
}

function parseRecord(value: string | null, key: string): IdempotencyClaim {
  if (value?.startsWith('p|')) return { state: 'in_flight', fingerprint: tokenFingerprint(value.slice(2)) }
  if (value?.startsWith('d|')) {
    const { fingerprint, response } = JSON.parse(value.slice(2)) as { fingerprint: string; response: StoredResponse }
    return { state: 'done', fingerprint, response }
  }
  // Only this adapter writes under the prefix; anything else is a bug to surface, not to overwrite.
  throw new Error(`idempotency record ${IDEMPOTENCY_PREFIX}${key} is not one of ours`)
}
