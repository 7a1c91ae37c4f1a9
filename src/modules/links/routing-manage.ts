// Reading and replacing a link's routing, and ending its A/B test. Every change is written through to
// the cache after the commit and announced, so redirectors follow within a second.
//
// A test ends once its ends_at has passed: checked every minute by each API process and on every read
// of the routing or the link. The variant with the most leads, sales or conversions (winner_by) over
// the test's clicks wins (ties: more clicks, then the first listed), becomes the link's URL, and the test
// stays as completed with its winner. With several processes the update is conditional on the test
// being the one that was read and still running, so exactly one of them ends it.
//
// Webhook events commit with the change: a routing replaced or removed is `link.updated` (as a PATCH of
// the link's routing is), and a test ended is `routing.ab_completed` (the link and its routing with the
// winner) and `link.updated` (the winner is now the link's URL).
import { and, eq, isNotNull, lte } from 'drizzle-orm'
import { routeCounts, type RouteCounts } from '../../analytics/routing-stats'
import { links, type LinkRouting, type LinkRow, type StoredAb } from '../../db/schema'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import type { AccountPrincipal } from '../../plugins/auth'
import type { Services } from '../../services'
import { findLinkWithPlan, planIsPro, recordOf, syncLinkCache, toCachedLink } from './cache'
import { getOwnLink } from './manage'
import type { RoutingData } from './model'
import { linkNotFound } from './owned'
import { linkEventSubscribers, toLinkEventData, writeLinkEvents } from './service'
import { abEndsAt, checkRouting, requireRoutingPlan, routingUrls, routingView } from './routing'

type RoutingServices = Pick<Services, 'config' | 'db' | 'kv' | 'counters' | 'clickhouse' | 'now' | 'destinationsWritten' | 'webhookOutbox'>

const SWEEP_INTERVAL_MS = 60_000
/** Tests ended in one sweep at most; the rest wait for the next minute. */
const SWEEP_BATCH = 100

/** The link's routing, its A/B test ended first when its time has come. */
export async function readRouting(services: RoutingServices, account: AccountPrincipal, alias: string, domain: string | undefined): Promise<RoutingData> {
  requireRoutingPlan(services, account.plan)
  const row = await getOwnLink(services as Services, account, alias, domain)
  return routingView((await completeIfDue(services, row)).routing)
}

/** Replaces the whole routing ({} removes it); a dry run checks it and answers it, writing nothing. */
export async function replaceRouting(
  services: RoutingServices,
  account: AccountPrincipal,
  alias: string,
  domain: string | undefined,
  input: unknown,
  dryRun = false,
): Promise<{ row: LinkRow; routing: RoutingData }> {
  requireRoutingPlan(services, account.plan)
  const current = await getOwnLink(services as Services, account, alias, domain)
  const routing = await checkRouting(services, input, 'body', current.routing)
  if (dryRun) return { row: current, routing: routingView(routing) }
  const row = await services.db.transaction(async (tx) => {
    const [[updated], webhookIds] = await Promise.all([
      tx
        .update(links)
        .set({ routing, abEndsAt: abEndsAt(routing), updatedAt: new Date(services.now()) })
        .where(and(eq(links.id, current.id), eq(links.accountId, account.id)))
        .returning(),
      linkEventSubscribers(services, tx, account.id, 'link.updated'),
    ])
    if (!updated) throw linkNotFound(current.domain, alias)
    await writeLinkEvents(services, tx, account.id, 'link.updated', webhookIds, [updated])
    return updated
  })
  await syncLinkCache(services, row, toCachedLink(row, planIsPro(account.plan)), { publish: true })
  const destinations = routingUrls(row.routing)
  if (destinations.length > 0) services.destinationsWritten?.([{ id: row.id, url: row.url, routingUrls: destinations }])
  return { row, routing: routingView(row.routing) }
}

/** The row as it is once a test whose time has come is ended (by this call or another process's). */
export async function completeIfDue(services: RoutingServices, row: LinkRow): Promise<LinkRow> {
  if (row.abEndsAt === null || row.abEndsAt.getTime() > services.now()) return row
  try {
    return (await completeAbTest(services, row)) ?? (await reread(services, row))
  } catch (error) {
    // ClickHouse down: the test runs on until the next sweep can count it.
    log.warn({ component: 'routing', link: row.id, error: errorSummary(error) }, 'an A/B test could not be ended now')
    return row
  }
}

async function reread(services: RoutingServices, row: LinkRow): Promise<LinkRow> {
  const [now] = await services.db.select().from(links).where(eq(links.id, row.id)).limit(1)
  return now ?? row
}

/** The winning variant's id: the highest count of `winnerBy`, then more clicks, then the first listed. */
export function chooseWinner(ab: Pick<StoredAb, 'variants' | 'winner_by'>, counts: ReadonlyMap<string, RouteCounts>): string {
  const by = ab.winner_by ?? 'conversions'
  let best = ab.variants[0]!
  let bestCounts = counts.get(`ab:${best.id}`)
  for (const variant of ab.variants.slice(1)) {
    const c = counts.get(`ab:${variant.id}`)
    const [score, clicks] = [c?.[by] ?? 0, c?.clicks ?? 0]
    const [bestScore, bestClicks] = [bestCounts?.[by] ?? 0, bestCounts?.clicks ?? 0]
    if (score > bestScore || (score === bestScore && clicks > bestClicks)) {
      best = variant
      bestCounts = c
    }
  }
  return best.id
}

/**
 * Ends the running test of `row` (read with its ab_ends_at): the winner becomes the link's URL. Null when
 * another process ended it first, or the routing changed since `row` was read.
 */
export async function completeAbTest(services: RoutingServices, row: LinkRow): Promise<LinkRow | null> {
  const ab = row.routing?.ab
  if (ab?.status !== 'running' || row.abEndsAt === null) return null
  const counts = await routeCounts(services.clickhouse, row.id, Date.parse(ab.started_at), services.now() + 1)
  const winner = chooseWinner(ab, counts)
  const now = new Date(services.now())
  const routing: LinkRouting = { rules: row.routing!.rules, ab: { ...ab, status: 'completed', winner, completed_at: now.toISOString() } }
  const updated = await services.db.transaction(async (tx) => {
    const [ended] = await tx
      .update(links)
      .set({ url: ab.variants.find((v) => v.id === winner)!.url, routing, abEndsAt: null, updatedAt: now })
      .where(and(eq(links.id, row.id), eq(links.abEndsAt, row.abEndsAt!)))
      .returning()
    if (ended?.accountId) await writeAbEvents(services, tx, ended.accountId, ended)
    return ended
  })
  if (!updated) return null
  const withPlan = await findLinkWithPlan(services, eq(links.id, updated.id))
  if (withPlan) await syncLinkCache(services, withPlan, recordOf(withPlan), { publish: true })
  log.info({ component: 'routing', link: updated.id, winner }, 'an A/B test ended')
  return updated
}

/** The events of an ended test: routing.ab_completed (the link and its routing) and link.updated. */
async function writeAbEvents(services: RoutingServices, tx: Parameters<Parameters<Services['db']['transaction']>[0]>[0], accountId: string, row: LinkRow): Promise<void> {
  const outbox = services.webhookOutbox
  if (!outbox) return
  const [completed, updated] = await Promise.all([outbox.subscribers(tx, accountId, 'routing.ab_completed'), linkEventSubscribers(services, tx, accountId, 'link.updated')])
  await outbox.write(tx, accountId, 'routing.ab_completed', completed, [{ link: toLinkEventData(row, services), routing: routingView(row.routing) }], new Date(services.now()))
  await writeLinkEvents(services, tx, accountId, 'link.updated', updated, [row])
}

/** Ends every test whose time has come (a batch a sweep); how many this process ended. */
export async function completeDueAbTests(services: RoutingServices): Promise<number> {
  const due = await services.db
    .select()
    .from(links)
    .where(and(isNotNull(links.abEndsAt), lte(links.abEndsAt, new Date(services.now()))))
    .limit(SWEEP_BATCH)
  let ended = 0
  for (const row of due) if (await completeAbTest(services, row)) ended++
  return ended
}

/** Sweeps now and every minute; returns its stop. A failed sweep is logged and tried again. */
export function startAbCompletion(services: RoutingServices, intervalMs = SWEEP_INTERVAL_MS): () => void {
  const sweep = () => completeDueAbTests(services).catch((error) => log.error({ component: 'routing', error: errorSummary(error) }, 'the A/B test sweep failed'))
  void sweep()
  const timer = setInterval(sweep, intervalMs)
  timer.unref?.()
  return () => clearInterval(timer)
}
