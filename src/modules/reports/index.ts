// POST /api/v1/reports: anyone reports a link, no credential needed (docs/operators.md#reports). The
// same reports arrive from a link's inspect page (`/{alias}+`) through the redirector's /internal/report.
import { Elysia } from 'elysia'
import { clientIp } from '../../plugins/client'
import { errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { reportModels } from './model'
import { fileReport, linkOfShortUrl, REPORT_RATE } from './service'

export function reportsModule(services: Services) {
  return new Elysia({ name: 'modules.reports' })
    .use(errors)
    .model(reportModels)
    .post(
      '/api/v1/reports',
      async ({ body, request, server, set }) => {
        const link = await linkOfShortUrl(services, body.url)
        const { id, created } = await fileReport(services, link, body, clientIp(services, request, server))
        set.status = created ? 201 : 200
        return { success: true, data: { id }, meta: created ? {} : { notices: [{ type: 'report', message: 'You reported this link already; that report is still open.' }] } }
      },
      {
        body: 'ReportRequest',
        response: { 200: 'ReportResponse', 201: 'ReportResponse', ...errorResponses('VALIDATION_FAILED', 'LINK_NOT_FOUND', 'RATE_LIMITED') },
        detail: {
          operationId: 'reportLink',
          tags: ['reports'],
          summary: 'Report a link (no account needed)',
          description: `Tells the operators of this service that a short link is abusive: phishing, malware, spam, illegal content or something else. ${REPORT_RATE.limit} reports an hour per client address; one open report per reporter and link (a second answers 200 with the first one's id). A guest link reported from several networks is flagged until an operator decides: its visitors see a warning first. An unknown short URL is 404.`,
        },
      },
    )
}
