// The admin API under /api/v1/admin (docs/operators.md), for operators only (guard.ts): everyone else
// gets the unknown path's 404. One verb a route:
//   GET  me                                 the operator of the call (for scripts: who the credential is)
//   GET  reports?status&cursor              visitors' reports with their link · POST reports/{id}/dismiss
//   GET  links?q&cursor                     every account's links · POST links/{id}/{flag|disable|restore}
//   GET  hosts · POST hosts {host, reason}  banned hosts · DELETE hosts/{host}
//   GET  accounts/{id} · POST accounts/{id}/{suspend|restore}
//   GET  actions?cursor                     the audit of every write above
// Writes take an optional {reason} (or no body), kept in the audit; lists answer data: {<items>, next_cursor}.
import { Elysia } from 'elysia'
import { createMailer } from '../../mail/mailer'
import { errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { adminAccount, restoreAccount, suspendAccount } from './accounts'
import { listActions } from './audit'
import { operatorGuard } from './guard'
import { banHost, listHosts, unbanHost } from './hosts'
import { actOnLink, searchLinks } from './links'
import { AccountActionParams, AccountParams, ADMIN_DEFAULT_LIMIT, adminModels, HostParams, LinkActionParams, LinksQuery, PageQuery, ReportParams, ReportsQuery } from './model'
import { dismissReport, listReports } from './reports'

const ADMIN = '/api/v1/admin'
const ok = <T>(data: T) => ({ success: true as const, data, meta: {} })
const TAGS = ['admin']
const reasonOf = (body: { reason?: string }) => body.reason?.trim() || null
/** Every admin route's refusals; 404 is also everyone else's answer. */
const READ_ERRORS = ['NOT_FOUND', 'RATE_LIMITED'] as const
const WRITE_ERRORS = [...READ_ERRORS, 'CSRF_TOKEN_INVALID', 'VALIDATION_FAILED'] as const
/** Said of every write that takes {reason}. */
const REASON = 'The body, {reason} (kept in the audit), may be left out.'
const WHO =
  'Operators only (ADMIN_EMAILS): the signed-in session (writes send X-CSRF-Token) or an API key carrying the `admin` scope. Anyone else, with or without a credential, gets 404 NOT_FOUND as for an unknown path.'

export function adminModule(services: Services) {
  const mailer = createMailer(services.config.mail)
  const page = (query: { cursor?: string; limit?: number }) => ({ cursor: query.cursor, limit: query.limit ?? ADMIN_DEFAULT_LIMIT })
  return (
    new Elysia({ name: 'modules.admin' })
      .use(errors)
      .use(operatorGuard(services))
      .model(adminModels)
      // A write's body is optional ({reason} at most): none at all reads as {} (the body plugin gives null).
      .onTransform((context) => {
        if (context.body === null || context.body === undefined) context.body = {}
      })
      .get(`${ADMIN}/me`, ({ operator }) => ok(operator), {
        operator: true,
        response: { 200: 'OperatorResponse', ...errorResponses(...READ_ERRORS) },
        detail: { operationId: 'adminMe', tags: TAGS, summary: 'Who is operating', description: `200 for an operator (the dashboard shows its moderation section then). ${WHO}` },
      })
      .get(`${ADMIN}/reports`, async ({ query }) => ok(await listReports(services.db, { status: query.status ?? 'open', ...page(query) })), {
        operator: true,
        query: ReportsQuery,
        response: { 200: 'AdminReportListResponse', ...errorResponses(...READ_ERRORS, 'VALIDATION_FAILED') },
        detail: {
          operationId: 'adminListReports',
          tags: TAGS,
          summary: 'The reports queue',
          description: `Visitors' reports (POST /api/v1/reports and the inspect page's form), newest first, each with its link. A report stays open until an operator dismisses it or acts on its link. ${WHO}`,
        },
      })
      .post(`${ADMIN}/reports/:id/dismiss`, async ({ operator, params, body }) => ok({ report: await dismissReport(services, operator, params.id, reasonOf(body)) }), {
        operator: true,
        params: ReportParams,
        body: 'ReasonBody',
        response: { 200: 'AdminReportResponse', ...errorResponses(...WRITE_ERRORS, 'REPORT_NOT_FOUND') },
        detail: {
          operationId: 'adminDismissReport',
          tags: TAGS,
          summary: 'Dismiss a report',
          description: `Closes the report as dismissed and leaves its link as it is. A closed report is answered as it is. Unknown id: 404 REPORT_NOT_FOUND. ${REASON} ${WHO}`,
        },
      })
      .get(`${ADMIN}/links`, async ({ query }) => ok(await searchLinks(services.db, { q: query.q, ...page(query) })), {
        operator: true,
        query: LinksQuery,
        response: { 200: 'AdminLinkListResponse', ...errorResponses(...READ_ERRORS, 'VALIDATION_FAILED') },
        detail: {
          operationId: 'adminSearchLinks',
          tags: TAGS,
          summary: 'Find links of every account',
          description: `q: an alias (exactly), a host (the destination's host and its subdomains), or an http(s) URL (destinations starting with it, and the link at that short URL). Newest first. ${WHO}`,
        },
      })
      .post(`${ADMIN}/links/:id/:action`, async ({ operator, params, body }) => ok(await actOnLink(services, operator, params.id, params.action, reasonOf(body))), {
        operator: true,
        params: LinkActionParams,
        body: 'ReasonBody',
        response: { 200: 'AdminLinkActionResponse', ...errorResponses(...WRITE_ERRORS, 'LINK_NOT_FOUND') },
        detail: {
          operationId: 'adminLinkAction',
          tags: TAGS,
          summary: 'Flag, disable or restore a link',
          description: `flag: visitors see a warning with the destination and a Continue link first; disable: visitors get a 410 page saying the link was disabled for abuse; restore: the link redirects again. Every redirector follows within a second. Closes the link's open reports. ${REASON} ${WHO}`,
        },
      })
      .get(`${ADMIN}/hosts`, async ({ query }) => ok(await listHosts(services.db, page(query))), {
        operator: true,
        query: PageQuery,
        response: { 200: 'BannedHostListResponse', ...errorResponses(...READ_ERRORS, 'VALIDATION_FAILED') },
        detail: { operationId: 'adminListHosts', tags: TAGS, summary: 'Banned hosts', description: `Newest first. ${WHO}` },
      })
      .post(
        `${ADMIN}/hosts`,
        async ({ operator, body, set }) => {
          const { created, ...banned } = await banHost(services, operator, body)
          set.status = created ? 201 : 200
          return ok(banned)
        },
        {
          operator: true,
          body: 'BanRequest',
          response: { 200: 'BanResponse', 201: 'BanResponse', ...errorResponses(...WRITE_ERRORS) },
          detail: {
            operationId: 'adminBanHost',
            tags: TAGS,
            summary: 'Ban a host',
            description: `The host and its subdomains (a name without a dot, or an IP address, only itself) are refused as destinations from now on (400 DESTINATION_BLOCKED), and every link whose destination, routing rule or A/B variant leads there is disabled, its reports closed. 201 for a new ban; 200 when the host was banned already (the ban is kept as it was; matching links are disabled again). ${WHO}`,
          },
        },
      )
      .delete(`${ADMIN}/hosts/:host`, async ({ operator, params, body }) => ok({ host: await unbanHost(services, operator, params.host, reasonOf(body)) }), {
        operator: true,
        params: HostParams,
        body: 'ReasonBody',
        response: { 200: 'UnbanResponse', ...errorResponses(...WRITE_ERRORS, 'HOST_NOT_BANNED') },
        detail: {
          operationId: 'adminUnbanHost',
          tags: TAGS,
          summary: 'Lift a host ban',
          description: `New links may lead to the host again. Links the ban disabled stay disabled until restored one by one. A host that is not banned: 404 HOST_NOT_BANNED. ${REASON} ${WHO}`,
        },
      })
      .get(`${ADMIN}/accounts/:id`, async ({ params }) => ok({ account: await adminAccount(services, params.id) }), {
        operator: true,
        params: AccountParams,
        response: { 200: 'AdminAccountResponse', ...errorResponses(...READ_ERRORS, 'VALIDATION_FAILED', 'ACCOUNT_NOT_FOUND') },
        detail: { operationId: 'adminGetAccount', tags: TAGS, summary: 'An account', description: `Its address, plan, links and whether it is suspended. ${WHO}` },
      })
      .post(
        `${ADMIN}/accounts/:id/:action`,
        async ({ operator, params, body }) => {
          const act = params.action === 'suspend' ? suspendAccount : restoreAccount
          return ok(await act(services, mailer, operator, params.id, reasonOf(body)))
        },
        {
          operator: true,
          params: AccountActionParams,
          body: 'ReasonBody',
          response: { 200: 'AccountActionResponse', ...errorResponses(...WRITE_ERRORS, 'ACCOUNT_NOT_FOUND') },
          detail: {
            operationId: 'adminAccountAction',
            tags: TAGS,
            summary: 'Suspend or restore an account',
            description: `suspend: its API keys, sign-in sessions and Agent tokens are revoked at once in every process, sign-in is refused, its links are disabled (their reports closed) and its owner is mailed. An operator's account (in ADMIN_EMAILS) cannot be suspended (400). restore: sign-in is possible again and the links the suspension disabled come back to the state they were in; links disabled for other reasons stay so, and revoked credentials stay revoked. ${REASON} ${WHO}`,
          },
        },
      )
      .get(`${ADMIN}/actions`, async ({ query }) => ok(await listActions(services.db, page(query))), {
        operator: true,
        query: PageQuery,
        response: { 200: 'OperatorActionListResponse', ...errorResponses(...READ_ERRORS, 'VALIDATION_FAILED') },
        detail: { operationId: 'adminListActions', tags: TAGS, summary: "Operators' actions", description: `Every admin write: who, what, on what, why and when; newest first. ${WHO}` },
      })
  )
}
