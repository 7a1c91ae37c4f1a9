import { t } from 'elysia'
import { Meta } from '../../plugins/errors'

export const LISTED_STATUSES = ['pending', 'approved', 'rejected', 'expired', 'executed', 'failed'] as const

const Approval = t.Object({
  id: t.String({ pattern: '^apr_' }),
  status: t.UnionEnum([...LISTED_STATUSES]),
  agent_id: t.String(),
  operation: t.String({ description: 'links.delete, tags.delete, domains.change, billing.upgrade, …' }),
  request: t.Object({
    method: t.String(),
    path: t.String(),
    query: t.Record(t.String(), t.String()),
    body: t.Unknown({ description: 'The JSON body as sent (a password shows as "[hidden]")' }),
  }),
  created_at: t.String({ format: 'date-time' }),
  expires_at: t.String({ format: 'date-time' }),
  decided_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  result: t.Union([t.Object({ status: t.Integer(), body: t.Unknown() }), t.Null()], { description: 'The answer of the call once run: its status and JSON body' }),
  review_url: t.String({ format: 'uri', description: 'The page where the human reviews and decides' }),
})

const example = {
  id: 'apr_Tq2m9Xw0Lk3Vb8Rt5Yp1Za',
  status: 'pending',
  agent_id: 'agt_Jq3x0v8bYk2Lm5Rt9Wc1Za',
  operation: 'links.delete',
  request: { method: 'DELETE', path: '/api/v1/links/spring-sale', query: {}, body: null },
  created_at: '2026-11-24T10:00:00.000Z',
  expires_at: '2026-11-25T10:00:00.000Z',
  decided_at: null,
  result: null,
  review_url: 'https://api.example.com/approvals/apr_Tq2m9Xw0Lk3Vb8Rt5Yp1Za',
}

export const ApprovalResponse = t.Object({ success: t.Literal(true), data: Approval, meta: Meta }, { examples: [{ success: true, data: example, meta: {} }] })
export const HeldResponse = t.Object(
  { success: t.Literal(true), data: t.Object({ approval: Approval }), meta: Meta },
  {
    description: 'An Agent call to an operation its policy holds: kept for a human decision (Location: the approval)',
    examples: [{ success: true, data: { approval: example }, meta: { held_for_approval: true } }],
  },
)
export const ApprovalListResponse = t.Object(
  { success: t.Literal(true), data: t.Object({ approvals: t.Array(Approval) }), meta: Meta },
  { examples: [{ success: true, data: { approvals: [example] }, meta: {} }] },
)
export const ApprovalParams = t.Object({ approvalId: t.String({ maxLength: 64, examples: ['apr_Tq2m9Xw0Lk3Vb8Rt5Yp1Za'] }) })
export const DecisionParams = t.Object({ approvalId: t.String({ maxLength: 64, examples: ['apr_Tq2m9Xw0Lk3Vb8Rt5Yp1Za'] }), decision: t.UnionEnum(['approve', 'reject']) })
// A union of literals, not t.UnionEnum: Elysia fills an absent optional UnionEnum with its first value.
export const ApprovalListQuery = t.Object({ status: t.Optional(t.Union(LISTED_STATUSES.map((s) => t.Literal(s)))) })

export const approvalModels = { ApprovalResponse, HeldResponse, ApprovalListResponse }
