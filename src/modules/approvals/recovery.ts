// Approvals whose call was interrupted. Approving wins the approval (status "approved"), runs the held
// call once, then records its result (executed or failed). A process that dies between the two leaves
// the approval "approved" for ever, and nobody can tell from it whether the call ran. Such an approval
// is never run again (the human approved one run, which may have happened): it is marked failed with
// the reason, so the person sees what to check and can ask again. Each API process looks at start and
// then every few minutes; an approval counts as interrupted only once it has been "approved" far longer
// than any call takes, so a call still running in another process is left alone (and if it does finish
// later, its own result replaces this one).
import { and, eq, lt } from 'drizzle-orm'
import { agentApprovals } from '../../db/schema'
import { errorSummary } from '../../lib/errors'
import { log } from '../../lib/log'
import type { Services } from '../../services'

/** An approved call still without a result this long after the decision was interrupted. */
export const INTERRUPTED_AFTER_MS = 10 * 60_000
const CHECK_INTERVAL_MS = 5 * 60_000

export const INTERRUPTED_RESULT = {
  status: 500,
  body: {
    success: false,
    error: 'INTERNAL_ERROR',
    hint: 'The service stopped while this approved call was running, so whether it took effect is unknown; it was not run again. Check its effect (for example, whether the link still exists), and ask again if it did not happen.',
  },
} as const

/** Marks every interrupted approval failed with the reason; their ids. */
export async function failInterruptedApprovals(services: Pick<Services, 'db' | 'now'>): Promise<string[]> {
  const before = new Date(services.now() - INTERRUPTED_AFTER_MS)
  const rows = await services.db
    .update(agentApprovals)
    .set({ status: 'failed', result: INTERRUPTED_RESULT })
    .where(and(eq(agentApprovals.status, 'approved'), lt(agentApprovals.decidedAt, before)))
    .returning({ id: agentApprovals.id })
  return rows.map((r) => r.id)
}

/** Runs the check now and then periodically; returns its stop. A failed check is logged and tried again. */
export function startApprovalRecovery(services: Pick<Services, 'db' | 'now'>, intervalMs = CHECK_INTERVAL_MS): () => void {
  const check = () =>
    failInterruptedApprovals(services).then(
      (ids) => {
        if (ids.length > 0) log.warn({ component: 'approvals', approvals: ids }, `${ids.length} approved call(s) interrupted by a stop were marked failed, not run again`)
      },
      (error) => log.error({ component: 'approvals', error: errorSummary(error) }, 'the check for interrupted approvals failed'),
    )
  void check()
  const timer = setInterval(check, intervalMs)
  timer.unref?.()
  return () => clearInterval(timer)
}
