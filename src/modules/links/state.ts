// A link's standing (docs/operators.md): ok, flagged (visitors see a warning first and continue by a
// signed link) or disabled (410, for abuse). Every change is written through to the cache after the
// commit and announced, so every redirector follows within a second.
import { and, eq, inArray, ne } from 'drizzle-orm'
import { links, type LinkRow, type LinkState } from '../../db/schema'
import type { Services } from '../../services'
import { findLinkWithPlan, recordOf, syncLinkCache } from './cache'

type StateServices = Pick<Services, 'db' | 'kv' | 'counters'>

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
  const changed = await services.db
    .update(links)
    .set({ state, stateReason: state === 'ok' ? null : reason })
    .where(and(...where))
    .returning()
  services.counters.linkStates[state] += changed.length
  for (const row of changed) {
    const withPlan = await findLinkWithPlan(services, eq(links.id, row.id))
    if (withPlan) await syncLinkCache(services, withPlan, recordOf(withPlan), { publish: true })
  }
  return changed
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
