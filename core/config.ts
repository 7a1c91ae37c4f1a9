// Configuration, parsed once per process at boot. Code reads the returned object, never process.env.
// Every failure names the variable so a bad deployment stops at start with a message a person can act on.
import { availableParallelism } from 'node:os'
import { isIP } from 'node:net'
import { KID_PATTERN, type ClickSigningKey } from './click-id'
import { SOCKET_ADDRESS, type ClientIpRule } from './client-ip'
import { parseRedisUrl, RedisUrlError } from './redis-url'
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from './shutdown'
import { DEFAULT_LIMITS, type LimitedPlan, type Limits, type PlanLimits } from './plan-limits'

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`configuration: ${variable} ${problem}`)
    this.name = 'ConfigError'
  }
}

type Env = Record<string, string | undefined>

export interface Config {
  /** Port of the API (and of the whole product in the embedded default). */
  port: number
  /** Address every server of the process listens on (HOST): 127.0.0.1 unless set; 0.0.0.0 in the container images. */
  host: string
  /** Bearer secret of /metrics (METRICS_TOKEN); unset: /metrics answers 404. */
  metricsToken: string | undefined
  /** Longest a SIGTERM's drain may take before the process exits anyway (SHUTDOWN_TIMEOUT_MS). */
  shutdownTimeoutMs: number
  /** Days raw rows stay in ClickHouse (src/adapters/clickhouse-retention.ts); 0: for ever. */
  retention: { clicks: number; audit: number }
  /** Port of the stand-alone redirector process. */
  redirectPort: number
  /**
   * Redirector processes sharing REDIRECT_PORT (reusePort), each with its own L1 and click spool
   * (`CLICK_SPOOL_DIR/worker-<i>`), supervised by redirect/main.ts. Default: the machine's cores.
   */
  redirectWorkers: number
  /** Host name (with port when not 80/443) that owns the default short links, e.g. "sho.rt". */
  shortDomain: string
  /** Base URL printed in short_url, e.g. "https://sho.rt". */
  shortBaseUrl: string
  /** Public base URL of the API, used in hints and upgrade links. */
  publicApiUrl: string
  /** Where the root of the default short domain sends people (ROOT_REDIRECT_URL): the dashboard by default. */
  rootRedirectUrl: string
  /** Where the embedded engines keep their files and the click spool lives. */
  dataDir: string
  databaseUrl: string | undefined
  /**
   * A streaming replica of DATABASE_URL (DATABASE_REPLICA_URL) for the read-only API paths: the links
   * list, one link, statistics' link lookup (src/db/client.ts readFromReplica). Unset: they read the primary.
   */
  databaseReplicaUrl: string | undefined
  /**
   * DATABASE_PREPARED_STATEMENTS (default true): the API's queries as named prepared statements on each
   * connection (src/db/prepared.ts). false for a pooler in transaction mode that cannot keep them.
   */
  databasePreparedStatements: boolean
  redisUrl: string | undefined
  clickhouseUrl: string | undefined
  /**
   * CLICKHOUSE_CLUSTER: the cluster (of the server's remote_servers) the migrations create replicated and
   * Distributed tables on (src/adapters/clickhouse-cluster.ts, docs/scaling.md). Unset: one server.
   */
  clickhouseCluster: string | undefined
  /** Shared secret between the redirector and the API's internal resolve endpoint. */
  internalSecret: string
  /** Where the redirector asks the API on a cache miss. */
  apiInternalUrl: string
  /** Secret for hashing client IPs before they are stored. */
  ipHashSecret: string
  /** Keys of the mu_sig click signature (core/click-id.ts): the first signs, all verify. */
  clickSigningKeys: ClickSigningKey[]
  /** Header set by a trusted CDN with the client's ISO country code, e.g. "cf-ipcountry". */
  countryHeader: string | undefined
  /** Where the client IP comes from (core/client-ip.ts): TRUSTED_PROXY_HOPS, TRUSTED_IP_HEADER or the socket. */
  clientIp: ClientIpRule
  /** DNS servers ("ip" or "ip:port") that custom-domain verification asks; undefined: the system's. */
  dnsServers: string[] | undefined
  /** Budget of one DNS lookup when verifying a custom domain. */
  dnsTimeoutMs: number
  /** Most conversions of one type a signed click may carry (CONVERSIONS_PER_CLICK); `*` for the other types. */
  conversionsPerClick: Record<string, number>
  clicks: {
    /** Rows per ClickHouse insert; a full batch flushes at once. */
    batchSize: number
    /** Longest a click waits in memory before its batch is flushed. */
    flushIntervalMs: number
    /** Rows kept in memory waiting for ClickHouse; beyond this, frozen batches go to the spool on disk. */
    spoolDir: string
    /** Bound of the click spool on disk; at it, redirects go on and their clicks are dropped and counted. */
    maxSpoolBytes: number
    /** fdatasync each group commit of the click log (survives a power cut, not only a process crash). */
    fsync: boolean
  }
  /** The audit trail of Agent calls (src/modules/audit/recorder.ts): spooled on disk, shipped in batches. */
  audit: {
    spoolDir: string
    /** Events per ClickHouse insert; a full segment is sealed and shipped at once. */
    batchSize: number
    /** A segment with events is sealed and shipped at least this often: how stale an audit read may be. */
    flushIntervalMs: number
    /** Bound of the audit spool on disk; at it, calls go on and their events are dropped and counted. */
    maxSpoolBytes: number
    /** fdatasync each group commit of the audit spool (survives a power cut, not only a process crash). */
    fsync: boolean
  }
  cache: {
    /** Life of an L1 entry in the redirector: bounds how long a missed invalidation can survive. */
    l1TtlMs: number
    l1MaxEntries: number
    /** How long "no such link" is remembered by the redirector. */
    negativeTtlMs: number
    /** Budget of every Redis call on the redirect hot path. */
    redisTimeoutMs: number
    /** Budget of the resolve call to the API on a full miss. */
    resolveTimeoutMs: number
    /** How often the redirector reloads the set of verified custom domains (besides every change message). */
    domainRefreshMs: number
  }
  /** True when no engine is configured: one process runs the API and the redirector. */
  embedded: boolean
  /** Outgoing e-mail (verification codes). */
  mail: MailConfig
  /** Stripe Checkout for Pro; unset: the local provider (a confirm page served by this API). */
  stripe: StripeConfig | undefined
  /**
   * CIMD_ALLOW_HTTP_LOOPBACK: a client_id metadata document may also be fetched from a loopback
   * address, over http too (src/modules/oauth/cimd.ts). For tests only: in production it would let any
   * client_id make the server call services on its own machine.
   */
  cimdAllowHttpLoopback: boolean
  /**
   * MCP_ALLOWED_ORIGINS: the web origins whose pages may call /mcp (besides the API's own). Unset: any
   * origin, since an Origin is no credential there (every call needs an at_ token, no cookie is read).
   */
  mcpAllowedOrigins: string[] | undefined
  /** Plan limits (PLAN_FREE_*, PLAN_PRO_*, TAGS_PER_ACCOUNT): enforced and shown from here; unset, DEFAULT_LIMITS (plan-limits.ts). */
  limits: Limits
  /** Human sign-in with GitHub or Google (src/modules/signin): present only when its client id and secret are set. */
  identityProviders: { github?: IdentityProviderConfig; google?: IdentityProviderConfig }
}

/** An OAuth app at GitHub or Google that people sign in with; the endpoints are overridable for tests. */
export interface IdentityProviderConfig {
  clientId: string
  clientSecret: string
  authorizationUrl: string
  tokenUrl: string
  /** Where the verified e-mail is read: GitHub's API base (…/user/emails), Google's userinfo endpoint. */
  userUrl: string
}

export interface MailConfig {
  /** SMTP relay, smtp:// or smtps:// (nodemailer options as query parameters); unset: development delivery. */
  smtpUrl: string | undefined
  /** From header of outgoing mail. */
  from: string
  /** Development delivery (no smtpUrl) appends every message here and to the log. */
  outboxPath: string
}

export interface StripeConfig {
  secretKey: string
  priceMonthly: string
  priceYearly: string
  webhookSecret: string
  /** Base URL of Stripe's API; tests point it at a fake on loopback. */
  apiUrl: string
}

function int(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`)
  const value = Number(raw)
  if (value < min) throw new ConfigError(name, `must be at least ${min}, got ${value}`)
  if (value > max) throw new ConfigError(name, `must be at most ${max}, got ${raw}`)
  return value
}

const BYTE_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }

/** A size in bytes, optionally with a binary unit: 512M, 2G, 65536. */
function bytes(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const match = /^(\d+)([kmg]?)b?$/i.exec(raw.trim())
  if (!match) throw new ConfigError(name, `must be a size in bytes, optionally with K, M or G (e.g. 512M), got "${raw}"`)
  const value = Number(match[1]) * BYTE_UNITS[match[2]!.toLowerCase()]!
  if (value < min) throw new ConfigError(name, `must be at least ${min} bytes, got ${value}`)
  return value
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase()
  if (raw === undefined || raw === '') return fallback
  if (raw === 'true' || raw === '1') return true
  if (raw === 'false' || raw === '0') return false
  throw new ConfigError(name, `must be true or false, got "${env[name]}"`)
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(name, 'is not a valid URL')
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got ${parsed.protocol}`)
  }
  return raw
}

/** REDIS_URL: one server, a cluster or Sentinel (core/redis.ts says how each is written). */
function redisUrlOf(env: Env): string | undefined {
  const raw = env.REDIS_URL
  if (raw === undefined || raw === '') return undefined
  try {
    parseRedisUrl(raw)
  } catch (error) {
    if (error instanceof RedisUrlError) throw new ConfigError('REDIS_URL', error.message)
    throw error
  }
  return raw
}

function secret(env: Env, name: string, embedded: boolean, fallback: (name: string) => string): string {
  const raw = env[name]
  if (raw !== undefined && raw !== '') {
    // 32 characters: the least that keeps an HMAC key or shared secret out of brute-force reach.
    if (raw.length < 32) throw new ConfigError(name, 'must be at least 32 characters')
    return raw
  }
  if (!embedded) throw new ConfigError(name, 'is required when DATABASE_URL, REDIS_URL or CLICKHOUSE_URL is set')
  return fallback(name)
}

/**
 * CLICKHOUSE_CLUSTER: a cluster name as the server's remote_servers spells it, written into ON CLUSTER
 * and Distributed(…) unquoted, hence a plain identifier; chDB (no CLICKHOUSE_URL) is one process.
 */
function clickhouseClusterName(env: Env, clickhouseUrl: string | undefined): string | undefined {
  const raw = env.CLICKHOUSE_CLUSTER?.trim()
  if (!raw) return undefined
  if (!clickhouseUrl) throw new ConfigError('CLICKHOUSE_CLUSTER', 'needs CLICKHOUSE_URL: the embedded chDB is one process, not a cluster')
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(raw)) throw new ConfigError('CLICKHOUSE_CLUSTER', `must be a cluster name of letters, digits and _ (as in remote_servers), got "${raw}"`)
  return raw
}

/** Spec 8: a conversion is attributed to a click of the last 30 days, so raw clicks stay at least that long. */
const CONVERSION_WINDOW_DAYS = 30

/** Days to keep, 0 (the default) for ever; below `min` a setting would break what the service promises. */
function retentionDays(env: Env, name: string, min: number): number {
  const days = int(env, name, 0, 0, 100 * 365)
  if (days !== 0 && days < min) throw new ConfigError(name, `must be 0 (keep for ever) or at least ${min} days, got ${days}`)
  return days
}

/** A secret that may be left unset; when set, as long as any other. */
function optionalSecret(env: Env, name: string): string | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  if (raw.length < 32) throw new ConfigError(name, 'must be at least 32 characters')
  return raw
}

/**
 * HOST: an IP address to listen on (127.0.0.1, 0.0.0.0, ::, ::1) or a name such as localhost. Default
 * 127.0.0.1, so a development start is not reachable from the network unless asked to be.
 */
function listenHost(env: Env): string {
  const raw = env.HOST?.trim()
  if (!raw) return '127.0.0.1'
  if (isIP(raw) === 0 && !/^[a-z0-9.-]+$/i.test(raw)) throw new ConfigError('HOST', `must be an IP address or a host name, got "${raw}"`)
  return raw
}

/**
 * CLICK_SIGNING_KEYS, "kid1:secret1,kid2:secret2": the first signs new click ids, all verify, so a secret
 * rotates by putting a new key first and dropping the old one once its clicks are past the 30-day
 * conversion window. Unset: a key derived from INTERNAL_SECRET, which the API and the redirector already
 * share (in the embedded default the one stored in DATA_DIR, so signatures outlive a restart).
 */
function clickSigningKeys(env: Env, name: string, embedded: boolean, internalSecret: string): ClickSigningKey[] {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') {
    const derived = new Bun.CryptoHasher('sha256', internalSecret).update('click-signing-key').digest('base64url')
    return [{ kid: embedded ? 'e0' : 'i0', secret: derived }]
  }
  const keys = raw.split(',').map((entry) => {
    const colon = entry.indexOf(':')
    const kid = entry.slice(0, colon).trim()
    const secret = entry.slice(colon + 1).trim()
    if (colon < 0 || !KID_PATTERN.test(kid)) throw new ConfigError(name, 'must be "kid:secret" pairs separated by commas, each kid 1-16 of A-Z a-z 0-9 _ -')
    // 32 characters: the least that keeps an HMAC key out of brute-force reach (as secret() requires).
    if (secret.length < 32) throw new ConfigError(name, `secret of key "${kid}" must be at least 32 characters`)
    return { kid, secret }
  })
  if (new Set(keys.map((k) => k.kid)).size !== keys.length) throw new ConfigError(name, 'names a key id twice')
  return keys
}

/** "ip", "ip:port" or "[ipv6]:port", comma-separated: what node:dns Resolver.setServers accepts. */
function dnsServers(env: Env, name: string): string[] | undefined {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return undefined
  return raw.split(',').map((entry) => {
    const server = entry.trim()
    const match = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)|([0-9a-fA-F:]+))(?::(\d{1,5}))?$/.exec(server)
    const ip = match?.[1] ?? match?.[2] ?? (match?.[4] === undefined ? match?.[3] : undefined)
    const port = match?.[4] === undefined ? 53 : Number(match[4])
    if (!ip || isIP(ip) === 0 || port < 1 || port > 65_535) {
      throw new ConfigError(name, `must be a comma-separated list of IP addresses with optional ports (127.0.0.1:5353, [::1]:53), got "${server}"`)
    }
    return server
  })
}

/**
 * TRUSTED_PROXY_HOPS (X-Forwarded-For behind that many proxies) or TRUSTED_IP_HEADER (one address a
 * trusted proxy or CDN sets), never both: they describe two different fronts, and guessing which one is
 * real would let a client choose its address through the other.
 */
function clientIpRule(env: Env): ClientIpRule {
  const header = env.TRUSTED_IP_HEADER?.trim().toLowerCase() || undefined
  const hopsSet = (env.TRUSTED_PROXY_HOPS ?? '') !== ''
  if (header && hopsSet) throw new ConfigError('TRUSTED_PROXY_HOPS', 'and TRUSTED_IP_HEADER are both set; set only one of them')
  if (header) {
    if (!/^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(header)) throw new ConfigError('TRUSTED_IP_HEADER', `must be a header name, got "${header}"`)
    return { from: 'header', header }
  }
  const hops = int(env, 'TRUSTED_PROXY_HOPS', 0, 0)
  // More proxies than this in front of one service is a configuration mistake, not a topology.
  if (hops > 16) throw new ConfigError('TRUSTED_PROXY_HOPS', `must be at most 16, got ${hops}`)
  return hops === 0 ? SOCKET_ADDRESS : { from: 'forwarded-for', hops }
}

/**
 * MCP_ALLOWED_ORIGINS, "https://app.example,http://localhost:6274": web origins exactly as a browser
 * sends them in Origin (scheme, host, port when not the default; no path), compared as given.
 */
function origins(env: Env, name: string): string[] | undefined {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return undefined
  return raw.split(',').map((entry) => {
    const origin = entry.trim()
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      // reported below
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin.toLowerCase()) {
      throw new ConfigError(name, `must be comma-separated web origins such as https://app.example or http://localhost:6274 (scheme, host, optional port; no path or trailing slash), got "${origin}"`)
    }
    return parsed.origin
  })
}

/** From header: an address (optionally "Name <address>"), never a line break (header injection). */
function mailConfig(env: Env, dataDir: string, publicApiUrl: string): MailConfig {
  const from = env.MAIL_FROM || `Link service <no-reply@${new URL(publicApiUrl).hostname}>`
  if (/[\r\n]/.test(from) || !/^([^<>]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(from.trim())) {
    throw new ConfigError('MAIL_FROM', 'must be an e-mail address, optionally as "Name <address>"')
  }
  return {
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    from: from.trim(),
    outboxPath: env.MAIL_OUTBOX || `${dataDir}/outbox.log`,
  }
}

/** Stripe needs all four values or none; each is checked for the shape Stripe gives it. */
function stripeConfig(env: Env): StripeConfig | undefined {
  const secretKey = env.STRIPE_SECRET_KEY
  if (!secretKey) return undefined
  const need = (name: string, prefix: RegExp, shape: string): string => {
    const value = env[name]
    if (!value) throw new ConfigError(name, 'is required when STRIPE_SECRET_KEY is set')
    if (!prefix.test(value)) throw new ConfigError(name, `must look like ${shape}`)
    return value
  }
  if (!/^(sk|rk)_(test|live)_[A-Za-z0-9]+$/.test(secretKey)) throw new ConfigError('STRIPE_SECRET_KEY', 'must look like sk_live_… or sk_test_…')
  return {
    secretKey,
    priceMonthly: need('STRIPE_PRICE_MONTHLY', /^price_[A-Za-z0-9]+$/, 'price_…'),
    priceYearly: need('STRIPE_PRICE_YEARLY', /^price_[A-Za-z0-9]+$/, 'price_…'),
    webhookSecret: need('STRIPE_WEBHOOK_SECRET', /^whsec_[A-Za-z0-9+/=]+$/, 'whsec_…'),
    apiUrl: (url(env, 'STRIPE_API_URL', ['https:', 'http:']) ?? 'https://api.stripe.com').replace(/\/+$/, ''),
  }
}

/** The providers' own endpoints: what an unset *_AUTHORIZATION_URL, *_TOKEN_URL, *_USER_URL means. */
const IDENTITY_PROVIDER_ENDPOINTS = {
  GITHUB: { authorizationUrl: 'https://github.com/login/oauth/authorize', tokenUrl: 'https://github.com/login/oauth/access_token', userUrl: 'https://api.github.com' },
  GOOGLE: {
    authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    userUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
  },
} as const

/** GITHUB_* or GOOGLE_*: client id and secret both or neither; endpoint overrides only for tests. */
function identityProvider(env: Env, name: keyof typeof IDENTITY_PROVIDER_ENDPOINTS): IdentityProviderConfig | undefined {
  const clientId = env[`${name}_CLIENT_ID`]?.trim()
  const clientSecret = env[`${name}_CLIENT_SECRET`]?.trim()
  if (!clientId && !clientSecret) return undefined
  if (!clientId) throw new ConfigError(`${name}_CLIENT_ID`, `is required when ${name}_CLIENT_SECRET is set`)
  if (!clientSecret) throw new ConfigError(`${name}_CLIENT_SECRET`, `is required when ${name}_CLIENT_ID is set`)
  const defaults = IDENTITY_PROVIDER_ENDPOINTS[name]
  const endpoint = (suffix: string, fallback: string) => (url(env, `${name}_${suffix}`, ['https:', 'http:']) ?? fallback).replace(/\/+$/, '')
  return {
    clientId,
    clientSecret,
    authorizationUrl: endpoint('AUTHORIZATION_URL', defaults.authorizationUrl),
    tokenUrl: endpoint('TOKEN_URL', defaults.tokenUrl),
    userUrl: endpoint('USER_URL', defaults.userUrl),
  }
}

/**
 * CONVERSIONS_PER_CLICK, "type:n,…,*:n": one visit signs up or becomes a lead once, so a signed click
 * carries at most one of those by default; orders may repeat (a basket bought in parts), up to 100.
 * The cap bounds what a leaked click signature can attribute.
 */
const DEFAULT_CONVERSION_CAPS = 'signup:1,lead:1,*:100'

function conversionCaps(env: Env, name: string): Record<string, number> {
  const raw = env[name]?.trim() || DEFAULT_CONVERSION_CAPS
  const caps: Record<string, number> = { '*': 100 }
  for (const entry of raw.split(',')) {
    const match = /^\s*([a-z_*][a-z0-9_.-]{0,39})\s*:\s*(\d{1,9})\s*$/i.exec(entry)
    if (!match || Number(match[2]) < 1) throw new ConfigError(name, `"${entry.trim()}" is not type:count (count at least 1), e.g. ${DEFAULT_CONVERSION_CAPS}`)
    caps[match[1]!.toLowerCase()] = Number(match[2])
  }
  return caps
}

/** Beyond a billion a limit means "no limit" anyway; a larger figure is a typo or loses precision. */
const MAX_LIMIT = 1_000_000_000

/**
 * PLAN_<PLAN>_REQUESTS_PER_MINUTE (at least 1: 0 would lock every key out), PLAN_<PLAN>_LINKS_PER_MONTH
 * and PLAN_<PLAN>_CUSTOM_DOMAINS (0 allowed: a plan without any), TAGS_PER_ACCOUNT, and
 * SESSION_REQUESTS_PER_MINUTE (a signed-in session's floor). Unset: the spec's (and 300 for sessions).
 */
function limits(env: Env): Limits {
  const plan = (name: LimitedPlan): PlanLimits => {
    const prefix = `PLAN_${name.toUpperCase()}_`
    const fallback = DEFAULT_LIMITS.plans[name]
    return {
      requestsPerMinute: int(env, `${prefix}REQUESTS_PER_MINUTE`, fallback.requestsPerMinute, 1, MAX_LIMIT),
      linksPerMonth: int(env, `${prefix}LINKS_PER_MONTH`, fallback.linksPerMonth, 0, MAX_LIMIT),
      customDomains: int(env, `${prefix}CUSTOM_DOMAINS`, fallback.customDomains, 0, MAX_LIMIT),
    }
  }
  return {
    plans: { free: plan('free'), pro: plan('pro') },
    tagsPerAccount: int(env, 'TAGS_PER_ACCOUNT', DEFAULT_LIMITS.tagsPerAccount, 0, MAX_LIMIT),
    sessionRequestsPerMinute: int(env, 'SESSION_REQUESTS_PER_MINUTE', DEFAULT_LIMITS.sessionRequestsPerMinute, 1, MAX_LIMIT),
  }
}

export interface ConfigDefaults {
  /**
   * The value of an unset secret in the embedded default. Unset: random per call, for tests. The
   * entry points pass storedSecret (embedded-secrets.ts): generated once into DATA_DIR and reused.
   */
  secret?: (name: string, dataDir: string) => string
  /**
   * The process serves redirects on PORT itself (one-process/main.ts: API and redirector in one), whatever the
   * engines: the short links then live on PORT, and short_url must say so. Otherwise the stand-alone
   * redirector's REDIRECT_PORT.
   */
  singleProcess?: boolean
  /** Where a setting that is unsafe outside tests is reported, once per parse (at boot). Default console.warn. */
  warn?: (line: string) => void
}

export function parseConfig(env: Env, defaults: ConfigDefaults = {}): Config {
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:'])
  const databaseReplicaUrl = url(env, 'DATABASE_REPLICA_URL', ['postgres:', 'postgresql:'])
  if (databaseReplicaUrl && !databaseUrl) throw new ConfigError('DATABASE_REPLICA_URL', 'needs DATABASE_URL: it names a replica of that PostgreSQL server (PGlite has none)')
  const redisUrl = redisUrlOf(env)
  const clickhouseUrl = url(env, 'CLICKHOUSE_URL', ['http:', 'https:'])
  const clickhouseCluster = clickhouseClusterName(env, clickhouseUrl)
  const embedded = !databaseUrl && !redisUrl && !clickhouseUrl

  const port = int(env, 'PORT', 3000, 1)
  const redirectPort = int(env, 'REDIRECT_PORT', embedded || defaults.singleProcess ? port : 3001, 1)
  const shortDomain = (env.SHORT_DOMAIN || `localhost:${redirectPort}`).toLowerCase()
  if (!/^[a-z0-9.-]+(:\d+)?$/.test(shortDomain)) throw new ConfigError('SHORT_DOMAIN', 'must be a host name, optionally with a port')
  const shortBaseUrl = url(env, 'SHORT_BASE_URL', ['http:', 'https:']) ?? `http://${shortDomain}`
  const publicApiUrl = url(env, 'PUBLIC_API_URL', ['http:', 'https:']) ?? `http://localhost:${port}`
  const dataDir = env.DATA_DIR || './data'
  const unsetSecret = defaults.secret ? (name: string) => defaults.secret!(name, dataDir) : () => crypto.randomUUID() + crypto.randomUUID()
  const internalSecret = secret(env, 'INTERNAL_SECRET', embedded, unsetSecret)
  const cimdAllowHttpLoopback = bool(env, 'CIMD_ALLOW_HTTP_LOOPBACK', false)
  const warn = defaults.warn ?? console.warn
  if (cimdAllowHttpLoopback) warn('[config] CIMD_ALLOW_HTTP_LOOPBACK=true is for tests only: client_id metadata documents are fetched from loopback addresses, over http too')

  return {
    port,
    host: listenHost(env),
    metricsToken: optionalSecret(env, 'METRICS_TOKEN'),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', DEFAULT_SHUTDOWN_TIMEOUT_MS, 1000),
    retention: { clicks: retentionDays(env, 'CLICK_RETENTION_DAYS', CONVERSION_WINDOW_DAYS + 1), audit: retentionDays(env, 'AUDIT_RETENTION_DAYS', 1) },
    redirectPort,
    redirectWorkers: int(env, 'REDIRECT_WORKERS', availableParallelism(), 1),
    shortDomain,
    shortBaseUrl: shortBaseUrl.replace(/\/+$/, ''),
    publicApiUrl: publicApiUrl.replace(/\/+$/, ''),
    rootRedirectUrl: url(env, 'ROOT_REDIRECT_URL', ['http:', 'https:']) ?? `${publicApiUrl.replace(/\/+$/, '')}/app`,
    dataDir,
    databaseUrl,
    databaseReplicaUrl,
    databasePreparedStatements: bool(env, 'DATABASE_PREPARED_STATEMENTS', true),
    redisUrl,
    clickhouseUrl,
    clickhouseCluster,
    internalSecret,
    apiInternalUrl: (url(env, 'API_INTERNAL_URL', ['http:', 'https:']) ?? `http://127.0.0.1:${port}`).replace(/\/+$/, ''),
    ipHashSecret: secret(env, 'IP_HASH_SECRET', embedded, unsetSecret),
    clickSigningKeys: clickSigningKeys(env, 'CLICK_SIGNING_KEYS', embedded, internalSecret),
    countryHeader: env.TRUSTED_COUNTRY_HEADER?.toLowerCase() || undefined,
    clientIp: clientIpRule(env),
    dnsServers: dnsServers(env, 'DNS_SERVERS'),
    dnsTimeoutMs: int(env, 'DNS_TIMEOUT_MS', 3000, 1),
    conversionsPerClick: conversionCaps(env, 'CONVERSIONS_PER_CLICK'),
    clicks: {
      // ClickHouse prefers about one insert a second of many rows over many small ones: every insert
      // makes a part that must later be merged. At 50,000 a batch fills only under heavy load; otherwise
      // the interval flushes it.
      batchSize: int(env, 'CLICK_BATCH_SIZE', 50_000, 1),
      flushIntervalMs: int(env, 'CLICK_FLUSH_MS', 1000, 10),
      spoolDir: env.CLICK_SPOOL_DIR || `${dataDir}/click-spool`,
      // About 4 million clicks (~250 bytes each on disk): half an hour of ClickHouse outage at 2,000/s.
      maxSpoolBytes: bytes(env, 'CLICK_SPOOL_MAX_BYTES', 1024 ** 3, 1024 * 1024),
      // Off: a write() in the page cache already survives the process being killed; fsync is for a machine
      // that may lose power, and costs a disk flush per group commit on the serving thread.
      fsync: bool(env, 'CLICK_FSYNC', false),
    },
    audit: {
      spoolDir: env.AUDIT_SPOOL_DIR || `${dataDir}/audit-spool`,
      // One insert a second of up to 1,000 events: a few parts a second at most, as ClickHouse prefers.
      batchSize: int(env, 'AUDIT_BATCH_SIZE', 1000, 1),
      flushIntervalMs: int(env, 'AUDIT_FLUSH_MS', 1000, 10),
      // About 900,000 events (~300 bytes each on disk): hours of ClickHouse outage at Agent call rates.
      maxSpoolBytes: bytes(env, 'AUDIT_SPOOL_MAX_BYTES', 256 * 1024 ** 2, 1024 * 1024),
      // Off, as for clicks: a write() in the page cache survives the process being killed.
      fsync: bool(env, 'AUDIT_FSYNC', false),
    },
    cache: {
      l1TtlMs: int(env, 'L1_TTL_MS', 5000, 0),
      l1MaxEntries: int(env, 'L1_MAX_ENTRIES', 100_000, 1),
      negativeTtlMs: int(env, 'NEGATIVE_TTL_MS', 2000, 0),
      redisTimeoutMs: int(env, 'REDIS_TIMEOUT_MS', 50, 1),
      resolveTimeoutMs: int(env, 'RESOLVE_TIMEOUT_MS', 1000, 1),
      domainRefreshMs: int(env, 'DOMAIN_REFRESH_MS', 60_000, 100),
    },
    embedded,
    mail: mailConfig(env, dataDir, publicApiUrl),
    stripe: stripeConfig(env),
    cimdAllowHttpLoopback,
    mcpAllowedOrigins: origins(env, 'MCP_ALLOWED_ORIGINS'),
    limits: limits(env),
    identityProviders: { github: identityProvider(env, 'GITHUB'), google: identityProvider(env, 'GOOGLE') },
  }
}
