// Configuration, parsed once per process at boot. Code reads the returned object, never process.env.
// Each variable is declared once in core/config-schema.ts (kind, default, bounds, description); this file
// reads the environment through that schema and derives the Config the code uses: the rules between
// variables (both or neither, one needs another) and the defaults that depend on another variable.
// Every failure names the variable so a bad deployment stops at start with a message a person can act on.
import type { Static } from '@sinclair/typebox'
import { availableParallelism } from 'node:os'
import type { ClickSigningKey } from './click-id'
import { SOCKET_ADDRESS, type ClientIpRule } from './client-ip'
import { ConfigError, readEnv, type Env } from './config-kinds'
import { ENV_SCHEMA, type LOG_LEVELS } from './config-schema'
import type { Limits, PlanLimits } from './plan-limits'

export { ConfigError }

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
  /** Guest links per network and UTC day (GUEST_LINKS_PER_NETWORK_PER_DAY) and the network's prefixes. */
  guestNetwork: { linksPerDay: number; prefixes: { v4: number; v6: number } }
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
  /** LOG_LEVEL: what the API process's logger (src/lib/log.ts) writes. */
  logLevel: (typeof LOG_LEVELS)[number]
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
  /** The destination block lists and the allowlist (src/modules/abuse/blocklists.ts). */
  blocklists: BlocklistConfig
  /** ADMIN_EMAILS: the operators' e-mail addresses, lower-case. */
  adminEmails: string[]
  /** REPORTS_TO_FLAG: distinct networks whose reports of a guest link flag it. */
  reportsToFlag: number
  /** The optional reputation checks of new destinations (src/modules/reputation): none configured by default. */
  reputation: ReputationConfig
  /** Outgoing webhooks (src/modules/webhooks). */
  webhooks: WebhooksConfig
}

export interface WebhooksConfig {
  /** WEBHOOK_RETRY_SCHEDULE: seconds before each retry; after the last one a delivery is failed. */
  retryScheduleSeconds: number[]
  /** WEBHOOK_LEASE_SECONDS: how long a claimed delivery stays with its process before another may send it. */
  leaseSeconds: number
  /** WEBHOOKS_ALLOW_PRIVATE_TARGETS, unless NODE_ENV=production: webhook URLs may be on loopback, over http too. Tests only. */
  allowPrivateTargets: boolean
}

export interface ReputationConfig {
  /** SAFE_DNS_URL: a filtering DNS-over-HTTPS resolver (RFC 8484 wire format); undefined: no DNS check. */
  safeDnsUrl: string | undefined
  /** WEB_RISK_URL and WEB_RISK_KEY (its query may not be logged: the key goes there); present when the key is set. */
  webRisk: { url: string; key: string } | undefined
  /** REPUTATION_ALLOW_HTTP_LOOPBACK, unless NODE_ENV=production: both services may be on loopback, over http too. Tests only. */
  allowHttpLoopback: boolean
}

export interface BlocklistConfig {
  /** BLOCKLIST_FILES: paths of lists on disk. */
  files: string[]
  /** BLOCKLIST_URLS: lists fetched over https (the text as given: its query may hold a key, so it is never logged). */
  urls: string[]
  /** BLOCKLIST_REFRESH: how often the URLs are fetched again and changed files read again. */
  refreshMs: number
  /** BLOCKLIST_ALLOW_HTTP_LOOPBACK, unless NODE_ENV=production: list URLs may be on loopback, over http too. Tests only. */
  allowHttpLoopback: boolean
  /** ALLOWLIST_HOSTS: never blocked, nor their subdomains (lower-case, punycode, no trailing dot). */
  allowlistHosts: string[]
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
  const vars = readEnv(ENV_SCHEMA, env)
  needs(vars, 'DATABASE_REPLICA_URL', 'DATABASE_URL', 'it names a replica of that PostgreSQL server (PGlite has none)')
  needs(vars, 'CLICKHOUSE_CLUSTER', 'CLICKHOUSE_URL', 'the embedded chDB is one process, not a cluster')
  const embedded = !vars.DATABASE_URL && !vars.REDIS_URL && !vars.CLICKHOUSE_URL

  const port = vars.PORT
  const redirectPort = vars.REDIRECT_PORT ?? (embedded || defaults.singleProcess ? port : 3001)
  const shortDomain = vars.SHORT_DOMAIN ?? `localhost:${redirectPort}`
  const publicApiUrl = withoutTrailingSlash(vars.PUBLIC_API_URL ?? `http://localhost:${port}`)
  const dataDir = vars.DATA_DIR
  const unsetSecret = defaults.secret ? (name: string) => defaults.secret!(name, dataDir) : () => crypto.randomUUID() + crypto.randomUUID()
  /** An unset shared secret: required with any engine configured, otherwise the embedded default's. */
  const secret = (name: 'INTERNAL_SECRET' | 'IP_HASH_SECRET') => {
    if (vars[name] !== undefined) return vars[name]
    if (!embedded) throw new ConfigError(name, 'is required when DATABASE_URL, REDIS_URL or CLICKHOUSE_URL is set')
    return unsetSecret(name)
  }
  const internalSecret = secret('INTERNAL_SECRET')
  const warn = defaults.warn ?? console.warn
  if (vars.CIMD_ALLOW_HTTP_LOOPBACK) warn('[config] CIMD_ALLOW_HTTP_LOOPBACK=true is for tests only: client_id metadata documents are fetched from loopback addresses, over http too')

  return {
    port,
    host: vars.HOST,
    metricsToken: vars.METRICS_TOKEN,
    shutdownTimeoutMs: vars.SHUTDOWN_TIMEOUT_MS,
    retention: { clicks: vars.CLICK_RETENTION_DAYS, audit: vars.AUDIT_RETENTION_DAYS },
    redirectPort,
    redirectWorkers: vars.REDIRECT_WORKERS ?? availableParallelism(),
    shortDomain,
    shortBaseUrl: withoutTrailingSlash(vars.SHORT_BASE_URL ?? `http://${shortDomain}`),
    publicApiUrl,
    rootRedirectUrl: vars.ROOT_REDIRECT_URL ?? `${publicApiUrl}/app`,
    dataDir,
    databaseUrl: vars.DATABASE_URL,
    databaseReplicaUrl: vars.DATABASE_REPLICA_URL,
    databasePreparedStatements: vars.DATABASE_PREPARED_STATEMENTS,
    redisUrl: vars.REDIS_URL,
    clickhouseUrl: vars.CLICKHOUSE_URL,
    clickhouseCluster: vars.CLICKHOUSE_CLUSTER,
    internalSecret,
    apiInternalUrl: withoutTrailingSlash(vars.API_INTERNAL_URL ?? `http://127.0.0.1:${port}`),
    ipHashSecret: secret('IP_HASH_SECRET'),
    clickSigningKeys: vars.CLICK_SIGNING_KEYS ?? [derivedSigningKey(internalSecret, embedded)],
    countryHeader: vars.TRUSTED_COUNTRY_HEADER,
    guestNetwork: { linksPerDay: vars.GUEST_LINKS_PER_NETWORK_PER_DAY, prefixes: { v4: vars.GUEST_NETWORK_IPV4_PREFIX, v6: vars.GUEST_NETWORK_IPV6_PREFIX } },
    clientIp: clientIpRule(vars),
    dnsServers: vars.DNS_SERVERS,
    dnsTimeoutMs: vars.DNS_TIMEOUT_MS,
    conversionsPerClick: vars.CONVERSIONS_PER_CLICK,
    clicks: {
      batchSize: vars.CLICK_BATCH_SIZE,
      flushIntervalMs: vars.CLICK_FLUSH_MS,
      spoolDir: vars.CLICK_SPOOL_DIR ?? `${dataDir}/click-spool`,
      maxSpoolBytes: vars.CLICK_SPOOL_MAX_BYTES,
      fsync: vars.CLICK_FSYNC,
    },
    audit: {
      spoolDir: vars.AUDIT_SPOOL_DIR ?? `${dataDir}/audit-spool`,
      batchSize: vars.AUDIT_BATCH_SIZE,
      flushIntervalMs: vars.AUDIT_FLUSH_MS,
      maxSpoolBytes: vars.AUDIT_SPOOL_MAX_BYTES,
      fsync: vars.AUDIT_FSYNC,
    },
    cache: {
      l1TtlMs: vars.L1_TTL_MS,
      l1MaxEntries: vars.L1_MAX_ENTRIES,
      negativeTtlMs: vars.NEGATIVE_TTL_MS,
      redisTimeoutMs: vars.REDIS_TIMEOUT_MS,
      resolveTimeoutMs: vars.RESOLVE_TIMEOUT_MS,
      domainRefreshMs: vars.DOMAIN_REFRESH_MS,
    },
    embedded,
    logLevel: vars.LOG_LEVEL,
    mail: {
      smtpUrl: vars.SMTP_URL,
      from: vars.MAIL_FROM ?? `Link service <no-reply@${new URL(publicApiUrl).hostname}>`,
      outboxPath: vars.MAIL_OUTBOX ?? `${dataDir}/outbox.log`,
    },
    stripe: stripeConfig(vars),
    cimdAllowHttpLoopback: vars.CIMD_ALLOW_HTTP_LOOPBACK,
    mcpAllowedOrigins: vars.MCP_ALLOWED_ORIGINS,
    limits: limits(vars),
    identityProviders: { github: identityProvider(vars, 'GITHUB'), google: identityProvider(vars, 'GOOGLE') },
    blocklists: blocklistConfig(vars, warn),
    adminEmails: adminEmails(vars),
    reportsToFlag: vars.REPORTS_TO_FLAG,
    reputation: reputationConfig(vars, env, warn),
    webhooks: webhooksConfig(vars, warn),
  }
}

/** The environment as the schema reads it: every variable typed, checked, defaulted. */
type Vars = Static<typeof ENV_SCHEMA>

const withoutTrailingSlash = (url: string) => url.replace(/\/+$/, '')

/** `name` set without `other` is refused: it only means something beside it. */
function needs(vars: Vars, name: keyof Vars, other: keyof Vars, why: string): void {
  if (vars[name] !== undefined && vars[other] === undefined) throw new ConfigError(name, `needs ${other}: ${why}`)
}

/**
 * Unset CLICK_SIGNING_KEYS: a key derived from INTERNAL_SECRET, which the API and the redirector already
 * share (in the embedded default the one stored in DATA_DIR, so signatures outlive a restart).
 */
function derivedSigningKey(internalSecret: string, embedded: boolean): ClickSigningKey {
  const secret = new Bun.CryptoHasher('sha256', internalSecret).update('click-signing-key').digest('base64url')
  return { kid: embedded ? 'e0' : 'i0', secret }
}

/**
 * TRUSTED_PROXY_HOPS (X-Forwarded-For behind that many proxies) or TRUSTED_IP_HEADER (one address a
 * trusted proxy or CDN sets), never both: they describe two different fronts, and guessing which one is
 * real would let a client choose its address through the other.
 */
function clientIpRule(vars: Vars): ClientIpRule {
  const hops = vars.TRUSTED_PROXY_HOPS
  const header = vars.TRUSTED_IP_HEADER
  if (header !== undefined && hops !== undefined) throw new ConfigError('TRUSTED_PROXY_HOPS', 'and TRUSTED_IP_HEADER are both set; set only one of them')
  if (header !== undefined) return { from: 'header', header }
  return hops ? { from: 'forwarded-for', hops } : SOCKET_ADDRESS
}

/** Stripe needs all four values or none. */
function stripeConfig(vars: Vars): StripeConfig | undefined {
  const secretKey = vars.STRIPE_SECRET_KEY
  if (secretKey === undefined) return undefined
  const need = (name: 'STRIPE_PRICE_MONTHLY' | 'STRIPE_PRICE_YEARLY' | 'STRIPE_WEBHOOK_SECRET') => {
    if (vars[name] === undefined) throw new ConfigError(name, 'is required when STRIPE_SECRET_KEY is set')
    return vars[name]
  }
  return {
    secretKey,
    priceMonthly: need('STRIPE_PRICE_MONTHLY'),
    priceYearly: need('STRIPE_PRICE_YEARLY'),
    webhookSecret: need('STRIPE_WEBHOOK_SECRET'),
    apiUrl: withoutTrailingSlash(vars.STRIPE_API_URL),
  }
}

/** GITHUB_* or GOOGLE_*: client id and secret both or neither; the endpoints are the provider's unless set. */
function identityProvider(vars: Vars, name: 'GITHUB' | 'GOOGLE'): IdentityProviderConfig | undefined {
  const clientId = vars[`${name}_CLIENT_ID`]
  const clientSecret = vars[`${name}_CLIENT_SECRET`]
  if (clientId === undefined && clientSecret === undefined) return undefined
  if (clientId === undefined) throw new ConfigError(`${name}_CLIENT_ID`, `is required when ${name}_CLIENT_SECRET is set`)
  if (clientSecret === undefined) throw new ConfigError(`${name}_CLIENT_SECRET`, `is required when ${name}_CLIENT_ID is set`)
  return {
    clientId,
    clientSecret,
    authorizationUrl: withoutTrailingSlash(vars[`${name}_AUTHORIZATION_URL`]),
    tokenUrl: withoutTrailingSlash(vars[`${name}_TOKEN_URL`]),
    userUrl: withoutTrailingSlash(vars[`${name}_USER_URL`]),
  }
}

function limits(vars: Vars): Limits {
  const plan = (name: 'FREE' | 'PRO'): PlanLimits => ({
    requestsPerMinute: vars[`PLAN_${name}_REQUESTS_PER_MINUTE`],
    linksPerMonth: vars[`PLAN_${name}_LINKS_PER_MONTH`],
    customDomains: vars[`PLAN_${name}_CUSTOM_DOMAINS`],
  })
  return { plans: { free: plan('FREE'), pro: plan('PRO') }, tagsPerAccount: vars.TAGS_PER_ACCOUNT, sessionRequestsPerMinute: vars.SESSION_REQUESTS_PER_MINUTE }
}

/** The items of a comma-separated setting, trimmed, blanks dropped. */
const commaList = (text: string | undefined) =>
  (text ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')

const DURATION_UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const MIN_BLOCKLIST_REFRESH_MS = 10_000
// A week; a timer of more than 2^31 - 1 ms (about 24.8 days) would fire at once.
const MAX_BLOCKLIST_REFRESH_MS = 7 * 86_400_000

/**
 * BLOCKLIST_*, ALLOWLIST_HOSTS. A list URL must be https, or http with BLOCKLIST_ALLOW_HTTP_LOOPBACK (which
 * the fetch then holds to loopback). That setting is for tests: with NODE_ENV=production it is ignored,
 * and either way the start says so.
 */
function blocklistConfig(vars: Vars, warn: (line: string) => void): BlocklistConfig {
  const refresh = vars.BLOCKLIST_REFRESH
  const refreshMs = Number(refresh.slice(0, -1)) * DURATION_UNIT_MS[refresh.slice(-1)]!
  if (refreshMs < MIN_BLOCKLIST_REFRESH_MS || refreshMs > MAX_BLOCKLIST_REFRESH_MS) throw new ConfigError('BLOCKLIST_REFRESH', `must be from 10s to 7d, got ${refresh}`)
  const production = vars.NODE_ENV === 'production'
  const allowHttpLoopback = vars.BLOCKLIST_ALLOW_HTTP_LOOPBACK && !production
  if (vars.BLOCKLIST_ALLOW_HTTP_LOOPBACK) {
    warn(
      production
        ? '[config] BLOCKLIST_ALLOW_HTTP_LOOPBACK=true is ignored because NODE_ENV=production: block lists are fetched over https from public addresses only'
        : '[config] BLOCKLIST_ALLOW_HTTP_LOOPBACK=true is for tests only: block lists may be fetched from loopback addresses, over http too',
    )
  }
  const urls = commaList(vars.BLOCKLIST_URLS)
  for (const text of urls) {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      // Not the text: a list URL may carry a key in its query.
      throw new ConfigError('BLOCKLIST_URLS', 'holds an entry that is not a valid URL')
    }
    const shown = `${url.origin}${url.pathname}`
    if (url.protocol === 'http:' && !allowHttpLoopback) throw new ConfigError('BLOCKLIST_URLS', `${shown} must use https (http only on loopback with BLOCKLIST_ALLOW_HTTP_LOOPBACK=true, for tests)`)
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigError('BLOCKLIST_URLS', `${shown} must use https`)
  }
  const allowlistHosts = commaList(vars.ALLOWLIST_HOSTS).map((text) => {
    let url: URL | undefined
    try {
      url = new URL(`http://${text.includes(':') && !text.startsWith('[') ? `[${text}]` : text}/`)
    } catch {
      // reported below
    }
    if (!url || url.host !== url.hostname || url.pathname !== '/' || url.username !== '' || url.search !== '' || url.hash !== '') {
      throw new ConfigError('ALLOWLIST_HOSTS', `must be comma-separated host names, got ${JSON.stringify(text)}`)
    }
    return url.hostname.replace(/\.+$/, '')
  })
  return { files: commaList(vars.BLOCKLIST_FILES), urls, refreshMs, allowHttpLoopback, allowlistHosts }
}

/** ADMIN_EMAILS: each an address (lower-cased by the schema). */
function adminEmails(vars: Vars): string[] {
  const emails = commaList(vars.ADMIN_EMAILS)
  const bad = emails.find((email) => !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
  if (bad !== undefined) throw new ConfigError('ADMIN_EMAILS', `must be comma-separated e-mail addresses, got ${JSON.stringify(bad)}`)
  return emails
}

/**
 * SAFE_DNS_URL, WEB_RISK_*: each https, or http with REPUTATION_ALLOW_HTTP_LOOPBACK (which the fetch then
 * holds to loopback). That setting is for tests: with NODE_ENV=production it is ignored, and either way
 * the start says so.
 */
function reputationConfig(vars: Vars, env: Env, warn: (line: string) => void): ReputationConfig {
  const production = env.NODE_ENV?.trim() === 'production'
  const allowHttpLoopback = vars.REPUTATION_ALLOW_HTTP_LOOPBACK && !production
  if (vars.REPUTATION_ALLOW_HTTP_LOOPBACK) {
    warn(
      production
        ? '[config] REPUTATION_ALLOW_HTTP_LOOPBACK=true is ignored because NODE_ENV=production: SAFE_DNS_URL and WEB_RISK_URL are called over https on public addresses only'
        : '[config] REPUTATION_ALLOW_HTTP_LOOPBACK=true is for tests only: SAFE_DNS_URL and WEB_RISK_URL may be on loopback addresses, over http too',
    )
  }
  for (const name of ['SAFE_DNS_URL', 'WEB_RISK_URL'] as const) {
    const text = vars[name]
    if (text === undefined || allowHttpLoopback) continue
    // Not the text: WEB_RISK_URL may carry a key in its query.
    const url = new URL(text)
    if (url.protocol === 'http:') throw new ConfigError(name, `${url.origin}${url.pathname} must use https (http only on loopback with REPUTATION_ALLOW_HTTP_LOOPBACK=true, for tests)`)
  }
  return {
    safeDnsUrl: vars.SAFE_DNS_URL,
    webRisk: vars.WEB_RISK_KEY === undefined ? undefined : { url: vars.WEB_RISK_URL, key: vars.WEB_RISK_KEY },
    allowHttpLoopback,
  }
}

/** A retry a week after the one before is as far as a delivery is worth keeping; 20 retries are plenty. */
const MAX_WEBHOOK_RETRY_SECONDS = 7 * 86_400
const MAX_WEBHOOK_RETRIES = 20

/**
 * WEBHOOK_RETRY_SCHEDULE, WEBHOOK_LEASE_SECONDS, WEBHOOKS_ALLOW_PRIVATE_TARGETS. The last is for tests: with NODE_ENV=production
 * it is ignored, and either way the start says so.
 */
function webhooksConfig(vars: Vars, warn: (line: string) => void): WebhooksConfig {
  const retryScheduleSeconds = vars.WEBHOOK_RETRY_SCHEDULE.split(',').map((item) => Number(item.trim()))
  if (retryScheduleSeconds.length > MAX_WEBHOOK_RETRIES) throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', `has ${retryScheduleSeconds.length} retries; at most ${MAX_WEBHOOK_RETRIES}`)
  const out = retryScheduleSeconds.find((seconds) => seconds < 1 || seconds > MAX_WEBHOOK_RETRY_SECONDS)
  if (out !== undefined) throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', `must be seconds from 1 to ${MAX_WEBHOOK_RETRY_SECONDS}, got ${out}`)
  const production = vars.NODE_ENV === 'production'
  if (vars.WEBHOOKS_ALLOW_PRIVATE_TARGETS) {
    warn(
      production
        ? '[config] WEBHOOKS_ALLOW_PRIVATE_TARGETS=true is ignored because NODE_ENV=production: webhooks are sent over https to public addresses only'
        : '[config] WEBHOOKS_ALLOW_PRIVATE_TARGETS=true is for tests only: webhooks may be sent to loopback addresses, over http too',
    )
  }
  return { retryScheduleSeconds, leaseSeconds: vars.WEBHOOK_LEASE_SECONDS, allowPrivateTargets: vars.WEBHOOKS_ALLOW_PRIVATE_TARGETS && !production }
}
