// The routing section of Pro statistics (docs/routing.md#statistics): for each route of the link (its
// rules and A/B variants now, the default, and any route clicked in the period), the human clicks of the
// period and the leads, sales and conversions attributed to those clicks; and a summary of the routing.
import { routeCounts, type RouteCounts } from '../../analytics/routing-stats'
import { DEFAULT_ROUTE } from '../../../core/clicks'
import type { LinkRow } from '../../db/schema'
import { periodStart } from './conversions'
import type { StatsSection } from './service'

type Kind = 'rule' | 'variant' | 'default'

interface RouteItem extends RouteCounts {
  route: string
  kind: Kind
  /** The route's destination now; null for a route clicked in the period but no longer configured. */
  url: string | null
}

const NONE: RouteCounts = { clicks: 0, leads: 0, sales: 0, conversions: 0 }

function kindOf(route: string): Kind {
  return route.startsWith('rule:') ? 'rule' : route.startsWith('ab:') ? 'variant' : 'default'
}

export function routingStats(link: Pick<LinkRow, 'url' | 'routing'>, counts: ReadonlyMap<string, RouteCounts>) {
  const routing = link.routing
  const configured = new Map<string, string>([
    ...(routing?.rules ?? []).map((rule) => [`rule:${rule.id}`, rule.url] as const),
    ...(routing?.ab?.variants ?? []).map((variant) => [`ab:${variant.id}`, variant.url] as const),
    [DEFAULT_ROUTE, link.url],
  ])
  const routes = [...configured.keys(), ...[...counts.keys()].filter((route) => !configured.has(route)).sort()]
  const items: RouteItem[] = routes.map((route) => ({ route, kind: kindOf(route), url: configured.get(route) ?? null, ...(counts.get(route) ?? NONE) }))
  const defaultClicks = counts.get(DEFAULT_ROUTE)?.clicks ?? 0
  const allClicks = [...counts.values()].reduce((sum, c) => sum + c.clicks, 0)
  const ab = routing?.ab
  return {
    routingStats: items,
    routingSummary: {
      rules: routing?.rules.length ?? 0,
      ab: ab ? { status: ab.status, winner_by: ab.winner_by, ends_at: ab.ends_at, winner: ab.winner, variants: ab.variants.length } : null,
      routed_clicks: allClicks - defaultClicks,
      default_clicks: defaultClicks,
    },
  }
}

export const routingSection: StatsSection = async (services, link, { period, now }) => {
  const counts = await routeCounts(services.clickhouse, link.id, periodStart(period, now) ?? 0, now.getTime() + 1)
  return routingStats(link, counts)
}
