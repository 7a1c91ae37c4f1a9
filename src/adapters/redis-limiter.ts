// Fixed-window limiter on Redis: the count holds across every API process sharing the store.
import type { RedisClient } from '../../core/redis'
import { limitResult } from './memory-limiter'
import type { LimitResult, Limiter } from './ports'
import { scriptedRedis } from './redis-kv'

/**
 * One atomic step, so no crash or timeout between two round trips can leave a counter without expiry
 * (an INCR followed by a lost EXPIRE would block that key forever). The window starts at the first hit.
 * The PTTL < 0 branch heals a key that somehow lost its expiry. Returns { count, pttl }.
 */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { count, ttl }
`

type WithHit = RedisClient & { rateLimitHit(key: string, windowMs: number): Promise<[number, number]> }

export const RATE_LIMIT_PREFIX = 'rl:'

export class RedisLimiter implements Limiter {
  private readonly client: WithHit
  readonly close: () => Promise<void>

  /** A URL opens a connection this limiter owns; a client is borrowed and left open by close(). */
  constructor(connection: string | RedisClient, opts: { commandTimeoutMs?: number } = {}) {
    const scripted = scriptedRedis<WithHit>(connection, opts.commandTimeoutMs, { rateLimitHit: HIT_SCRIPT })
    this.client = scripted.client
    this.close = scripted.close
  }

  async hit(key: string, limit: number, windowMs: number): Promise<LimitResult> {
    const [count, pttl] = await this.client.rateLimitHit(RATE_LIMIT_PREFIX + key, Math.max(1, Math.round(windowMs)))
    return limitResult(count, limit, Date.now() + pttl)
  }
}
