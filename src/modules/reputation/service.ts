// Reputation checks of new destinations (docs/operators.md, "Reputation checks"), run after a link is
// created or its destination changed, never on the request's path: the write answers first, and a
// destination found unsafe later flags its link (setLinkStates writes through to the cache, so every
// redirector shows the warning within a second).
//
//   checkLater(services, links)  queues each link's destination and routing destinations; returns at once.
//
// One queue per process (per Services): CONCURRENCY links checked at a time, at most MAX_QUEUED waiting.
// A burst past that (a large import, many bulk calls) is dropped and counted rather than piled up: a
// reputation check is a second line behind the block lists, and the operators see the count. A link's
// destinations are checked one after the other, each by every configured check at once; the first
// unsafe answer flags it (only from `ok`: a link an operator disabled or already flagged keeps its
// state), files a report in the check's name so it waits in the operators' queue, and ends its checks. `unknown` answers never flag; they are counted as failures.
import { log } from '../../lib/log'
import type { Services } from '../../services'
import { setLinkStates } from '../links/state'
import { fileCheckReport } from '../reports/service'
import type { DestinationCheck, Verdict } from './check'
import { safeDnsCheck } from './safe-dns'
import type { Resolve } from './service-fetch'
import { webRiskCheck } from './web-risk'

/** Links checked at once: each holds at most one call per check, so this bounds the calls in flight too. */
export const CONCURRENCY = 4
/**
 * Links waiting at most: a few MB of URLs, and about as long to work through as a full block list
 * refresh (at ~100 ms a check, 4 at a time, some four minutes).
 */
export const MAX_QUEUED = 10_000
/** A destination in a state reason is cut to this many characters. */
const SHOWN_URL_CHARS = 200

export interface LinkToCheck {
  id: string
  url: string
  routingUrls: readonly string[]
}

export type ReputationServices = Pick<Services, 'config' | 'db' | 'kv' | 'counters'>

/** Per check (`safe_dns`, `web_risk`): destinations checked, found unsafe, not answered. */
export interface CheckCounts {
  checks: number
  unsafe: number
  failures: number
}

export interface ReputationCounters {
  byCheck: Record<string, CheckCounts>
  /** Links not checked because the queue was full. */
  dropped: number
}

export interface Reputation {
  /** Whether any check is configured; when none is, checkLater does nothing. */
  readonly enabled: boolean
  checkLater(links: readonly LinkToCheck[]): void
  readonly counters: ReputationCounters
  /** Links queued or being checked. */
  pending(): number
  /** Resolves once nothing is queued or being checked. */
  idle(): Promise<void>
}

export interface ReputationDeps {
  /** The checks; default the ones services.config.reputation configures. */
  checks?: readonly DestinationCheck[]
  concurrency?: number
  maxQueued?: number
  /** The system resolver, for the checks made from the configuration (tests give a fake one). */
  resolve?: Resolve
  /** Budget of each call of the checks made from the configuration. */
  timeoutMs?: number
}

/** The checks services.config.reputation turns on; none by default. */
export function configuredChecks(config: ReputationServices['config'], deps: Pick<ReputationDeps, 'resolve' | 'timeoutMs'> = {}): DestinationCheck[] {
  const { safeDnsUrl, webRisk, allowHttpLoopback } = config.reputation
  const checks: DestinationCheck[] = []
  if (safeDnsUrl !== undefined) checks.push(safeDnsCheck({ url: safeDnsUrl, allowHttpLoopback, timeoutMs: deps.timeoutMs, resolve: deps.resolve }))
  if (webRisk !== undefined) checks.push(webRiskCheck({ ...webRisk, allowHttpLoopback, timeoutMs: deps.timeoutMs, resolve: deps.resolve }))
  return checks
}

const shown = (url: string) => (url.length > SHOWN_URL_CHARS ? `${url.slice(0, SHOWN_URL_CHARS)}…` : url)

export function createReputation(services: ReputationServices, deps: ReputationDeps = {}): Reputation {
  const checks = deps.checks ?? configuredChecks(services.config, deps)
  const concurrency = deps.concurrency ?? CONCURRENCY
  const maxQueued = deps.maxQueued ?? MAX_QUEUED
  const counters: ReputationCounters = { byCheck: Object.fromEntries(checks.map((check) => [check.name, { checks: 0, unsafe: 0, failures: 0 }])), dropped: 0 }
  const queue: LinkToCheck[] = []
  let running = 0
  let waiters: (() => void)[] = []
  /** Whether the queue refused a link since it last emptied: logged once per such episode. */
  let overflowing = false
  /** Checks whose last call failed: a failure is logged when a check starts failing, not at each call. */
  const failing = new Set<string>()

  async function ask(check: DestinationCheck, destination: string): Promise<Verdict> {
    const counts = counters.byCheck[check.name]!
    counts.checks++
    let verdict: Verdict
    try {
      verdict = await check.check(destination)
    } catch (error) {
      verdict = { verdict: 'unknown', reason: error instanceof Error ? error.message : String(error) }
    }
    if (verdict.verdict === 'unknown') {
      counts.failures++
      if (!failing.has(check.name)) log.warn({ component: 'reputation', check: check.name, reason: verdict.reason }, 'a reputation check failed; its links are not flagged by it until it answers')
      failing.add(check.name)
    } else {
      if (failing.delete(check.name)) log.info({ component: 'reputation', check: check.name }, 'a reputation check answers again')
      if (verdict.verdict === 'unsafe') counts.unsafe++
    }
    return verdict
  }

  async function checkLink(link: LinkToCheck): Promise<void> {
    for (const destination of new Set([link.url, ...link.routingUrls])) {
      const verdicts = await Promise.all(checks.map(async (check) => ({ check: check.name, verdict: await ask(check, destination) })))
      const found = verdicts.find(({ verdict }) => verdict.verdict === 'unsafe')
      if (found?.verdict.verdict !== 'unsafe') continue
      const which = destination === link.url ? 'its destination' : 'a routing destination'
      const reason = `reputation check ${found.check}: ${found.verdict.reason} (${which} ${shown(destination)})`
      const flagged = await setLinkStates(services, [link.id], 'flagged', reason, ['ok'])
      if (flagged.length === 0) return
      log.warn({ component: 'reputation', link: link.id, check: found.check }, 'link flagged by a reputation check')
      const kind = /MALWARE|UNWANTED/.test(found.verdict.reason) ? 'malware' : /SOCIAL_ENGINEERING/.test(found.verdict.reason) ? 'phishing' : 'other'
      await fileCheckReport(services, link.id, found.check, kind, reason)
      return
    }
  }

  function settle(): void {
    if (running > 0 || queue.length > 0) return
    overflowing = false
    const woken = waiters
    waiters = []
    for (const wake of woken) wake()
  }

  function pump(): void {
    while (running < concurrency && queue.length > 0) {
      const link = queue.shift()!
      running++
      checkLink(link)
        .catch((error) => log.error({ component: 'reputation', link: link.id, error: error instanceof Error ? error.message : String(error) }, 'flagging a link after a reputation check failed'))
        .finally(() => {
          running--
          pump()
          settle()
        })
    }
  }

  return {
    enabled: checks.length > 0,
    counters,
    checkLater(links) {
      if (checks.length === 0) return
      for (const link of links) {
        if (queue.length >= maxQueued) {
          counters.dropped++
          if (!overflowing) log.warn({ component: 'reputation', maxQueued }, 'reputation checks are behind: links past the queue are dropped unchecked and counted')
          overflowing = true
          continue
        }
        queue.push(link)
      }
      pump()
    },
    pending: () => queue.length + running,
    idle: () => (running === 0 && queue.length === 0 ? Promise.resolve() : new Promise<void>((wake) => waiters.push(wake))),
  }
}

const instances = new WeakMap<object, Reputation>()

/**
 * The reputation checks of these services: made on first use from services.config, or with `deps` by
 * whoever asks first (a test, or the boot with its own settings); asking again with `deps` is a mistake.
 */
export function reputationOf(services: ReputationServices, deps?: ReputationDeps): Reputation {
  const existing = instances.get(services)
  if (existing && deps) throw new Error('reputationOf: these services have their reputation checks already')
  if (existing) return existing
  const made = createReputation(services, deps)
  instances.set(services, made)
  return made
}

/** Queues the reputation checks of links just created or whose destination changed; returns at once. */
export function checkLater(services: ReputationServices, links: readonly LinkToCheck[]): void {
  reputationOf(services).checkLater(links)
}
