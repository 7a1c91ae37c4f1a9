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

/** A response kept under an Idempotency-Key, replayed as is to a retry of the same request. */
export interface StoredResponse {
  status: number
  /** Representation headers only (content-type, cache-control); never the rate headers of the first call. */
  headers: Record<string, string>
  body: string
}

export type IdempotencyClaim =
  /** The key was free: the caller runs the request, then calls complete() or release() with the token. */
  | { state: 'claimed'; token: string }
  /** Another request holds the key and has not finished (its lease has not run out). */
  | { state: 'in_flight'; fingerprint: string }
  /** A request with this key finished; its response is stored. */
  | { state: 'done'; fingerprint: string; response: StoredResponse }

/**
 * Idempotency-Key records: one atomic claim per key across every process sharing the store. A claim is
 * a lease (leaseMs), so a request that crashed blocks its key only until the lease runs out; a stored
 * response lives ttlMs. Every record carries an expiry. `fingerprint` identifies the request's payload.
 */
export interface IdempotencyStore {
  /** Claims `key` for a request with this fingerprint, or reports who holds it. Atomic. */
  claim(key: string, fingerprint: string, leaseMs: number): Promise<IdempotencyClaim>
  /**
   * Stores the response under the key, kept ttlMs, if the caller's claim still holds or the key is free
   * again (its lease ran out: the work was done, so a retry should see it). False when another request
   * has claimed the key since.
   */
  complete(key: string, token: string, response: StoredResponse, ttlMs: number): Promise<boolean>
  /** Gives the key up (the request failed in a way a retry may fix); only while the claim holds. */
  release(key: string, token: string): Promise<void>
  close(): Promise<void>
}

/**
 * An Agent's call, as the request path hands it to the audit (plugins/agent-calls.ts writes it,
 * modules/audit stores it): plain values it already has. Anything else on the object (a
 * body, a token, headers) is never read: the stored row is built field by field from these.
 */
export interface AuditEventInput {
  accountId: string
  agentId: string
  via: 'rest' | 'mcp'
  /** Operation named for policy (links.create, …); for MCP the tool's operation. Empty when none applies. */
  operation: string
  method: string
  /** URL path as received; anything from `?` or `#` on is cut off before the event is stored. */
  path: string
  /** HTTP status answered (for MCP: the status of the HTTP response, or of the tool call's mapped error). */
  status: number
  /** Default: the outcome its status stands for (modules/audit/model.ts outcomeOf). */
  outcome?: 'ok' | 'held' | 'refused' | 'error'
  /** Scopes the route requires: used by the call, or lacked when it was refused. */
  scopesUsed: readonly string[]
  approvalId?: string | null
  dryRun?: boolean
  durationMs: number
  /** Client address; hashed with IP_HASH_SECRET before the event reaches the disk, never stored. */
  ip: string
  /** When the call arrived, unix milliseconds. Default: the time of record(). */
  at?: number
}

/** Where Agent call events go (modules/audit's recorder). record() only queues: synchronous, O(1), never throws. */
export interface AuditLog {
  record(event: AuditEventInput): void
}
