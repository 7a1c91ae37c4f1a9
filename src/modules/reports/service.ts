// Visitors' reports of links (docs/operators.md#reports). Anyone may report a link, without an account:
// the reporter is the client address as the limits see it, kept only as a keyed hash (with its
// network's, GUEST_NETWORK_IPV4_PREFIX / _IPV6_PREFIX), 5 reports an hour from one address, one open report per reporter and link. A guest link
// reported from REPORTS_TO_FLAG distinct networks is flagged until an operator decides: its visitors see
// a warning first.
import { and, count, countDistinct, eq, sql } from 'drizzle-orm'
import { links, REPORT_REASONS, reports, type LinkRow, type ReportReason } from '../../db/schema'
import { newId } from '../../lib/ids'
import { networkOf } from '../../lib/network'
import { enforceRateLimit } from '../../plugins/client'
import { ApiError } from '../../plugins/errors'
import type { Services } from '../../services'
import { setLinkStates } from '../links/state'
import { normalizeHost } from '../links/url'
import { IpHasher } from '../../../core/ip-hash'

/** Reports from one client address an hour. */
export const REPORT_RATE = { limit: 5, windowMs: 3_600_000 } as const
const MAX_DETAILS = 2000
const MAX_EMAIL = 254
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export interface ReportInput {
  reason: unknown
  details?: unknown
  email?: unknown
}

/** The link a short URL names (its host and first path segment), or 404 LINK_NOT_FOUND. */
export async function linkOfShortUrl(services: Pick<Services, 'db'>, raw: string): Promise<LinkRow> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ApiError('VALIDATION_FAILED', 'body.url: the short URL of the link, such as https://sho.rt/abc1234')
  }
  const alias = url.pathname.slice(1).replace(/\+$/, '')
  return findLink(services, normalizeHost(url.hostname + (url.port ? `:${url.port}` : '')), alias, normalizeHost(url.hostname))
}

/** The link (domain, alias), the domain tried with and without its port (the default domain may carry one). */
export async function findLink(services: Pick<Services, 'db'>, host: string, alias: string, hostWithoutPort = host): Promise<LinkRow> {
  for (const domain of new Set([host, hostWithoutPort])) {
    const [row] = await services.db
      .select()
      .from(links)
      .where(and(eq(links.domain, domain), eq(links.alias, alias)))
      .limit(1)
    if (row) return row
  }
  throw new ApiError('LINK_NOT_FOUND', 'No link at this short URL.')
}

function checkInput(input: ReportInput): { reason: ReportReason; details: string | null; email: string | null } {
  if (typeof input.reason !== 'string' || !(REPORT_REASONS as readonly string[]).includes(input.reason)) {
    throw new ApiError('VALIDATION_FAILED', `body.reason: one of ${REPORT_REASONS.join(', ')}`)
  }
  const details = input.details === undefined || input.details === null || input.details === '' ? null : input.details
  if (details !== null && (typeof details !== 'string' || details.length > MAX_DETAILS)) throw new ApiError('VALIDATION_FAILED', `body.details: a text of at most ${MAX_DETAILS} characters`)
  const email = input.email === undefined || input.email === null || input.email === '' ? null : input.email
  if (email !== null && (typeof email !== 'string' || email.length > MAX_EMAIL || !EMAIL.test(email))) throw new ApiError('VALIDATION_FAILED', 'body.email: a valid e-mail address, or leave it out')
  return { reason: input.reason as ReportReason, details: details as string | null, email: email as string | null }
}

/**
 * Files a report of `link` from `clientIp`: `created` false when this reporter's report of it is still
 * open (its id is answered again). Then flags a guest link reported from enough networks. The report of
 * a link already disabled is filed closed.
 */
export async function fileReport(services: Services, link: LinkRow, input: ReportInput, clientIp: string): Promise<{ id: string; created: boolean }> {
  const checked = checkInput(input)
  const hasher = new IpHasher(services.config.ipHashSecret)
  const reporterHash = hasher.digest(clientIp || 'unknown')
  await enforceRateLimit(services.limiter, `reports:${reporterHash}`, REPORT_RATE.limit, REPORT_RATE.windowMs, services.now())
  const id = newId('report')
  const now = new Date(services.now())
  // A link already disabled needs no decision: its report is kept, closed, out of the operators' queue.
  const settled = link.state === 'disabled' ? { status: 'closed' as const, resolution: 'already disabled', closedAt: now } : {}
  const [inserted] = await services.db
    .insert(reports)
    .values({ id, linkId: link.id, reporterHash, networkHash: hasher.digest(networkOf(clientIp || 'unknown', services.config.guestNetwork.prefixes)), ...checked, ...settled, createdAt: now })
    .onConflictDoNothing()
    .returning({ id: reports.id })
  if (!inserted) {
    const [open] = await services.db
      .select({ id: reports.id })
      .from(reports)
      .where(and(eq(reports.linkId, link.id), eq(reports.reporterHash, reporterHash), eq(reports.status, 'open')))
      .limit(1)
    return { id: open?.id ?? id, created: false }
  }
  services.counters.reportsFiled++
  if (link.accountId === null && link.state === 'ok') await flagIfReportedEnough(services, link)
  return { id, created: true }
}

async function flagIfReportedEnough(services: Services, link: LinkRow): Promise<void> {
  const [row] = await services.db
    .select({ networks: countDistinct(reports.networkHash) })
    .from(reports)
    .where(and(eq(reports.linkId, link.id), eq(reports.status, 'open')))
  if (Number(row?.networks ?? 0) >= services.config.reportsToFlag) {
    await setLinkStates(services, [link.id], 'flagged', `reported from ${row!.networks} networks`, ['ok'])
  }
}

/**
 * Files the report of an automatic check (a reputation service) that flagged `linkId`, so the link waits
 * in the operators' queue like a reported one. The reporter is the check's name, not an address: one
 * open report per check and link.
 */
export async function fileCheckReport(services: Pick<Services, 'db'>, linkId: string, check: string, reason: ReportReason, details: string): Promise<void> {
  const reporter = `check:${check}`
  await services.db
    .insert(reports)
    .values({ id: newId('report'), linkId, reporterHash: reporter, networkHash: reporter, reason, details })
    .onConflictDoNothing()
}

/** Open reports of a link: what its inspect page and the operators' queue show. */
export async function openReportCount(services: Pick<Services, 'db'>, linkId: string): Promise<number> {
  const [row] = await services.db
    .select({ n: count() })
    .from(reports)
    .where(and(eq(reports.linkId, linkId), eq(reports.status, 'open')))
  return Number(row?.n ?? 0)
}

/** Closes the open reports of `linkIds` with what was done about them (an operator's action). */
export async function closeReports(services: Pick<Services, 'db' | 'now'>, where: { linkIds?: readonly string[]; ids?: readonly string[] }, resolution: string): Promise<number> {
  const conditions = [eq(reports.status, 'open')]
  if (where.linkIds) conditions.push(sql`${reports.linkId} in ${where.linkIds.length ? where.linkIds : ['']}`)
  if (where.ids) conditions.push(sql`${reports.id} in ${where.ids.length ? where.ids : ['']}`)
  const closed = await services.db
    .update(reports)
    .set({ status: 'closed', resolution, closedAt: new Date(services.now()) })
    .where(and(...conditions))
    .returning({ id: reports.id })
  return closed.length
}
