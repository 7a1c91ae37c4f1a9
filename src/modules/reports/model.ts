import { t } from 'elysia'
import { REPORT_REASONS } from '../../db/schema'
import { Meta } from '../../plugins/errors'

export const ReportRequest = t.Object(
  {
    url: t.String({ maxLength: 2048, description: 'The short URL of the link, as a visitor saw it' }),
    reason: t.String({ enum: [...REPORT_REASONS], description: REPORT_REASONS.join(', ') }),
    details: t.Optional(t.String({ maxLength: 2000, description: 'What you saw, at most 2,000 characters' })),
    email: t.Optional(t.String({ maxLength: 254, format: 'email', description: 'How an operator may reach you about it' })),
  },
  { examples: [{ url: 'https://sho.rt/aZ3kP9q', reason: 'phishing', details: 'It asks for my bank password on a page that looks like my bank.' }] },
)

export const ReportResponse = t.Object(
  { success: t.Boolean(), data: t.Object({ id: t.String({ pattern: '^rep_' }) }), meta: Meta },
  { examples: [{ success: true, data: { id: 'rep_3q2V8mJcQ1aXy0bq9Wc2rA' }, meta: {} }] },
)

export const reportModels = { ReportRequest, ReportResponse }
