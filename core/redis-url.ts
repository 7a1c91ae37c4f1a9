// REDIS_URL, read once for the API's adapters and the redirector alike: one server, a Redis Cluster, or a
// primary watched by Sentinel. Pure (config.ts checks the URL at start without loading ioredis); the
// client for each is core/redis.ts.
//
//   redis://[user:password@]host[:port][/db]                    one server (rediss:// for TLS)
//   redis+cluster://[user:password@]host:port[,host:port…]      Redis Cluster: any nodes to start from;
//                                                               the others are found from their slots
//   redis+sentinel://[user:password@]host:port[,host:port…]/primary[/db][?sentinel_password=…&sentinel_username=…]
//                                                               Sentinel: the sentinels, and the name
//                                                               they watch the primary under
//
// A URL with several hosts is not a WHATWG URL (its port would read "6379,host"), so this parses them
// itself. Credentials belong to the Redis servers; a sentinel's own come from the query. Cluster and
// Sentinel with TLS: rediss+cluster://, rediss+sentinel:// (Sentinel then speaks TLS to the sentinels too).
//
// What Cluster changes for the code: every command and Lua script here names one key (the scripts of the
// limiter and the idempotency store touch only KEYS[1]), so no two keys need to share a hash slot; Pub/Sub
// is the classic kind, which a cluster delivers to a subscriber on any node.

export interface HostPort {
  host: string
  port: number
}

interface Credentials {
  username?: string
  password?: string
}

export type RedisTarget =
  | { kind: 'server'; url: string }
  | { kind: 'cluster'; nodes: HostPort[]; credentials: Credentials; tls: boolean }
  | { kind: 'sentinel'; sentinels: HostPort[]; primary: string; db: number; credentials: Credentials; sentinelCredentials: Credentials; tls: boolean }

/** A REDIS_URL that cannot be used, with what is wrong in words (never the URL itself: it may hold a password). */
export class RedisUrlError extends Error {}

const DEFAULT_PORT = { server: 6379, cluster: 6379, sentinel: 26379 } as const

const SHAPE = /^(rediss?)(?:\+(cluster|sentinel))?:\/\/(?:([^@/?#]*)@)?([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?$/

export function parseRedisUrl(raw: string): RedisTarget {
  const match = SHAPE.exec(raw)
  if (!match) throw new RedisUrlError('must look like redis://host:port, redis+cluster://host:port,host:port or redis+sentinel://host:port/primary')
  const [, scheme, mode, userinfo, hostList, path = '', query = ''] = match as unknown as [
    string,
    string,
    'cluster' | 'sentinel' | undefined,
    string | undefined,
    string,
    string | undefined,
    string | undefined,
  ]
  const kind = mode ?? 'server'
  const hosts = hostList.split(',').map((entry) => hostPort(entry, DEFAULT_PORT[kind]))
  const tls = scheme === 'rediss'
  if (kind === 'server') {
    if (hosts.length > 1) throw new RedisUrlError('names several hosts: use redis+cluster:// for a Redis Cluster or redis+sentinel:// for Sentinel')
    try {
      new URL(raw)
    } catch {
      throw new RedisUrlError('is not a valid URL')
    }
    return { kind, url: raw }
  }
  const credentials = credentialsOf(userinfo)
  if (kind === 'cluster') {
    // A cluster has database 0 only.
    if (path !== '' && path !== '/' && path !== '/0') throw new RedisUrlError('of a Redis Cluster takes no path: a cluster has database 0 only')
    if (query) throw new RedisUrlError('of a Redis Cluster takes no query')
    return { kind, nodes: hosts, credentials, tls }
  }
  const [primary, db = '0', ...rest] = path.split('/').slice(1).map(decodeURIComponent)
  if (!primary) throw new RedisUrlError('of Sentinel must name the primary after the hosts: redis+sentinel://host:26379/mymaster')
  if (rest.length > 0 || !/^\d{1,2}$/.test(db)) throw new RedisUrlError('of Sentinel must end in /primary or /primary/db (db a number)')
  const params = new URLSearchParams(query)
  for (const name of params.keys()) {
    if (name !== 'sentinel_password' && name !== 'sentinel_username') throw new RedisUrlError(`has an unknown query parameter "${name}" (sentinel_password and sentinel_username are known)`)
  }
  const sentinelCredentials = { username: params.get('sentinel_username') ?? undefined, password: params.get('sentinel_password') ?? undefined }
  return { kind, sentinels: hosts, primary, db: Number(db), credentials, sentinelCredentials, tls }
}

function hostPort(entry: string, defaultPort: number): HostPort {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry)
  const port = match?.[2] === undefined ? defaultPort : Number(match[2])
  if (!match || port < 1 || port > 65535) throw new RedisUrlError(`has a host that is not host[:port]: "${entry.slice(0, 80)}"`)
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port }
}

function credentialsOf(userinfo: string | undefined): Credentials {
  if (userinfo === undefined) return {}
  const colon = userinfo.indexOf(':')
  const username = decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(0, colon))
  const password = colon < 0 ? undefined : decodeURIComponent(userinfo.slice(colon + 1))
  return { ...(username && { username }), ...(password && { password }) }
}

/** REDIS_URL without its passwords (and without a query, which may hold the sentinels' password). */
export function redactedRedisUrl(raw: string): string {
  const match = /^([a-z+]+:\/\/)(?:([^@/?#]*)@)?([^?#]*)/.exec(raw)
  if (!match) return '(an unreadable URL)'
  const user = match[2]?.split(':')[0]
  return `${match[1]}${user ? `${user}@` : ''}${match[3]!.replace(/\/$/, '')}`
}

/** The passwords a URL carries (its own, and a sentinel's in the query), to be cut out of what a driver says. */
export function passwordsIn(raw: string): string[] {
  const found: string[] = []
  const userinfo = /^[a-z][a-z0-9+.-]*:\/\/([^@/?#]*)@/i.exec(raw)?.[1]
  const colon = userinfo?.indexOf(':') ?? -1
  if (userinfo && colon >= 0) found.push(userinfo.slice(colon + 1))
  const query = /\?([^#]*)/.exec(raw)?.[1]
  if (query) for (const [name, value] of new URLSearchParams(query)) if (/password/i.test(name) && value) found.push(value)
  return found.flatMap((p) => [p, safeDecode(p)]).filter((p, i, all) => p && all.indexOf(p) === i)
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}
