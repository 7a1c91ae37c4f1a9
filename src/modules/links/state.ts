// A link's standing (docs/operators.md): ok, flagged (visitors see a warning first and continue by a
// signed link) or disabled (410, for abuse). Every change is written through to the cache after the
// commit and announced, so every redirector follows within a second. A link that becomes disabled (an
// operator's action, a host ban, a block list, a suspension) commits its `link.disabled` webhook event
// to its account with the change; a guest link has no account and no event.
import { and, eq, inArray, ne } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { links, type LinkRow, type LinkState } from '../../db/schema'
import type { Services } from '../../services'
import { findLinkWithPlan, recordOf, syncLinkCache } from './cache'
import { toLinkEventData } from './service'

/** What a change of state needs; the outbox (and the clock of its events) only when a link may be disabled. */
type StateServices = Pick<Services, 'db' | 'kv' | 'counters' | 'config'> & Partial<Pick<Services, 'now' | 'webhookOutbox'>>

/**
 * The reasons a suspension writes on the links it disables (admin/accounts.ts), by the state each link
 * was in: a restore of the account brings back exactly these, to that state. Any later decision on such a
 * link (an operator's action, a host ban, a block list) replaces the mark, so the restore leaves it alone.
 */
export const SUSPENSION_MARKS = { ok: 'account suspended', flagged: 'account suspended (was flagged)' } as const
export const MARKS: readonly string[] = Object.values(SUSPENSION_MARKS)

/**
 * Sets `state` (with its reason) on the links of `ids` that are not in it already; returns the rows
 * changed. `from`, when given, changes only links in one of those states (a report flags only a link
 * in good standing; a restore leaves an ok link alone).
 */
export async function setLinkStates(services: StateServices, ids: readonly string[], state: LinkState, reason: string | null, from?: readonly LinkState[]): Promise<LinkRow[]> {
  if (ids.length === 0) return []
  const where = [inArray(links.id, [...ids]), ne(links.state, state)]
  if (from) where.push(inArray(links.state, [...from]))
  const changed = await services.db.transaction(async (tx) => {
    const rows = await tx
      .update(links)
      .set({ state, stateReason: state === 'ok' ? null : reason })
      .where(and(...where))
      .returning()
    if (state === 'disabled') await writeDisabledEvents(services, tx, rows)
    return rows
  })
  services.counters.linkStates[state] += changed.length
  for (const row of changed) {
    const withPlan = await findLinkWithPlan(services, eq(links.id, row.id))
    if (withPlan) await syncLinkCache(services, withPlan, recordOf(withPlan), { publish: true })
  }
  return changed
}

/** The `link.disabled` event of each of `rows` that has an account, to that account's endpoints that want it. */
async function writeDisabledEvents(services: StateServices, tx: Pick<Db, 'select' | 'insert'>, rows: readonly LinkRow[]): Promise<void> {
  const outbox = services.webhookOutbox
  if (!outbox) return
  const byAccount = new Map<string, LinkRow[]>()
  for (const row of rows) if (row.accountId !== null) byAccount.set(row.accountId, [...(byAccount.get(row.accountId) ?? []), row])
  const at = new Date((services.now ?? Date.now)())
  for (const [accountId, owned] of byAccount) {
    const webhookIds = await outbox.subscribers(tx, accountId, 'link.disabled')
    await outbox.write(
      tx,
      accountId,
      'link.disabled',
      webhookIds,
      owned.map((row) => toLinkEventData(row, services)),
      at,
    )
  }
}

/**
 * Disables the links of `ids` for `reason` (setLinkStates); those a suspension disabled stay disabled and
 * take `reason` instead of its mark, so the account's restore does not bring them back. Returns the rows
 * that changed state.
 */
export async function disableForGood(services: StateServices, ids: readonly string[], reason: string): Promise<LinkRow[]> {
  const changed = await setLinkStates(services, ids, 'disabled', reason)
  if (ids.length > 0) {
    await services.db
      .update(links)
      .set({ stateReason: reason })
      .where(and(inArray(links.id, [...ids]), eq(links.state, 'disabled'), inArray(links.stateReason, [...MARKS])))
  }
  return changed
}
