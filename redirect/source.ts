// Where the redirector finds links after its L1: the shared cache (Redis, or the in-process store of
// the embedded default). On a miss there it asks the API (redirect/internal-api.ts).
import type { RedisOptions } from 'ioredis'
import { isCluster, openRedisClient, type RedisClient } from '../core/redis'

/** The read side of the link cache. The API's Kv adapters satisfy it as they are. */
export interface LinkSource {
  get(key: string): Promise<string | null>
  subscribe(channel: string, onMessage: (message: string) => void, onReset?: () => void): Promise<() => Promise<void>>
  close?(): Promise<void>
}

/**
 * Redis, read-only, for the hot path: every command has a timeout, and with the offline queue off a
 * command fails at once while Redis is down instead of waiting for a reconnect. The subscriber lives
 * on its own connection; any reconnect of it reports a reset, since messages may have been missed.
 */
export function redisLinkSource(url: string, timeoutMs: number): LinkSource {
  const options: RedisOptions = {
    commandTimeout: timeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 1000),
    lazyConnect: false,
  }
  const commands = openRedisClient(url, options)
  commands.on('error', () => {}) // reconnects on its own; failures surface as rejected commands
  let subscriber: RedisClient | null = null
  return {
    get: (key) => commands.get(key),
    async subscribe(channel, onMessage, onReset) {
      // The subscriber keeps the offline queue so SUBSCRIBE is replayed after a reconnect.
      const sub = openRedisClient(url, { ...options, enableOfflineQueue: true, commandTimeout: undefined, maxRetriesPerRequest: null })
      subscriber = sub
      sub.on('error', () => {})
      // Reset once when the connection drops (invalidations may be missed from then on) and once when it
      // is back (some were missed), not on every failed reconnect attempt in between: a reset empties the L1.
      let everReady = false
      let connected = false
      sub.on('ready', () => {
        if (everReady) onReset?.()
        everReady = true
        connected = true
      })
      sub.on('close', () => {
        if (!connected) return
        connected = false
        onReset?.()
      })
      // A cluster moves the subscription to another node when its node leaves, subscribing again itself:
      // what was published meanwhile is missed (src/adapters/redis-kv.ts says the same).
      if (isCluster(sub)) sub.on('-node', () => everReady && onReset?.())
      sub.on('message', (_channel: string, message: string) => onMessage(message))
      await sub.subscribe(channel)
      // Ending the subscription closes its connection: an UNSUBSCRIBE would wait for a Redis that may be gone.
      return async () => {
        sub.disconnect()
      }
    },
    async close() {
      commands.disconnect()
      subscriber?.disconnect()
    },
  }
}
