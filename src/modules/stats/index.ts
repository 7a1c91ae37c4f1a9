// Link statistics: GET /api/v1/links/{alias}/stats (mk). Pro: 200 with the statistics; Free: 403
// STATS_REQUIRES_PRO with basic totals in data. See service.ts.
import { Elysia } from 'elysia'
import type { Auth } from '../../plugins/auth'
import { errorResponses, errors } from '../../plugins/errors'
import type { Services } from '../../services'
import { AliasParams } from '../links/model'
import { StatsQuery, statsModels } from './model'
import { conversionsSection } from './conversions'
import { routingSection } from './routing'
import { statsFor, type StatsSection } from './service'

export interface StatsModuleOptions {
  /** Extra sections merged into Pro statistics; default: conversions and revenue. */
  sections?: StatsSection[]
}

export function statsModule(services: Services, auth: Auth, { sections = [conversionsSection, routingSection] }: StatsModuleOptions = {}) {
  return new Elysia({ name: 'modules.stats' })
    .use(errors)
    .use(auth.plugin)
    .model(statsModels)
    .get(
      '/api/v1/links/:alias/stats',
      async ({ params, query, account }) => {
        const request = { alias: params.alias, domain: query.domain, period: query.period ?? '7D', includeBots: query.include_bots === true }
        const { data, meta } = await statsFor(services, account, request, sections)
        return { success: true, data, meta }
      },
      {
        account: { scopes: ['stats:read'] },
        params: AliasParams,
        query: StatsQuery,
        response: { 200: 'StatsResponse', ...errorResponses('VALIDATION_FAILED', 'STATS_REQUIRES_PRO', 'LINK_NOT_FOUND', 'STATS_UNAVAILABLE') },
        detail: {
          operationId: 'getLinkStats',
          tags: ['links'],
          summary: "A link's click statistics (Pro)",
          description:
            'Clicks of the period as a timeseries (every bucket present, empty ones 0: 24 hours for 24H, 7 or 30 days for 7D/30D, days or months for ALL) ' +
            'and the top 10 countries, referrers, devices, browsers and operating systems; `conversions` (by type and currency) and `revenue` (per currency, refunds subtracted) of the same period. Bots are left out unless include_bots=true. ' +
            '`domain` names the domain that owns the alias (default: the service default domain). ' +
            'Free accounts get 403 STATS_REQUIRES_PRO with alias, domain, created_at, total_clicks (all time, humans) and last_clicked_at in `data` and `upgrade_url`. ' +
            "A period other than 24H, 7D, 30D, ALL is 400; another account's link is 404 LINK_NOT_FOUND; 503 STATS_UNAVAILABLE while the click store does not answer.",
        },
      },
    )
}
