// Kv on Redis through ioredis: the shared link cache and its invalidation channel.
//
// Failure mode, decided once for every caller: each command has a deadline (commandTimeoutMs) and
// rejects when it passes; callers choose what a rejection means (the redirector falls through to the
// API; the API carries on, since Postgres is the truth, and the limiter's caller decides open or shut).
// The offline queue stays on: while the connection is down a command waits for the reconnect, but only
// until its deadline or until two reconnect attempts have failed (maxRetriesPerRequest: 1), whichever
// comes first. So a blip costs a little latency instead of an error, and an outage fails fast instead
// of piling commands up in memory. A command that gave up may still be sent once the connection is
// back; queued commands keep their order, so a later write still lands after an earlier one.
import type { RedisOptions } from 'ioredis'
import { isCluster, openRedisClient, type RedisClient } from '../../core/redis'
import { assertTtl } from './memory-kv'
import type { Kv } from './ports'

/** API-side budget for one Redis command. The redirector passes its own, smaller config.cache.redisTimeoutMs. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 500
/** SUBSCRIBE happens at boot and after a reconnect, never on a request, so it may wait longer. */
const SUBSCRIBE_TIMEOUT_MS = 5_000
/** Reconnect delay cap: ioredis' default (5 s) would outlast every command budget during a blip. */
const MAX_RECONNECT_DELAY_MS = 1_000

export interface RedisKvOptions {
  commandTimeoutMs?: number
  /** Shown in CLIENT LIST (the subscriber connection gets ":sub" appended), e.g. "api" or "redirect". */
  name?: string
  /**
   * ioredis' enableAutoPipelining on the command connection: the commands issued in one event-loop turn
   * (by every request in flight) leave in one socket write. On loopback each write costs the sender
   * the receiver's TCP work too, so a busy API spends less per command.
   */
  autoPipelining?: boolean
}

/**
 * One ioredis client with the project's timeouts, for a server, a cluster or Sentinel (core/redis.ts);
 * shared by RedisKv, RedisLimiter and RedisIdempotencyStore.
 */
export function connectRedis(url: string, opts: { commandTimeoutMs: number; name?: string }, extra: RedisOptions = {}): RedisClient {
  const client = openRedisClient(url, {
    commandTimeout: opts.commandTimeoutMs,
    connectTimeout: 5_000,
    // Empty the offline queue every second failed reconnect instead of letting it grow while Redis is
    // down (see the top of this file).
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, MAX_RECONNECT_DELAY_MS),
    connectionName: opts.name,
    ...extra,
  } satisfies RedisOptions)
  // Failures reach callers as rejected commands; without a listener ioredis prints every reconnect attempt.
  client.on('error', () => {})
  return client
}

type Subscription = { onMessage: (message: string) => void; onReset?: () => void }

export class RedisKv implements Kv {
  /** The command connection; RedisLimiter may share it (openAdapters does). */
  readonly client: RedisClient
  private subscriber: RedisClient | undefined
  private readonly subscriptions = new Map<string, Set<Subscription>>()

  constructor(
    private readonly url: string,
    private readonly opts: RedisKvOptions = {},
  ) {
    this.client = connectRedis(url, { commandTimeoutMs: opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS, name: opts.name }, { enableAutoPipelining: opts.autoPipelining ?? false })
  }

  async get(key: string): Promise<string | null> {
    return this.client.get(key)
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    assertTtl(ttlSeconds)
    await this.client.set(key, value, 'EX', ttlSeconds)
  }

  async del(key: string): Promise<void> {
    await this.client.del(key)
  }

  async publish(channel: string, message: string): Promise<void> {
    await publisherOf(this.client).publish(channel, message)
  }

  async subscribe(channel: string, onMessage: (message: string) => void, onReset?: () => void): Promise<() => Promise<void>> {
    const subscriber = this.subscriberConnection()
    const subscription: Subscription = { onMessage, onReset }
    let set = this.subscriptions.get(channel)
    if (!set) this.subscriptions.set(channel, (set = new Set()))
    set.add(subscription)
    try {
      // SUBSCRIBE is idempotent on the server; sending it every time keeps this free of "in flight" state.
      await subscriber.subscribe(channel)
    } catch (err) {
      this.forget(channel, subscription)
      throw err
    }
    return async () => {
      // Commands on one connection run in order, so a SUBSCRIBE sent after this UNSUBSCRIBE still wins.
      if (this.forget(channel, subscription)) await subscriber.unsubscribe(channel)
    }
  }

  async close(): Promise<void> {
    this.subscriptions.clear()
    const subscriber = this.subscriber
    this.subscriber = undefined
    await Promise.all([quitRedis(this.client), subscriber && quitRedis(subscriber)])
  }

  /** Removes one subscription; true when it was the channel's last. */
  private forget(channel: string, subscription: Subscription): boolean {
    const set = this.subscriptions.get(channel)
    if (!set?.delete(subscription) || set.size > 0) return false
    this.subscriptions.delete(channel)
    return true
  }

  /**
   * A connection in subscribe mode can run no other command, so subscriptions get their own, opened on
   * first use (the API only publishes and never pays for it). RESP2 so that Redis classes it as a pub/sub
   * client (client-output-buffer-limit pubsub, CLIENT KILL TYPE pubsub).
   */
  private subscriberConnection(): RedisClient {
    if (this.subscriber) return this.subscriber
    const subscriber = connectRedis(this.url, { commandTimeoutMs: SUBSCRIBE_TIMEOUT_MS, name: this.opts.name && `${this.opts.name}:sub` }, { protocol: 2, autoResubscribe: false })
    subscriber.on('message', (channel: string, message: string) => {
      for (const s of this.subscriptions.get(channel) ?? []) {
        // A throwing subscriber must not break ioredis' reply parsing or starve the others; its error
        // still surfaces, as an uncaught one, just as with the in-process adapter.
        try {
          s.onMessage(message)
        } catch (err) {
          queueMicrotask(() => {
            throw err
          })
        }
      }
    })
    let wasReady = false
    subscriber.on('ready', () => {
      if (wasReady) void this.resubscribe(subscriber)
      wasReady = true
    })
    if (isCluster(subscriber)) {
      // In a cluster, ioredis holds the subscription on one node and moves it to another when that node
      // leaves, subscribing again itself; what was published meanwhile is missed, so that is a reset too.
      // (A subscriber connection cut while its node stays is moved without an event: the L1's TTL bounds
      // what that misses. docs/scaling.md.)
      subscriber.on('-node', () => {
        if (wasReady) this.reset()
      })
    }
    this.subscriber = subscriber
    return subscriber
  }

  /**
   * After a reconnect: subscribe again ourselves (autoResubscribe would not tell us when it is done),
   * then tell every subscriber that messages may have been missed. onReset comes after the SUBSCRIBE so
   * anything a subscriber reloads from then on is covered by the live channel.
   */
  private async resubscribe(subscriber: RedisClient): Promise<void> {
    const channels = [...this.subscriptions.keys()]
    try {
      if (channels.length > 0) await subscriber.subscribe(...channels)
    } catch {
      // The connection dropped again; the next 'ready' retries. Resetting now is still right.
    }
    this.reset()
  }

  private reset(): void {
    for (const set of this.subscriptions.values()) for (const s of set) s.onReset?.()
  }
}

/**
 * Where PUBLISH goes. A cluster client sends a command without a key to any node, and each node passes
 * the message on to the subscriber's node over its own link, so two messages sent one after the other
 * could arrive the other way round; sent through one node (the first primary by address, while it is
 * there) they keep their order, as they do on one server.
 */
function publisherOf(client: RedisClient): RedisClient {
  if (!isCluster(client)) return client
  const primaries = client.nodes('master').filter((node) => node.status === 'ready' || node.status === 'wait')
  primaries.sort((a, b) => nodeKey(a).localeCompare(nodeKey(b)))
  return primaries[0] ?? client
}

const nodeKey = (node: { options: { host?: string; port?: number } }) => `${node.options.host}:${node.options.port}`

/**
 * A Redis client for an adapter that may share one: a URL opens a connection the adapter owns (and
 * closes), a client is borrowed and left open.
 */
export function ownOrBorrow(connection: string | RedisClient, commandTimeoutMs = DEFAULT_COMMAND_TIMEOUT_MS): { client: RedisClient; owned: boolean } {
  return typeof connection === 'string' ? { client: connectRedis(connection, { commandTimeoutMs }), owned: true } : { client: connection, owned: false }
}

/**
 * A client with Lua commands defined on it (defineCommand sends EVALSHA and falls back to EVAL once
 * when the server has not cached the script), and a close() that quits it only when it was opened here.
 */
export function scriptedRedis<C extends RedisClient>(
  connection: string | RedisClient,
  commandTimeoutMs: number | undefined,
  scripts: Record<string, string>,
): { client: C; close: () => Promise<void> } {
  const { client, owned } = ownOrBorrow(connection, commandTimeoutMs)
  for (const [name, lua] of Object.entries(scripts)) {
    if (!(name in client)) client.defineCommand(name, { numberOfKeys: 1, lua })
  }
  return { client: client as C, close: async () => (owned ? quitRedis(client) : undefined) }
}

export async function quitRedis(client: RedisClient): Promise<void> {
  // QUIT waits for replies in flight; when Redis is unreachable there is nothing to wait for.
  await client.quit().catch(() => client.disconnect())
}
