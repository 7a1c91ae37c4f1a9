// Every environment variable of the service, declared once: its kind (core/config-kinds.ts), default,
// bounds and description, grouped as docs/configuration.md shows them (`npm run docs:config` writes that
// table from here). core/config.ts reads the environment through this schema only and derives the
// Config the code uses: the rules between variables and the defaults that depend on another live there.
import { Type } from '@sinclair/typebox'
import { KID_PATTERN } from './click-id'
import { Setting } from './config-kinds'
import { DEFAULT_LIMITS, type PlanLimits } from './plan-limits'
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from './shutdown'

/** The levels of the API process's logger (pino's, src/lib/log.ts). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** A conversion is attributed to a click of the last 30 days, so raw clicks stay at least that long. */
const CONVERSION_WINDOW_DAYS = 30

/** Quick retries for a blip, then hours apart, the last a day after the one before: about 45 hours in all. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = '5,30,120,600,1800,7200,21600,43200,86400'

/** Beyond a billion a limit means "no limit" anyway; a larger figure is a typo or loses precision. */
const MAX_LIMIT = 1_000_000_000

const PORT = { minimum: 1, maximum: 65_535 }

/** Each setting of `settings` tagged with the heading it is listed under. */
function group<S extends Record<string, object>>(heading: string, settings: S): S {
  for (const setting of Object.values(settings)) Object.assign(setting, { group: heading })
  return settings
}

/**
 * PLAN_<PLAN>_REQUESTS_PER_MINUTE (at least 1: 0 would lock every key out), PLAN_<PLAN>_LINKS_PER_MONTH
 * and PLAN_<PLAN>_CUSTOM_DOMAINS (0 allowed: a plan without any); unset, the spec's figures.
 */
function planLimits<P extends 'FREE' | 'PRO'>(plan: P, name: string, limits: PlanLimits) {
  return {
    [`PLAN_${plan}_REQUESTS_PER_MINUTE`]: Setting.integer({
      default: limits.requestsPerMinute,
      minimum: 1,
      maximum: MAX_LIMIT,
      description: `requests a minute per credential on ${name} (each API key, Agent and sign-in session has its own minute)`,
    }),
    [`PLAN_${plan}_LINKS_PER_MONTH`]: Setting.integer({
      default: limits.linksPerMonth,
      minimum: 0,
      maximum: MAX_LIMIT,
      description: `links an account on ${name} creates per calendar month (UTC); beyond it 429 \`LINK_QUOTA_EXCEEDED\``,
    }),
    [`PLAN_${plan}_CUSTOM_DOMAINS`]: Setting.integer({
      default: limits.customDomains,
      minimum: 0,
      maximum: MAX_LIMIT,
      description: `custom domains an account on ${name} may add; beyond it 403 \`DOMAIN_LIMIT_REACHED\``,
    }),
  } as Record<`PLAN_${P}_${'REQUESTS_PER_MINUTE' | 'LINKS_PER_MONTH' | 'CUSTOM_DOMAINS'}`, ReturnType<typeof Setting.integer<{ default: number; description: string }>>>
}

/** An OAuth app people sign in with: its client id and secret (both or neither), its endpoints overridable for tests. */
function identityProvider<P extends 'GITHUB' | 'GOOGLE'>(
  provider: P,
  about: { name: string; app: string; callback: string; authorizationUrl: string; tokenUrl: string; userUrl: string; user: string },
) {
  const endpoint = (url: string, what: string) => Setting.url({ default: url, protocols: ['https:', 'http:'], description: `${about.name}'s ${what}; set for tests only` })
  return {
    [`${provider}_CLIENT_ID`]: Setting.text({
      unset: `no ${about.name} sign-in`,
      description: `client id of ${about.app} (callback \`<PUBLIC_API_URL>${about.callback}\`); needs \`${provider}_CLIENT_SECRET\``,
    }),
    [`${provider}_CLIENT_SECRET`]: Setting.text({ secret: true, unset: `no ${about.name} sign-in`, description: `its client secret; needs \`${provider}_CLIENT_ID\`` }),
    [`${provider}_AUTHORIZATION_URL`]: endpoint(about.authorizationUrl, 'authorization endpoint'),
    [`${provider}_TOKEN_URL`]: endpoint(about.tokenUrl, 'token endpoint'),
    [`${provider}_USER_URL`]: endpoint(about.userUrl, about.user),
  } as Record<`${P}_${'CLIENT_ID' | 'CLIENT_SECRET'}`, ReturnType<typeof Setting.text<{ description: string }>>> &
    Record<`${P}_${'AUTHORIZATION_URL' | 'TOKEN_URL' | 'USER_URL'}`, ReturnType<typeof endpoint>>
}

export const ENV_SCHEMA = Type.Object({
  ...group('Stores', {
    DATABASE_URL: Setting.url({ protocols: ['postgres:', 'postgresql:'], unset: 'PGlite under `DATA_DIR`', description: 'PostgreSQL' }),
    DATABASE_REPLICA_URL: Setting.url({
      protocols: ['postgres:', 'postgresql:'],
      unset: 'every read on `DATABASE_URL`',
      description:
        "a streaming replica of `DATABASE_URL` (needed) for the links list, one link and the statistics' link lookup. The list may lag by the replication delay; one link not yet on the replica is read from the primary; authentication never reads it; a replica that is down sends its reads to the primary (`/ready` shows it, not required)",
    }),
    DATABASE_PREPARED_STATEMENTS: Setting.boolean({
      default: true,
      description:
        'with `DATABASE_URL`: each API connection keeps the queries it runs as named prepared statements, so a repeated query is one round trip and is not parsed and planned again. Set `false` behind a pooler in transaction mode that cannot keep them (PgBouncer before 1.21, or without `max_prepared_statements`); [scaling.md](scaling.md#connection-poolers-and-prepared-statements)',
    }),
    REDIS_URL: Setting.redisUrl({
      unset: 'in-process cache and limiter',
      description:
        'Redis: one server (`redis://`, `rediss://`), a Redis Cluster (`redis+cluster://host:port,host:port`) or Sentinel (`redis+sentinel://host:26379,host:26379/primary`; [scaling.md](scaling.md#redis) has every form); the stand-alone redirector needs it',
    }),
    CLICKHOUSE_URL: Setting.url({
      protocols: ['http:', 'https:'],
      unset: 'chDB under `DATA_DIR`',
      description: 'ClickHouse HTTP interface (`http://user:pass@host:8123`); the stand-alone redirector needs it',
    }),
    CLICKHOUSE_CLUSTER: Setting.text({
      pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
      shape: 'a cluster name of letters, digits and _ (as in remote_servers)',
      unset: 'one ClickHouse server',
      description:
        "with `CLICKHOUSE_URL` (needed): the cluster (as named in the server's `remote_servers`) the migrations create replicated `<table>_local` tables and `Distributed` `<table>` tables on, `ON CLUSTER`; needs Keeper, the `{shard}`/`{replica}` macros and `distributed_foreground_insert = 1` in the user's profile ([scaling.md](scaling.md#clickhouse))",
    }),
    DATA_DIR: Setting.path({ default: './data', description: 'files of the embedded engines, their generated secrets and the spools' }),
    CLICK_RETENTION_DAYS: Setting.days({
      default: 0,
      minimum: CONVERSION_WINDOW_DAYS + 1,
      maximum: 100 * 365,
      shape: `0 (keep for ever) or at least ${CONVERSION_WINDOW_DAYS + 1} days (at most ${100 * 365})`,
      description: `days raw clicks (\`clicks_v1\`) are kept; 0: for ever. At least ${CONVERSION_WINDOW_DAYS + 1}: conversions are attributed to clicks of the last ${CONVERSION_WINDOW_DAYS} days. Statistics read the hourly rollup, which is kept for ever, so every period (ALL too) is unaffected`,
    }),
    AUDIT_RETENTION_DAYS: Setting.days({
      default: 0,
      minimum: 1,
      maximum: 100 * 365,
      shape: `0 (keep for ever) or at least 1 day (at most ${100 * 365})`,
      description: 'days Agent audit events are kept; 0: for ever',
    }),
  }),
  ...group('Serving', {
    PORT: Setting.integer({ default: 3000, ...PORT, description: 'API port (the whole product in the embedded default)' }),
    HOST: Setting.host({
      default: '127.0.0.1',
      shape: 'an IP address or a host name',
      description: 'address every server of the process listens on (`0.0.0.0` or `::` for every interface); the container images set `0.0.0.0`',
    }),
    REDIRECT_PORT: Setting.integer({ ...PORT, unset: '3001; `PORT` in the embedded default and under `npm start`, which serves links itself', description: 'port of `redirect/main.ts`' }),
    REDIRECT_WORKERS: Setting.integer({
      minimum: 1,
      unset: "the machine's cores",
      description:
        'redirector processes of `redirect/main.ts` sharing `REDIRECT_PORT` (`reusePort`), each with its own L1 and click spool (`CLICK_SPOOL_DIR/worker-<i>`); see [production.md](production.md#every-core-redirect_workers). `1`: one process, no supervisor. `npm start` (the embedded default) is one process whatever this says',
    }),
    SHORT_DOMAIN: Setting.text({
      pattern: '^[a-z0-9.-]+(:\\d+)?$',
      lowercase: true,
      shape: 'a host name, optionally with a port',
      unset: '`localhost:<REDIRECT_PORT>`',
      description: 'host of the default short links: the API writes it into `short_url`, the redirector serves it, so give both the same',
    }),
    SHORT_BASE_URL: Setting.url({ protocols: ['http:', 'https:'], unset: '`http://<SHORT_DOMAIN>`', description: 'base of `short_url`' }),
    PUBLIC_API_URL: Setting.url({ protocols: ['http:', 'https:'], unset: '`http://localhost:<PORT>`', description: 'base of links the API hands out (upgrade hints, sign-in callbacks)' }),
    ROOT_REDIRECT_URL: Setting.url({
      protocols: ['http:', 'https:'],
      unset: '`<PUBLIC_API_URL>/app`',
      description: 'where the root (`/`) of the default short domain sends people (302): the dashboard unless set, e.g. to your home page',
    }),
    API_INTERNAL_URL: Setting.url({ protocols: ['http:', 'https:'], unset: '`http://127.0.0.1:<PORT>`', description: 'where the redirector asks the API on a cache miss' }),
    SHUTDOWN_TIMEOUT_MS: Setting.integer({
      default: DEFAULT_SHUTDOWN_TIMEOUT_MS,
      minimum: 1000,
      unit: 'ms',
      description: "longest a SIGTERM's drain may take; past it the process exits 1 (what was not shipped waits in the spools)",
    }),
    METRICS_TOKEN: Setting.secret({ unset: '`/metrics` is off (404)', description: 'bearer secret of `/metrics` on both processes; give Prometheus `authorization: {credentials: …}`' }),
    LOG_LEVEL: Setting.oneOf(LOG_LEVELS, {
      default: 'info',
      description: 'what the API process (and `npm start`) logs; `debug` adds probes and `/internal` lookups; see [production.md](production.md#logs). The redirector logs only its start and outages',
    }),
  }),
  ...group('Secrets and click signatures', {
    INTERNAL_SECRET: Setting.secret({
      unset: 'embedded: generated once into `DATA_DIR/secrets.json`; required otherwise',
      description:
        'shared secret of the API and the redirector (the resolve endpoint); it also keys the e-mailed and sign-in codes, the session CSRF tokens and, unless `CLICK_SIGNING_KEYS` is set, the click signatures',
    }),
    IP_HASH_SECRET: Setting.secret({
      unset: 'embedded: generated once into `DATA_DIR/secrets.json`; required otherwise',
      description: 'key of the hash that stands for a client IP wherever one is stored',
    }),
    CLICK_SIGNING_KEYS: Setting.clickKeys({
      kidPattern: KID_PATTERN.source,
      shape: '"kid:secret" pairs separated by commas, each kid 1-16 of A-Z a-z 0-9 _ -',
      unset: 'derived from `INTERNAL_SECRET` (kid `i0`, `e0` when embedded)',
      description:
        '`kid:secret,kid2:secret2` (secrets ≥ 32 characters): the first signs Pro click ids (`mu_sig`), all verify, so a key rotates by putting a new one first and dropping the old one once its clicks are past the 30-day conversion window',
    }),
    CONVERSIONS_PER_CLICK: Setting.typeCounts({
      default: { signup: 1, lead: 1, '*': 100 },
      minimum: 1,
      maximum: 999_999_999,
      shape: 'type:count (count at least 1), e.g. signup:1,lead:1,*:100',
      description:
        'most conversions of a type one signed click (`mu_sig`) may carry, `*` for the other types: a visit signs up or becomes a lead once, orders may repeat. The cap bounds what a leaked click signature can attribute',
    }),
  }),
  ...group('Client address and country', {
    TRUSTED_PROXY_HOPS: Setting.integer({
      // More proxies than this in front of one service is a configuration mistake, not a topology.
      minimum: 0,
      maximum: 16,
      unset: 'the socket address, as 0',
      description:
        'number of trusted proxies in front that each append to `X-Forwarded-For`: the client IP is the N-th entry from the right (1: the one the nearest proxy appended), so entries a client sends itself never count. A list shorter than N did not pass all the proxies and yields the socket address',
    }),
    TRUSTED_IP_HEADER: Setting.text({
      pattern: "^[a-z0-9!#$%&'*+.^_`|~-]+$",
      lowercase: true,
      shape: 'a header name',
      description:
        'instead of `TRUSTED_PROXY_HOPS`: a header a trusted proxy or CDN sets to the client IP alone (`CF-Connecting-IP`, `X-Real-IP`), taken whole (of a comma-separated value, the right-most entry). Setting both is a configuration error',
    }),
    TRUSTED_COUNTRY_HEADER: Setting.text({
      pattern: "^[a-z0-9!#$%&'*+.^_`|~-]+$",
      lowercase: true,
      shape: 'a header name',
      description: "header a trusted CDN sets to the client's ISO country code (e.g. `cf-ipcountry`)",
    }),
  }),
  ...group('Abuse', {
    GUEST_LINKS_PER_NETWORK_PER_DAY: Setting.integer({
      default: 50,
      minimum: 0,
      maximum: MAX_LIMIT,
      description:
        "guest links one network may create per UTC day, across every guest token from it (beside each token's own 10); beyond it 429 `GUEST_NETWORK_LIMIT` until midnight UTC. Accounts' links are not counted",
    }),
    GUEST_NETWORK_IPV4_PREFIX: Setting.integer({
      default: 24,
      minimum: 8,
      maximum: 32,
      description: 'the IPv4 network an address counts in, for the guest links per network and for the reports that flag a link (a /24: one home, office or small provider block)',
    }),
    GUEST_NETWORK_IPV6_PREFIX: Setting.integer({
      default: 56,
      minimum: 16,
      maximum: 128,
      description: 'the IPv6 network an address counts in, as GUEST_NETWORK_IPV4_PREFIX (a /56: what a provider gives one customer)',
    }),
    BLOCKLIST_FILES: Setting.text({
      shape: 'comma-separated paths',
      unset: 'no list file',
      description:
        "block lists on disk (comma-separated): a destination on one is refused on every write (400 `DESTINATION_BLOCKED`). Each file is a host per line, hosts-file lines (`0.0.0.0 host`), a URL or URL prefix per line, or a CSV with a `url` column (URLhaus's dump), recognised from its lines; a host entry covers its subdomains, an IP entry that address. Read at start (a file that cannot be read or parsed stops the start) and at each refresh when it changed",
    }),
    BLOCKLIST_URLS: Setting.text({
      shape: 'comma-separated https URLs',
      unset: 'no list fetched',
      description:
        'block lists fetched over https at start and every `BLOCKLIST_REFRESH` (`If-None-Match` / `If-Modified-Since`; public addresses only, no redirect followed, at most 64 MB each), in the formats of `BLOCKLIST_FILES`. A failed fetch keeps the last list, is logged and counted, and is tried again within 5 minutes',
    }),
    BLOCKLIST_REFRESH: Setting.text({
      default: '1h',
      pattern: '^\\d+[smhd]$',
      lowercase: true,
      shape: 'a duration: a whole number and s, m, h or d (90s, 15m, 1h), from 10s to 7d',
      description: 'how often `BLOCKLIST_URLS` are fetched again and changed `BLOCKLIST_FILES` read again',
    }),
    BLOCKLIST_ALLOW_HTTP_LOOPBACK: Setting.boolean({
      default: false,
      description:
        '`true`: a list of `BLOCKLIST_URLS` may be fetched from a loopback address, over http too. For tests only: ignored when `NODE_ENV=production`; the server warns at start when it is set',
    }),
    NODE_ENV: Setting.text({
      lowercase: true,
      unset: 'not production',
      description:
        '`production`: the test-only `BLOCKLIST_ALLOW_HTTP_LOOPBACK`, `REPUTATION_ALLOW_HTTP_LOOPBACK` and `WEBHOOKS_ALLOW_PRIVATE_TARGETS` are ignored (with a warning at start), so a test setting cannot weaken a production server',
    }),
    ALLOWLIST_HOSTS: Setting.text({
      lowercase: true,
      shape: 'comma-separated host names',
      unset: 'none',
      description: 'hosts never blocked whatever a list says (comma-separated); each covers its subdomains',
    }),
    ADMIN_EMAILS: Setting.text({
      lowercase: true,
      shape: 'comma-separated e-mail addresses',
      unset: 'no operator',
      description: 'the operators: accounts whose verified e-mail is one of these (comma-separated, any case) use the admin API',
    }),
    REPORTS_TO_FLAG: Setting.integer({
      default: 3,
      minimum: 1,
      maximum: 1000,
      description: 'distinct networks whose reports of a guest link flag it (visitors see an interstitial before its destination)',
    }),
    SAFE_DNS_URL: Setting.url({
      protocols: ['https:', 'http:'],
      unset: 'no DNS check',
      description:
        "a filtering DNS-over-HTTPS resolver spoken to in RFC 8484's wire format (e.g. `https://security.cloudflare-dns.com/dns-query`). After a link is created or its destination changed, each destination's host is resolved through it: a `0.0.0.0` / `::` or NXDOMAIN answer for a host the system resolver finds flags the link (visitors see a warning first). Never on the request's path; 3 s a question; no answer flags nothing",
    }),
    WEB_RISK_KEY: Setting.text({
      secret: true,
      unset: 'no Web Risk lookup',
      description:
        "API key of a Web Risk lookup (`WEB_RISK_URL`): after a link is created or its destination changed, each destination is looked up for MALWARE and SOCIAL_ENGINEERING, and a threat named flags the link. Never on the request's path; 3 s a lookup; no answer flags nothing",
    }),
    WEB_RISK_URL: Setting.url({
      default: 'https://webrisk.googleapis.com/v1/uris:search',
      protocols: ['https:', 'http:'],
      description:
        'where `WEB_RISK_KEY` is used: `GET <url>?uri=…&threatTypes=MALWARE&threatTypes=SOCIAL_ENGINEERING&key=…`, answered `{}` or `{"threat": {"threatTypes": […]}}` (Google Web Risk\'s `uris.search`)',
    }),
    REPUTATION_ALLOW_HTTP_LOOPBACK: Setting.boolean({
      default: false,
      description:
        '`true`: `SAFE_DNS_URL` and `WEB_RISK_URL` may be on a loopback address, over http too. For tests only: ignored when `NODE_ENV=production`; the server warns at start when it is set',
    }),
  }),
  ...group('Clicks', {
    // ClickHouse prefers about one insert a second of many rows over many small ones: every insert makes a
    // part that must later be merged. At 50,000 a batch fills only under heavy load; otherwise the interval flushes it.
    CLICK_BATCH_SIZE: Setting.integer({ default: 50_000, minimum: 1, description: 'rows per ClickHouse insert; a full batch is shipped at once' }),
    CLICK_FLUSH_MS: Setting.integer({ default: 1000, minimum: 10, unit: 'ms', description: 'longest a click waits before its batch is sealed and shipped' }),
    CLICK_SPOOL_DIR: Setting.path({
      unset: '`DATA_DIR/click-spool`',
      description: 'the click log: every click is written here before its 302, and waits here until ClickHouse has it (one spool per redirector process)',
    }),
    // About 4 million clicks (~250 bytes each on disk): half an hour of ClickHouse outage at 2,000/s.
    CLICK_SPOOL_MAX_BYTES: Setting.size({ default: 1024 ** 3, minimum: 1024 ** 2, description: 'bound of the spool; at it, redirects go on and their clicks are dropped and counted' }),
    // Off: a write() in the page cache already survives the process being killed; fsync is for a machine
    // that may lose power, and costs a disk flush per group commit on the serving thread.
    CLICK_FSYNC: Setting.boolean({
      default: false,
      description: '`true`: fdatasync each log write, so clicks survive a power cut too, not only a crash of the process (costs a disk flush per event-loop turn)',
    }),
  }),
  ...group('Agent audit', {
    AUDIT_SPOOL_DIR: Setting.path({
      unset: '`DATA_DIR/audit-spool`',
      description: "the Agent audit trail's spool: each `at_` call's event is written here within one event-loop turn and waits until ClickHouse has it (one spool per API process)",
    }),
    // One insert a second of up to 1,000 events: a few parts a second at most, as ClickHouse prefers.
    AUDIT_BATCH_SIZE: Setting.integer({ default: 1000, minimum: 1, description: 'events per ClickHouse insert; a full segment is sealed and shipped at once' }),
    AUDIT_FLUSH_MS: Setting.integer({ default: 1000, minimum: 10, unit: 'ms', description: 'longest an event waits before its batch is shipped: how stale an audit read may be' }),
    // About 900,000 events (~300 bytes each on disk): hours of ClickHouse outage at Agent call rates.
    AUDIT_SPOOL_MAX_BYTES: Setting.size({ default: 256 * 1024 ** 2, minimum: 1024 ** 2, description: 'bound of the audit spool; at it, calls go on and their events are dropped and counted' }),
    AUDIT_FSYNC: Setting.boolean({ default: false, description: '`true`: fdatasync each write of the audit spool (survives a power cut, not only a crash of the process)' }),
  }),
  ...group('Redirector cache', {
    L1_TTL_MS: Setting.integer({
      default: 5000,
      minimum: 0,
      unit: 'ms',
      description:
        "life of an entry of the redirector's in-process cache: an entry past its time is still answered for one more lifetime while one background load refreshes it, so no request waits for Redis on a popular link; an invalidation removes it at once",
    }),
    L1_MAX_ENTRIES: Setting.integer({ default: 100_000, minimum: 1, description: 'entries of that cache' }),
    NEGATIVE_TTL_MS: Setting.integer({ default: 2000, minimum: 0, unit: 'ms', description: 'how long "no such link" is remembered (refreshed the same way)' }),
    REDIS_TIMEOUT_MS: Setting.integer({ default: 50, minimum: 1, unit: 'ms', description: 'budget of every Redis call on the redirect path' }),
    RESOLVE_TIMEOUT_MS: Setting.integer({ default: 1000, minimum: 1, unit: 'ms', description: 'budget of the resolve call to the API on a full miss' }),
    DOMAIN_REFRESH_MS: Setting.integer({
      default: 60_000,
      minimum: 100,
      unit: 'ms',
      description: 'how often a redirector reloads the verified custom domains (changes also arrive at once by pub/sub)',
    }),
  }),
  ...group('Plans', {
    ...planLimits('FREE', 'Free', DEFAULT_LIMITS.plans.free),
    ...planLimits('PRO', 'Pro', DEFAULT_LIMITS.plans.pro),
    SESSION_REQUESTS_PER_MINUTE: Setting.integer({
      default: DEFAULT_LIMITS.sessionRequestsPerMinute,
      minimum: 1,
      maximum: MAX_LIMIT,
      description:
        "requests a minute of a signed-in session (the dashboard's credential) when above its plan's: a dashboard page makes a few calls (a page of links, their tags, the domains), and a person clicking through it should not meet the limit a script on a key meets; links a month and every other limit stay the plan's",
    }),
    TAGS_PER_ACCOUNT: Setting.integer({
      default: DEFAULT_LIMITS.tagsPerAccount,
      minimum: 0,
      maximum: MAX_LIMIT,
      description: 'tags an account may have, on every plan; beyond it 409 `TAG_LIMIT_REACHED`',
    }),
  }),
  ...group('Custom domains', {
    DNS_SERVERS: Setting.dnsServers({
      shape: 'a comma-separated list of IP addresses with optional ports (127.0.0.1:5353, [::1]:53)',
      unset: "the system's resolvers",
      description: 'where domain verification looks up TXT records (`ip`, `ip:port`, `[ipv6]:port`, comma-separated)',
    }),
    DNS_TIMEOUT_MS: Setting.integer({ default: 3000, minimum: 1, unit: 'ms', description: 'budget of one DNS lookup when verifying a custom domain' }),
  }),
  ...group('Mail', {
    SMTP_URL: Setting.url({
      protocols: ['smtp:', 'smtps:'],
      unset: 'codes go to the log (a line marked `development_outbox`) and `MAIL_OUTBOX`',
      description: 'mail relay for the verification codes (nodemailer options in the query)',
    }),
    MAIL_FROM: Setting.text({
      // No line break may pass (header injection): the name part excludes CR and LF, the address any space.
      pattern: '^(?:[^<>\\r\\n]*<[^\\s<>@]+@[^\\s<>@]+>|[^\\s<>@]+@[^\\s<>@]+)$',
      shape: 'an e-mail address, optionally as "Name <address>"',
      unset: '`Link service <no-reply@<host of PUBLIC_API_URL>>`',
      description: 'sender of verification mail',
    }),
    MAIL_OUTBOX: Setting.path({ unset: '`DATA_DIR/outbox.log`', description: 'development delivery (no `SMTP_URL`) appends every message here and to the log' }),
  }),
  ...group('Billing', {
    STRIPE_SECRET_KEY: Setting.text({
      pattern: '^(sk|rk)_(test|live)_[A-Za-z0-9]+$',
      secret: true,
      shape: 'a Stripe secret key, sk_live_… or sk_test_… (rk_ for a restricted one)',
      unset: 'local billing (a confirm page, no payment)',
      description: 'Stripe Checkout for Pro; with it, the three below are required',
    }),
    STRIPE_PRICE_MONTHLY: Setting.text({ pattern: '^price_[A-Za-z0-9]+$', shape: 'a Stripe price id, price_…', description: 'the monthly price of Pro' }),
    STRIPE_PRICE_YEARLY: Setting.text({ pattern: '^price_[A-Za-z0-9]+$', shape: 'a Stripe price id, price_…', description: 'the yearly price of Pro' }),
    STRIPE_WEBHOOK_SECRET: Setting.text({ pattern: '^whsec_[A-Za-z0-9+/=]+$', secret: true, shape: 'a Stripe webhook signing secret, whsec_…', description: 'signing secret of the webhook endpoint' }),
    STRIPE_API_URL: Setting.url({ default: 'https://api.stripe.com', protocols: ['https:', 'http:'], description: "Stripe's API; set for tests only" }),
  }),
  ...group('Sign-in with GitHub or Google', {
    ...identityProvider('GITHUB', {
      name: 'GitHub',
      app: 'an OAuth app at GitHub',
      callback: '/signin/github/callback',
      user: 'API base (`…/user/emails` gives the verified e-mail)',
      authorizationUrl: 'https://github.com/login/oauth/authorize',
      tokenUrl: 'https://github.com/login/oauth/access_token',
      userUrl: 'https://api.github.com',
    }),
    ...identityProvider('GOOGLE', {
      name: 'Google',
      app: 'an OAuth client at Google',
      callback: '/signin/google/callback',
      user: 'userinfo endpoint',
      authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
      tokenUrl: 'https://oauth2.googleapis.com/token',
      userUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
    }),
  }),
  ...group('Webhooks', {
    WEBHOOK_RETRY_SCHEDULE: Setting.text({
      default: DEFAULT_WEBHOOK_RETRY_SCHEDULE,
      pattern: '^\\d+( *, *\\d+)*$',
      shape: 'comma-separated whole seconds (5,30,120), each from 1 to 604800, at most 20',
      description:
        'seconds to wait before each retry of a webhook delivery that was not answered 2xx within 10 s (each stretched or shortened by up to 10 % at random, so retries of many deliveries spread out); after the last retry the delivery is `failed`. The default makes 9 retries over about 45 hours ([webhooks.md](webhooks.md#retries))',
    }),
    WEBHOOK_LEASE_SECONDS: Setting.integer({
      default: 60,
      minimum: 15,
      maximum: 3600,
      description:
        'how long an API process holds a webhook delivery it has claimed: a process that dies mid-attempt leaves its claim, and another process sends the delivery again once the claim runs out. Longer than an attempt (10 s) by far, so a live process never loses its claim ([webhooks.md](webhooks.md#delivery-and-retries))',
    }),
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: Setting.boolean({
      default: false,
      description: '`true`: webhook URLs may be on a loopback address, over http too. For tests only: ignored when `NODE_ENV=production`; the server warns at start when it is set',
    }),
  }),
  ...group('MCP and OAuth clients', {
    MCP_ALLOWED_ORIGINS: Setting.origins({
      shape: 'comma-separated web origins such as https://app.example or http://localhost:6274 (scheme, host, optional port; no path or trailing slash)',
      unset: 'any origin (an Origin is no credential at `/mcp`: every call needs an `at_` token)',
      description: "the web origins, exactly as a browser sends them, whose pages may call `/mcp` besides the API's own; another origin is 403 `ORIGIN_NOT_ALLOWED`",
    }),
    CIMD_ALLOW_HTTP_LOOPBACK: Setting.boolean({
      default: false,
      description:
        '`true`: Client ID Metadata Documents may be fetched from loopback addresses, over http too. For tests only: in production it would let any `client_id` make the server call services on its own machine; the server warns at start when it is set',
    }),
  }),
})
