// The ioredis client for REDIS_URL (core/redis-url.ts reads it): one server, a Redis Cluster, or a
// primary watched by Sentinel, for the API's adapters and the redirector alike.
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis'
import { parseRedisUrl, type HostPort } from './redis-url'

export type RedisClient = Redis | Cluster

/**
 * The ioredis client for REDIS_URL, with the caller's options (the same ones whatever the topology):
 * commandTimeout, connectTimeout, maxRetriesPerRequest, retryStrategy, enableOfflineQueue,
 * enableAutoPipelining, connectionName, protocol, autoResubscribe.
 *
 * In a cluster, retryStrategy becomes the wait before the cluster as a whole is connected again, and
 * commandTimeout holds from the moment a command is issued, including any time it waits for the cluster
 * to be ready (ioredis would otherwise time it only once it is sent to a node, and a command issued while
 * every node is down would wait for ever).
 */
export function openRedisClient(url: string, options: RedisOptions): RedisClient {
  const target = parseRedisUrl(url)
  if (target.kind === 'server') return new Redis(url, options)
  const tls = target.tls ? {} : undefined
  if (target.kind === 'sentinel') {
    const sentinel: RedisOptions = {
      ...options,
      sentinels: target.sentinels,
      name: target.primary,
      db: target.db,
      ...target.credentials,
      sentinelUsername: target.sentinelCredentials.username,
      sentinelPassword: target.sentinelCredentials.password,
      // The sentinels are asked again on the same schedule as the primary.
      sentinelRetryStrategy: options.retryStrategy ?? undefined,
      ...(tls && { tls, enableTLSForSentinelMode: true }),
    }
    return new Redis(sentinel)
  }
  const { retryStrategy, enableOfflineQueue, enableAutoPipelining, replyMapping: _, ...perNode } = options
  return new DeadlineCluster(target.nodes, options.commandTimeout, {
    clusterRetryStrategy: retryStrategy,
    enableOfflineQueue,
    enableAutoPipelining,
    redisOptions: { ...perNode, ...target.credentials, ...(tls && { tls }) },
  } satisfies ClusterOptions)
}

/** A cluster client whose commands time out from when they are issued (see openRedisClient). */
class DeadlineCluster extends Cluster {
  constructor(
    nodes: HostPort[],
    private readonly deadlineMs: number | undefined,
    options: ClusterOptions,
  ) {
    // ioredis types its options by reply mapping; this client keeps the default ("legacy") one.
    super(nodes, options as ConstructorParameters<typeof Cluster<'legacy'>>[1])
  }

  override sendCommand(...args: Parameters<Cluster['sendCommand']>): unknown {
    // Command.setTimeout keeps the first deadline it is given: the node's own commandTimeout, set when
    // the command reaches it, does not move this one.
    if (this.deadlineMs !== undefined) args[0].setTimeout(this.deadlineMs)
    return super.sendCommand(...args)
  }
}

export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster
}
