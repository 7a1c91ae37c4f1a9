// Sends the outbox (outbox.ts): each API process runs one dispatcher (src/boot.ts starts it with the
// process and stops it first at shutdown). Every second, and whenever an attempt ends, it claims due
// deliveries in a short transaction (FOR UPDATE SKIP LOCKED, so two processes never claim one) and marks
// them with a lease; then sends each (send.ts), outside any transaction, and records the outcome.
//
// - At most CONCURRENCY attempts in flight in a process, and PER_ENDPOINT to one endpoint: a slow
//   receiver holds two slots, never the others' deliveries.
// - A 2xx within 10 s is delivered; anything else is retried on WEBHOOK_RETRY_SCHEDULE with ±10 %
//   jitter, and failed after the last retry. Every attempt of an event carries the same webhook-id.
// - A process that dies mid-attempt leaves a lease that runs out (WEBHOOK_LEASE_SECONDS): another process sends the
//   delivery again (at least once). Stopping aborts the attempts in flight and hands their deliveries
//   back as they were, uncounted, so a shutdown loses none.
// - Only endpoints whose secret this process can open are claimed (secrets.ts: the sealing key's id):
//   after INTERNAL_SECRET changes their deliveries wait, unsent, until their owner rotates the secret.
// - Each endpoint's failing_since follows its attempts (set by a failure, cleared by a success): one
//   failing for three days is disabled and its owner mailed (upkeep.ts), checked every hour.
import { and, asc, eq, inArray, isNotNull, isNull, lte, notInArray, or, sql } from 'drizzle-orm'
import type { Config } from '../../../core/config'
import type { Db } from '../../db/client'
import { webhookDeliveries, webhookEvents, webhooks } from '../../db/schema'
import { errorSummary } from '../../lib/errors'
import { createMailer, type Mailer } from '../../mail/mailer'
import type { Resolve } from '../reputation/service-fetch'
import { countOutcome } from './metrics'
import { sealedPrefix, sealingKey } from './secrets'
import { type Sendable, sender } from './send'
import { disableFailingEndpoints, measureOutbox, pruneEvents } from './upkeep'

/** Attempts in flight in one process, and to one endpoint. */
const CONCURRENCY = 16
const PER_ENDPOINT = 2
const POLL_MS = 1_000
/** The outbox's depth is counted for /metrics this often. */
const MEASURE_MS = 15_000
/** Retry delays are stretched or shortened by up to this fraction, so a burst of failures spreads out. */
const JITTER = 0.1
/** Old events are deleted, and failing endpoints disabled, this often (upkeep.ts). */
const PRUNE_MS = 3_600_000

export interface DispatcherOptions {
  db: Db
  config: Pick<Config, 'internalSecret' | 'publicApiUrl' | 'webhooks' | 'mail'>
  /** Where the mail of a disabled endpoint goes (default: the configured one, SMTP_URL or the outbox file). */
  mailer?: Mailer
  /** Unix ms: when a delivery is due, and the webhook-timestamp it is signed with. */
  now?: () => number
  /** A host name's addresses, looked up again at every attempt (tests give their own). */
  resolve?: Resolve
  /** 0 to 1, for the retry jitter. */
  random?: () => number
  pollMs?: number
  log?: (line: string) => void
  /** Claims (and disables when failing) only these endpoints: for tests, whose database other tests' endpoints share. */
  only?: readonly string[]
}

export interface Dispatcher {
  /** Polls every second until stopped. */
  start(): void
  /** Claims what is due now, sends it and records the outcomes; again until nothing due is left unclaimed. Returns the attempts made. */
  runDue(): Promise<number>
  /** Deletes old events with their deliveries (upkeep.ts; hourly once started). */
  prune(): Promise<number>
  /** Disables the endpoints failing for three days and mails their owners (upkeep.ts; hourly once started); their ids. */
  disableFailing(): Promise<string[]>
  /** Aborts the attempts in flight and hands their deliveries back; resolves once nothing is in flight. */
  stop(): Promise<void>
}

interface Claimed extends Sendable {
  attempt: number
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { db, config } = options
  const now = options.now ?? Date.now
  const random = options.random ?? Math.random
  const log = options.log ?? (() => {})
  const key = sealingKey(config.internalSecret)
  const ownKey = sealedPrefix(key)
  const send = sender({ config, key, resolve: options.resolve, log })
  let mailer = options.mailer
  const disableFailing = () => disableFailingEndpoints(db, (mailer ??= createMailer(config.mail)), config.publicApiUrl, now(), log, options.only)
  const schedule = config.webhooks.retryScheduleSeconds
  /** Attempts in flight, by delivery id, with their endpoint and their abort. */
  const inFlight = new Map<string, { webhookId: string; abort: AbortController; done: Promise<void> }>()
  let stopped = false
  let claiming: Promise<number> | null = null
  let claimAgain = false
  let timer: ReturnType<typeof setInterval> | undefined
  let measureTimer: ReturnType<typeof setInterval> | undefined
  let pruneTimer: ReturnType<typeof setInterval> | undefined

  /** Endpoints with PER_ENDPOINT attempts in flight here: not claimed for until one ends. */
  function fullEndpoints(): string[] {
    const counts = new Map<string, number>()
    for (const { webhookId } of inFlight.values()) counts.set(webhookId, (counts.get(webhookId) ?? 0) + 1)
    return [...counts].filter(([, n]) => n >= PER_ENDPOINT).map(([id]) => id)
  }

  /** Due deliveries, at most `slots`, at most PER_ENDPOINT in flight to one endpoint, leased to this process. */
  async function claim(slots: number): Promise<Claimed[]> {
    const at = new Date(now())
    const full = fullEndpoints()
    return db.transaction(async (tx) => {
      const candidates = await tx
        .select({
          id: webhookDeliveries.id,
          webhookId: webhookDeliveries.webhookId,
          attempt: webhookDeliveries.attempt,
          eventId: webhookEvents.id,
          body: webhookEvents.body,
          url: webhooks.url,
          secretSealed: webhooks.secretSealed,
          previousSecretSealed: webhooks.previousSecretSealed,
          previousSecretUntil: webhooks.previousSecretUntil,
        })
        .from(webhookDeliveries)
        .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
        .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
        .where(
          and(
            eq(webhookDeliveries.status, 'pending'),
            lte(webhookDeliveries.nextAttemptAt, at),
            or(isNull(webhookDeliveries.lockedUntil), lte(webhookDeliveries.lockedUntil, at)),
            eq(webhooks.status, 'active'),
            // Endpoints whose secret this process can open: another INTERNAL_SECRET's are left to their processes.
            sql`left(${webhooks.secretSealed}, ${ownKey.length}) = ${ownKey}`,
            full.length > 0 ? notInArray(webhookDeliveries.webhookId, full) : undefined,
            options.only ? inArray(webhookDeliveries.webhookId, [...options.only]) : undefined,
          ),
        )
        .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.id))
        // More rows than slots, so one endpoint's backlog does not fill the page; the rest stay unlocked.
        .limit(slots * 4)
        .for('update', { of: webhookDeliveries, skipLocked: true })
      const perEndpoint = new Map<string, number>()
      for (const { webhookId } of inFlight.values()) perEndpoint.set(webhookId, (perEndpoint.get(webhookId) ?? 0) + 1)
      const picked = candidates
        .filter((row) => {
          const n = perEndpoint.get(row.webhookId) ?? 0
          if (n >= PER_ENDPOINT) return false
          perEndpoint.set(row.webhookId, n + 1)
          return true
        })
        .slice(0, slots)
      if (picked.length > 0) {
        await tx
          .update(webhookDeliveries)
          .set({ lockedUntil: new Date(at.getTime() + config.webhooks.leaseSeconds * 1000) })
          .where(
            inArray(
              webhookDeliveries.id,
              picked.map((row) => row.id),
            ),
          )
      }
      return picked
    })
  }

  /** When the next attempt is due after `attempts` failed ones, or null: the schedule is used up. */
  function retryAt(attempts: number, at: number): Date | null {
    const seconds = schedule[attempts - 1]
    if (seconds === undefined) return null
    return new Date(at + seconds * 1000 * (1 + (random() * 2 - 1) * JITTER))
  }

  async function attempt(delivery: Claimed, abort: AbortController): Promise<void> {
    const started = performance.now()
    const outcome = await send(delivery, now(), abort.signal)
    const ownRow = and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.status, 'pending'))
    if (abort.signal.aborted) {
      // Stopping: the delivery goes back as it was, this attempt uncounted.
      await db.update(webhookDeliveries).set({ lockedUntil: null }).where(ownRow)
      return
    }
    const attempts = delivery.attempt + 1
    const next = outcome.delivered ? null : retryAt(attempts, now())
    const status = outcome.delivered ? 'delivered' : next ? 'pending' : 'failed'
    await db.transaction(async (tx) => {
      await tx
        .update(webhookDeliveries)
        .set({
          attempt: attempts,
          status,
          responseStatus: outcome.status,
          durationMs: Math.round(performance.now() - started),
          error: outcome.delivered ? null : outcome.error,
          nextAttemptAt: next,
          lockedUntil: null,
        })
        .where(ownRow)
      // The endpoint's failing streak: a success ends it, the first failure after one starts it.
      const endpoint = eq(webhooks.id, delivery.webhookId)
      if (outcome.delivered)
        await tx
          .update(webhooks)
          .set({ failingSince: null })
          .where(and(endpoint, isNotNull(webhooks.failingSince)))
      else
        await tx
          .update(webhooks)
          .set({ failingSince: new Date(now()) })
          .where(and(endpoint, isNull(webhooks.failingSince)))
    })
    countOutcome(status === 'pending' ? 'retry' : status)
  }

  function launch(delivery: Claimed): Promise<void> {
    const abort = new AbortController()
    const done = attempt(delivery, abort)
      .catch((error: unknown) => log(`webhook delivery ${delivery.id} not recorded: ${errorSummary(error)}`))
      .finally(() => {
        inFlight.delete(delivery.id)
        if (timer !== undefined) void pump()
      })
    inFlight.set(delivery.id, { webhookId: delivery.webhookId, abort, done })
    return done
  }

  /** Claims into the free slots and launches what it got; one claim at a time. Returns the attempts launched. */
  function pump(): Promise<number> {
    if (stopped) return Promise.resolve(0)
    // Asked while a claim runs (an attempt ended, a slot freed): claim again as soon as it is done, so
    // the freed slot is not left idle until the next poll.
    if (claiming !== null) claimAgain = true
    claiming ??= (async () => {
      try {
        const slots = CONCURRENCY - inFlight.size
        if (slots <= 0) return 0
        const claimed = await claim(slots)
        if (stopped) {
          // Claimed while stopping: handed back at once.
          if (claimed.length > 0)
            await db
              .update(webhookDeliveries)
              .set({ lockedUntil: null })
              .where(
                inArray(
                  webhookDeliveries.id,
                  claimed.map((row) => row.id),
                ),
              )
          return 0
        }
        for (const delivery of claimed) launch(delivery)
        return claimed.length
      } catch (error) {
        log(`webhook dispatch: ${errorSummary(error)}`)
        return 0
      } finally {
        claiming = null
        if (claimAgain && !stopped) {
          claimAgain = false
          void pump()
        }
      }
    })()
    return claiming
  }

  return {
    start() {
      if (timer !== undefined || stopped) return
      timer = setInterval(() => void pump(), options.pollMs ?? POLL_MS)
      measureTimer = setInterval(() => void measureOutbox(db, now()).catch((error: unknown) => log(`webhook outbox not measured: ${errorSummary(error)}`)), MEASURE_MS)
      pruneTimer = setInterval(() => {
        void pruneEvents(db, now()).catch((error: unknown) => log(`webhook events not pruned: ${errorSummary(error)}`))
        void disableFailing().catch((error: unknown) => log(`failing webhooks not checked: ${errorSummary(error)}`))
      }, PRUNE_MS)
      // The process may exit while the dispatcher waits: what is pending stays in the outbox.
      timer.unref?.()
      measureTimer.unref?.()
      pruneTimer.unref?.()
    },
    async runDue() {
      let total = 0
      for (;;) {
        const launched = await pump()
        await Promise.all([...inFlight.values()].map((entry) => entry.done))
        if (launched === 0) return total
        total += launched
      }
    },
    prune: () => pruneEvents(db, now()),
    disableFailing,
    async stop() {
      stopped = true
      clearInterval(timer)
      clearInterval(measureTimer)
      clearInterval(pruneTimer)
      timer = undefined
      await claiming
      for (const entry of inFlight.values()) entry.abort.abort()
      await Promise.all([...inFlight.values()].map((entry) => entry.done))
    },
  }
}
