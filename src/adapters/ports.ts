// The small ports behind which Redis and the in-process default are interchangeable. Each port has two
// adapters (redis-*.ts, memory-*.ts) and one shared contract suite that both must pass.

/** Key-value store with expiry and pub/sub: the link cache and its invalidation channel. */
export interface Kv {
  get(key: string): Promise<string | null>
  /** Stores a value that disappears after ttlSeconds. */
  set(key: string, value: string, ttlSeconds: number): Promise<void>
  del(key: string): Promise<void>
  publish(channel: string, message: string): Promise<void>
  /**
   * Delivers every message published on the channel from now on. `onReset` is called whenever the
   * subscription may have missed messages (a reconnect), so the subscriber can drop what it cached.
   * Resolves once the subscription is live; the returned function ends it.
   */
  subscribe(channel: string, onMessage: (message: string) => void, onReset?: () => void): Promise<() => Promise<void>>
  close(): Promise<void>
}

export interface LimitResult {
  allowed: boolean
  limit: number
  /** Hits left in the current window after this one (0 when refused). */
  remaining: number
  /** When the current window ends, unix seconds (X-RateLimit-Reset). */
  resetAt: number
}

/**
 * Fixed-window rate limiter. One hit is counted atomically, across every process sharing the store,
 * and the counter always carries an expiry.
 */
export interface Limiter {
  hit(key: string, limit: number, windowMs: number): Promise<LimitResult>
  close(): Promise<void>
}
