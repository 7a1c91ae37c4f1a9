// Picks the Kv, Limiter and IdempotencyStore adapters for this process: Redis when REDIS_URL is set,
// else in-process.
import type { Config } from '../../core/config'
import { MemoryIdempotencyStore } from './memory-idempotency'
import { MemoryKv } from './memory-kv'
import { MemoryLimiter } from './memory-limiter'
import type { IdempotencyStore, Kv, Limiter } from './ports'

export interface Adapters {
  kv: Kv
  limiter: Limiter
  idempotency: IdempotencyStore
  engine: 'redis' | 'memory'
  close(): Promise<void>
}

export async function openAdapters(config: Pick<Config, 'redisUrl'>, opts: { commandTimeoutMs?: number; name?: string; autoPipelining?: boolean } = {}): Promise<Adapters> {
  if (config.redisUrl) {
    // Imported lazily so the embedded default never loads ioredis.
    const { RedisKv } = await import('./redis-kv')
    const { RedisLimiter } = await import('./redis-limiter')
    const { RedisIdempotencyStore } = await import('./redis-idempotency')
    // Auto-pipelined unless said otherwise: the rate limit, cache and idempotency commands of the
    // requests in flight share socket writes (redis-kv.ts).
    const kv = new RedisKv(config.redisUrl, { autoPipelining: true, ...opts })
    // One command connection for all: the limiter and the idempotency store borrow it, so kv.close()
    // closes it once.
    const limiter = new RedisLimiter(kv.client)
    const idempotency = new RedisIdempotencyStore(kv.client)
    return {
      kv,
      limiter,
      idempotency,
      engine: 'redis',
      close: async () => {
        await limiter.close()
        await idempotency.close()
        await kv.close()
      },
    }
  }
  const kv = new MemoryKv()
  const limiter = new MemoryLimiter()
  const idempotency = new MemoryIdempotencyStore()
  return {
    kv,
    limiter,
    idempotency,
    engine: 'memory',
    close: async () => {
      await limiter.close()
      await idempotency.close()
      await kv.close()
    },
  }
}
