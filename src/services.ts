// What the API is built from. createApi(deps) turns ApiDeps into Services once; every module and plugin
// takes Services and passes plain values on to its service functions (never the Elysia Context).
import type { ClickHouseClient } from '@clickhouse/client'
import type { AuditLog, IdempotencyStore, Kv, Limiter } from './adapters/ports'
import type { Config } from '../core/config'
import type { MetricsRegistry } from '../core/metrics'
import type { ReadinessCheck } from '../core/readiness'
import type { Db } from './db/client'
import type { EventType } from './db/schema'

export interface ApiDeps {
  config: Config
  db: Db
  /**
   * The read replica's handle (Database.readDb), read through readFromReplica by the links list, one link
   * and statistics' link lookup; default `db`, the primary.
   */
  readDb?: Db
  kv: Kv
  limiter: Limiter
  /** Idempotency-Key records (plugins/idempotency.ts). */
  idempotency: IdempotencyStore
  /** Clicks and conversions for statistics (a server over HTTP, or chDB in-process). */
  clickhouse: ClickHouseClient
  /** Clock in unix milliseconds; tests move it to expire tokens. */
  now?: () => number
  /**
   * The client address of a request, for a caller that serves the app through its own Bun.serve and
   * app.handle() (where Elysia has no server): `(request) => server.requestIP(request)?.address`.
   * Not needed with app.listen(). It is the socket address of core/client-ip.ts: a trusted header
   * (TRUSTED_IP_HEADER, TRUSTED_PROXY_HOPS) takes precedence when configured.
   */
  requestIP?: (request: Request) => string | null | undefined
  /** Where an event per Agent (at_) call goes; without one, Agent calls are not audited (tests of other things). */
  audit?: AuditLog
  /** The embedded default's redirector figures, rendered after the API's at /metrics. */
  extraMetrics?: readonly MetricsRegistry[]
  /** The embedded default's redirector checks, added to the API's at /ready. */
  extraReadiness?: Record<string, ReadinessCheck>
  /** Services.destinationListed: the destination block lists the entry point started. */
  destinationListed?: (href: string) => boolean
  /** The block lists' figures for /metrics, from the same entry point. */
  blocklistFigures?: () => readonly BlocklistSourceFigures[]
}

/** Process counters instead of per-request logs: read by a metrics endpoint or a test. */
export interface Counters {
  /** Link write-throughs to the cache that failed (the link is committed; the redirector falls back). */
  cacheWriteFailures: number
  /** Generated aliases that were already taken and drawn again. */
  aliasCollisions: number
  /** Pixel requests answered with the GIF but not recorded: no valid report in them, or an over-long URL. */
  invalidPixels: number
  /** Visitors' reports filed (a repeat of an open one not counted). */
  reportsFiled: number
  /** Links moved to a state: flagged, disabled (by a list, reports, a check or an operator), ok (restored). */
  linkStates: { flagged: number; disabled: number; ok: number }
}

/** Per block list, what /metrics shows of it (src/modules/abuse/blocklists.ts status()). */
export interface BlocklistSourceFigures {
  name: string
  hosts: number
  prefixes: number
  failures: number
  blocked: number
  /** When its source last answered with a list, read in full or confirmed unchanged (unix ms); undefined before the first. */
  lastConfirmedAt: number | undefined
}

/** A link whose destinations were just written (created, changed): for checks that run afterwards. */
export interface WrittenDestinations {
  id: string
  url: string
  routingUrls: readonly string[]
}

/**
 * The webhook outbox (src/modules/webhooks/outbox.ts), used inside the transaction of a change an event
 * tells of: which of the account's endpoints want the type, then the events and their deliveries.
 */
export interface WebhookOutbox {
  subscribers(tx: Pick<Db, 'select'>, accountId: string, type: EventType): Promise<string[]>
  write(tx: Pick<Db, 'select' | 'insert'>, accountId: string, type: EventType, webhookIds: readonly string[], data: readonly unknown[], now: Date): Promise<unknown>
}

/** ApiDeps with the clock and the read handle defaulted, plus the process counters. */
export interface Services extends Omit<ApiDeps, 'now' | 'readDb'> {
  now: () => number
  readDb: Db
  counters: Counters
  /**
   * Told of links whose destinations were just written, after the commit; returns at once (createApi
   * wires the reputation checks here, so the links module needs no import of them).
   */
  destinationsWritten?: (links: readonly WrittenDestinations[]) => void
  /**
   * Whether a destination about to be written is on a block list (the lists of BLOCKLIST_FILES and
   * BLOCKLIST_URLS in memory; src/modules/abuse): the entry point that started the lists wires it.
   */
  destinationListed?: (href: string) => boolean
  /**
   * Where changes write their webhook events (createApi wires the webhooks module's outbox here, so the
   * modules whose changes have events need no import of it); unset, no event is written.
   */
  webhookOutbox?: WebhookOutbox
}

export function createServices(deps: ApiDeps): Services {
  return {
    ...deps,
    now: deps.now ?? Date.now,
    readDb: deps.readDb ?? deps.db,
    counters: { cacheWriteFailures: 0, aliasCollisions: 0, invalidPixels: 0, reportsFiled: 0, linkStates: { flagged: 0, disabled: 0, ok: 0 } },
  }
}
