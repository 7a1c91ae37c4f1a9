// The admin API's shapes (docs/operators.md), written once with `t`; the services' types derive from them.
import { t, type Static } from 'elysia'
import { REPORT_REASONS } from '../../db/schema'
import { idPattern } from '../../lib/ids'
import { Int, Meta } from '../../plugins/errors'

/** Largest page of every admin list; the default is 50. */
export const ADMIN_MAX_LIMIT = 100
export const ADMIN_DEFAULT_LIMIT = 50
/** An operator's reason: a sentence or a ticket reference, kept in the audit. */
export const MAX_REASON = 500

const when = (description: string) => t.String({ format: 'date-time', description })
const nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T, description?: string) => t.Union([schema, t.Null()], description ? { description } : {})
// A tuple, not LINK_STATES.map(…): Elysia types a route's answer only from a union written as a tuple.
const LinkState = t.Union([t.Literal('ok'), t.Literal('flagged'), t.Literal('disabled')], {
  description: 'ok; flagged (visitors see a warning with Continue first); disabled (410, "disabled for abuse")',
})

/** A link as operators see it: every account's (account_id null for a guest's). */
export const AdminLink = t.Object({
  id: t.String({ pattern: idPattern('link') }),
  alias: t.String(),
  domain: t.String(),
  url: t.String({ description: 'The destination' }),
  account_id: nullable(t.String(), 'The owning account; null for a guest link'),
  state: LinkState,
  state_reason: nullable(t.String(), "Why the state is not ok: an operator's reason, a host ban, a suspension, reports"),
  open_reports: Int({ description: 'Reports of the link still open' }),
  created_at: when('When the link was created'),
})
export type AdminLink = Static<typeof AdminLink>

export const AdminReport = t.Object({
  id: t.String({ pattern: idPattern('report') }),
  reason: t.String({ enum: [...REPORT_REASONS] }),
  details: nullable(t.String()),
  email: nullable(t.String(), 'How the reporter may be reached, when they said'),
  status: t.Union([t.Literal('open'), t.Literal('closed')]),
  resolution: nullable(t.String(), 'What closed it: dismissed, or the action on its link (flag, disable, restore)'),
  created_at: when('When it was filed'),
  closed_at: nullable(when('When it was closed')),
  link: t.Object({
    id: t.String(),
    alias: t.String(),
    domain: t.String(),
    url: t.String(),
    state: LinkState,
    account_id: nullable(t.String(), 'null for a guest link'),
  }),
})
export type AdminReport = Static<typeof AdminReport>

export const BannedHost = t.Object({
  host: t.String({ description: 'Lower-case, punycode; the ban covers its subdomains' }),
  reason: nullable(t.String()),
  banned_by: nullable(t.String(), "The operator's account id"),
  created_at: when('When it was banned'),
})
export type BannedHost = Static<typeof BannedHost>

export const AdminAccount = t.Object({
  id: t.String({ pattern: idPattern('account') }),
  email: t.String(),
  plan: t.String(),
  created_at: when('When the account was made'),
  suspended_at: nullable(when('Since when it is suspended'), 'null unless suspended'),
  links: Int({ description: 'Its links, in every state' }),
})
export type AdminAccount = Static<typeof AdminAccount>

export const ADMIN_ACTIONS = ['report.dismiss', 'link.flag', 'link.disable', 'link.restore', 'host.ban', 'host.unban', 'account.suspend', 'account.restore'] as const
export type AdminAction = (typeof ADMIN_ACTIONS)[number]

export const OperatorAction = t.Object({
  id: t.String({ pattern: idPattern('operatorAction') }),
  operator_id: nullable(t.String(), 'null once that account is gone'),
  operator_email: nullable(t.String()),
  action: t.String({ enum: [...ADMIN_ACTIONS] }),
  target: t.String({ description: 'A report id, a link id, a host or an account id' }),
  reason: nullable(t.String()),
  created_at: when('When it was done'),
})
export type OperatorAction = Static<typeof OperatorAction>

// Requests. Query values are strings: t.Integer is the type that reads them.
const Cursor = t.Optional(t.String({ pattern: '^[A-Za-z0-9_-]+$', maxLength: 256, description: 'next_cursor of the previous page' }))
const Limit = t.Optional(t.Integer({ minimum: 1, maximum: ADMIN_MAX_LIMIT, default: ADMIN_DEFAULT_LIMIT, description: `Items per page, 1-${ADMIN_MAX_LIMIT}` }))
export const PageQuery = t.Object({ cursor: Cursor, limit: Limit })
export const ReportsQuery = t.Object({
  status: t.Optional(t.Union([t.Literal('open'), t.Literal('closed')], { default: 'open', description: 'open (default) or closed' })),
  cursor: Cursor,
  limit: Limit,
})
export const LinksQuery = t.Object({
  q: t.Optional(
    t.String({
      maxLength: 2048,
      description:
        "An alias (exactly), a host (the destination's host or any subdomain of it), or a URL: the links whose destination starts with it, or the link at that short URL. Absent: every link, newest first",
      examples: ['evil.example'],
    }),
  ),
  cursor: Cursor,
  limit: Limit,
})

export const ReasonBody = t.Object(
  { reason: t.Optional(t.String({ maxLength: MAX_REASON, description: `Why, for the audit (at most ${MAX_REASON} characters)` })) },
  { examples: [{ reason: 'Phishing page imitating a bank, reported three times' }, {}] },
)
export const BanRequest = t.Object(
  {
    host: t.String({ minLength: 1, maxLength: 260, description: 'A host name (any case, IDN or punycode) or an IP address; its subdomains are banned with it' }),
    reason: t.Optional(t.String({ maxLength: MAX_REASON })),
  },
  { examples: [{ host: 'evil.example', reason: 'Phishing kit host' }] },
)

export const ReportParams = t.Object({ id: t.String({ maxLength: 64, examples: ['rep_3q2V8mJcQ1aXy0bq9Wc2rA'] }) })
export const LinkActionParams = t.Object({
  id: t.String({ maxLength: 64, examples: ['link_Q2xvR0k3bVd4eTFhX3Nt'] }),
  action: t.Union([t.Literal('flag'), t.Literal('disable'), t.Literal('restore')], { description: 'flag: visitors see a warning first; disable: 410; restore: back to ok' }),
})
export const HostParams = t.Object({ host: t.String({ maxLength: 260, examples: ['evil.example'] }) })
export const AccountParams = t.Object({ id: t.String({ maxLength: 64, examples: ['acct_Vb8Rt5Yp1ZaKq2m9Xw0Lk3'] }) })
export const AccountActionParams = t.Object({
  id: t.String({ maxLength: 64, examples: ['acct_Vb8Rt5Yp1ZaKq2m9Xw0Lk3'] }),
  action: t.Union([t.Literal('suspend'), t.Literal('restore')], { description: 'suspend, or restore a suspended account' }),
})

// Examples shared by the answers.
const LINK_EXAMPLE: AdminLink = {
  id: 'link_Q2xvR0k3bVd4eTFhX3NtbA',
  alias: 'aZ3kP9q',
  domain: 'sho.rt',
  url: 'https://login.evil.example/bank',
  account_id: null,
  state: 'flagged',
  state_reason: 'reported from 3 networks',
  open_reports: 3,
  created_at: '2026-11-24T10:00:00.000Z',
}
const REPORT_EXAMPLE: AdminReport = {
  id: 'rep_3q2V8mJcQ1aXy0bq9Wc2rA',
  reason: 'phishing',
  details: 'It asks for my bank password on a page that looks like my bank.',
  email: 'visitor@example.com',
  status: 'open',
  resolution: null,
  created_at: '2026-11-24T10:05:00.000Z',
  closed_at: null,
  link: { id: LINK_EXAMPLE.id, alias: LINK_EXAMPLE.alias, domain: LINK_EXAMPLE.domain, url: LINK_EXAMPLE.url, state: 'flagged', account_id: null },
}
const HOST_EXAMPLE: BannedHost = { host: 'evil.example', reason: 'Phishing kit host', banned_by: 'acct_Op3rAt0rXq2m9Xw0Lk3Vb8', created_at: '2026-11-24T11:00:00.000Z' }
const ACCOUNT_EXAMPLE: AdminAccount = {
  id: 'acct_Vb8Rt5Yp1ZaKq2m9Xw0Lk3',
  email: 'owner@example.com',
  plan: 'free',
  created_at: '2026-10-01T08:00:00.000Z',
  suspended_at: '2026-11-24T12:00:00.000Z',
  links: 42,
}
const ACTION_EXAMPLE: OperatorAction = {
  id: 'opa_Kq2m9Xw0Lk3Vb8Rt5Yp1Za',
  operator_id: 'acct_Op3rAt0rXq2m9Xw0Lk3Vb8',
  operator_email: 'abuse@example.com',
  action: 'link.disable',
  target: LINK_EXAMPLE.id,
  reason: 'Phishing page imitating a bank, reported three times',
  created_at: '2026-11-24T11:30:00.000Z',
}

const answer = <T extends Parameters<typeof t.Object>[0]>(data: T, example: unknown, description?: string) =>
  t.Object({ success: t.Literal(true), data: t.Object(data), meta: Meta }, { examples: [{ success: true, data: example, meta: {} }], ...(description && { description }) })
const NextCursor = t.Union([t.String(), t.Null()], { description: 'Pass as ?cursor= for the next page; null on the last page' })

export const OperatorResponse = answer(
  { id: t.String(), email: t.String(), via: t.Union([t.Literal('session'), t.Literal('key')], { description: 'The credential of this call' }) },
  { id: 'acct_Op3rAt0rXq2m9Xw0Lk3Vb8', email: 'abuse@example.com', via: 'session' },
)
export const AdminReportListResponse = answer({ reports: t.Array(AdminReport, { description: 'Newest first' }), next_cursor: NextCursor }, { reports: [REPORT_EXAMPLE], next_cursor: null })
export const AdminReportResponse = answer({ report: AdminReport }, { report: { ...REPORT_EXAMPLE, status: 'closed', resolution: 'dismissed', closed_at: '2026-11-24T11:00:00.000Z' } })
export const AdminLinkListResponse = answer(
  { links: t.Array(AdminLink, { description: 'Newest first' }), next_cursor: NextCursor },
  { links: [LINK_EXAMPLE], next_cursor: 'eyJ0IjoiMTc5NTg0ODU3MzExNzAwMCIsImkiOiJsaW5rX1EyeHYifQ' },
)
export const AdminLinkActionResponse = answer(
  { link: AdminLink, reports_closed: Int({ description: 'Open reports of the link this action closed' }) },
  { link: { ...LINK_EXAMPLE, state: 'disabled', state_reason: 'Phishing page imitating a bank, reported three times', open_reports: 0 }, reports_closed: 3 },
)
export const BannedHostListResponse = answer({ hosts: t.Array(BannedHost, { description: 'Newest first' }), next_cursor: NextCursor }, { hosts: [HOST_EXAMPLE], next_cursor: null })
export const BanResponse = answer(
  { host: BannedHost, links_disabled: Int({ description: 'Links whose destination, routing rule or A/B variant leads to the host (or a subdomain) that this ban disabled' }) },
  { host: HOST_EXAMPLE, links_disabled: 12 },
)
export const UnbanResponse = answer({ host: BannedHost }, { host: HOST_EXAMPLE })
export const AdminAccountResponse = answer({ account: AdminAccount }, { account: ACCOUNT_EXAMPLE })
export const AccountActionResponse = answer(
  {
    account: AdminAccount,
    links_changed: Int({ description: 'suspend: links it disabled; restore: links it brought back (only those the suspension disabled)' }),
    api_keys_revoked: Int(),
    sessions_revoked: Int(),
    agent_tokens_revoked: Int({ description: 'at_ and refresh tokens of its Agents' }),
    mailed: t.Boolean({ description: "Whether the owner's notice was handed to the mail server" }),
  },
  { account: ACCOUNT_EXAMPLE, links_changed: 42, api_keys_revoked: 2, sessions_revoked: 1, agent_tokens_revoked: 4, mailed: true },
)
export const OperatorActionListResponse = answer({ actions: t.Array(OperatorAction, { description: 'Newest first' }), next_cursor: NextCursor }, { actions: [ACTION_EXAMPLE], next_cursor: null })

export const adminModels = {
  OperatorResponse,
  AdminReportListResponse,
  AdminReportResponse,
  AdminLinkListResponse,
  AdminLinkActionResponse,
  BannedHostListResponse,
  BanResponse,
  UnbanResponse,
  AdminAccountResponse,
  AccountActionResponse,
  OperatorActionListResponse,
  ReasonBody,
  BanRequest,
}
