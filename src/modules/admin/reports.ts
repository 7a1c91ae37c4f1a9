// The reports queue (docs/operators.md#the-reports-queue): visitors' reports with their link, open or
// closed, newest first; dismissing one closes it without touching its link. Acting on the link instead
// (links.ts) closes every open report of it.
import { and, desc, eq } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { links, reports } from '../../db/schema'
import { isId } from '../../lib/ids'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { closeReports } from '../reports/service'
import { recordAction } from './audit'
import { microseconds, olderThan, pageOf } from './cursor'
import type { Operator } from './guard'
import type { AdminReport } from './model'

const columns = {
  report: reports,
  link: { id: links.id, alias: links.alias, domain: links.domain, url: links.url, state: links.state, accountId: links.accountId },
  us: microseconds(reports.createdAt),
}
type Row = { report: typeof reports.$inferSelect; link: { id: string; alias: string; domain: string; url: string; state: AdminReport['link']['state']; accountId: string | null } }

function itemOf({ report, link }: Row): AdminReport {
  return {
    id: report.id,
    reason: report.reason,
    details: report.details,
    email: report.email,
    status: report.status,
    resolution: report.resolution,
    created_at: report.createdAt.toISOString(),
    closed_at: report.closedAt?.toISOString() ?? null,
    link: { id: link.id, alias: link.alias, domain: link.domain, url: link.url, state: link.state, account_id: link.accountId },
  }
}

export async function listReports(db: Db, query: { status: 'open' | 'closed'; cursor?: string; limit: number }): Promise<{ reports: AdminReport[]; next_cursor: string | null }> {
  const rows = await db
    .select(columns)
    .from(reports)
    .innerJoin(links, eq(links.id, reports.linkId))
    .where(and(eq(reports.status, query.status), olderThan(reports.createdAt, reports.id, query.cursor)))
    .orderBy(desc(reports.createdAt), desc(reports.id))
    .limit(query.limit + 1)
  const { items, next } = pageOf(
    rows.map((r) => ({ ...r, id: r.report.id })),
    query.limit,
  )
  return { reports: items.map(itemOf), next_cursor: next }
}

async function findReport(db: Db, id: string): Promise<AdminReport> {
  const [row] = isId('report', id) ? await db.select(columns).from(reports).innerJoin(links, eq(links.id, reports.linkId)).where(eq(reports.id, id)).limit(1) : []
  if (!row) throw new ApiError('REPORT_NOT_FOUND')
  return itemOf(row)
}

/** Closes one report as dismissed (a closed one stays as it was); its link is left as it is. */
export async function dismissReport(services: Pick<Services, 'db' | 'now'>, operator: Operator, id: string, reason: string | null): Promise<AdminReport> {
  await findReport(services.db, id)
  await closeReports(services, { ids: [id] }, 'dismissed')
  await recordAction(services, operator, 'report.dismiss', id, reason)
  return findReport(services.db, id)
}
