// Picks the Kv and Limiter adapters for this process: Redis when REDIS_URL is set, else in-process.
import type { Config } from '../core/config'
import { MemoryKv } from './memory-kv'
import { MemoryLimiter } from './memory-limiter'
import type { Kv, Limiter } from './ports'

export interface Adapters {
  kv: Kv
  limiter: Limiter
  engine: 'redis' | 'memory'
  close(): Promise<void>
}

export async function openAdapters(
  config: Pick<Config, 'redisUrl'>,
  opts: { commandTimeoutMs?: number; name?: string } = {},
): Promise<Adapters> {
  if (config.redisUrl) {
    // Imported lazily so the embedded default never loads ioredis.
    const { RedisKv } = await import('./redis-kv')
    const { RedisLimiter } = await import('./redis-limiter')
    const kv = new RedisKv(config.redisUrl, opts)
    // One command connection for both: the limiter borrows it, so kv.close() closes it once.
    const limiter = new RedisLimiter(kv.client)
    return { kv, limiter, engine: 'redis', close: async () => { await limiter.close(); await kv.close() } }
  }
  const kv = new MemoryKv()
  const limiter = new MemoryLimiter()
  return { kv, limiter, engine: 'memory', close: async () => { await limiter.close(); await kv.close() } }
}
