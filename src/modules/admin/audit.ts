// The record of operators' actions (operator_actions, append-only): every admin write adds one row
// once its effect is in place — who, what, on what, why, when — and GET /api/v1/admin/actions reads
// them back, newest first.
import { and, desc, eq } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { accounts, operatorActions } from '../../db/schema'
import { newId } from '../../lib/ids'
import type { Services } from '../../services'
import { microseconds, olderThan, pageOf } from './cursor'
import type { Operator } from './guard'
import type { AdminAction, OperatorAction } from './model'

export async function recordAction(services: Pick<Services, 'db' | 'now'>, operator: Operator, action: AdminAction, target: string, reason: string | null): Promise<void> {
  await services.db.insert(operatorActions).values({ id: newId('operatorAction'), operatorId: operator.id, action, target, reason, createdAt: new Date(services.now()) })
}

export async function listActions(db: Db, page: { cursor?: string; limit: number }): Promise<{ actions: OperatorAction[]; next_cursor: string | null }> {
  const rows = await db
    .select({ row: operatorActions, email: accounts.email, us: microseconds(operatorActions.createdAt) })
    .from(operatorActions)
    .leftJoin(accounts, eq(accounts.id, operatorActions.operatorId))
    .where(and(olderThan(operatorActions.createdAt, operatorActions.id, page.cursor)))
    .orderBy(desc(operatorActions.createdAt), desc(operatorActions.id))
    .limit(page.limit + 1)
  const { items, next } = pageOf(
    rows.map((r) => ({ ...r, id: r.row.id })),
    page.limit,
  )
  return {
    actions: items.map(({ row, email }) => ({
      id: row.id,
      operator_id: row.operatorId,
      operator_email: email,
      action: row.action as AdminAction,
      target: row.target,
      reason: row.reason,
      created_at: row.createdAt.toISOString(),
    })),
    next_cursor: next,
  }
}
