// The API's records that more than one module of the dashboard shows, named once from the typed
// client's schema (so a change of the API document shows up here at type-check). A page imports its
// records from here, never from another page. Straight from the client, not through api.ts, so code
// without a page (the routing draft and its tests) can use these types outside a browser.
import type { components } from '../../client/index.ts'

type Schemas = components['schemas']

/** A link as the list answers it (GET /api/v1/links): one row of the links table. */
export type LinkRecord = Schemas['LinkListResponse']['data']['links'][number]

/** One link in full (GET and PATCH /api/v1/links/{alias}): the link page and its edit form. */
export type LinkDetails = Schemas['LinkResponse']['data']

/** A link's Pro statistics for one period (GET /api/v1/links/{alias}/stats). */
export type StatsData = Schemas['StatsResponse']['data']

/** A link's routing as the API answers it (GET and PUT /api/v1/links/{alias}/routing). */
export type RoutingData = Schemas['RoutingResponse']['data']

/** What PUT /api/v1/links/{alias}/routing takes: the whole routing, replacing the one before. */
export type RoutingInput = Schemas['RoutingInput']

// The statistics' routing fields are free-form objects in the API document; these are their documented
// shapes (GET /api/v1/links/{alias}/stats, `routingStats` and `routingSummary`).

/** One route's results in a period: a rule, an A/B variant or the default (the link's own URL). */
export interface RouteResult {
  /** rule:<id>, ab:<id> or default. */
  route: string
  kind: 'rule' | 'variant' | 'default'
  /** The route's destination now; null when it is no longer configured. */
  url: string | null
  clicks: number
  leads: number
  sales: number
  conversions: number
}

export interface RoutingSummary {
  rules: number
  ab: { status: 'running' | 'completed'; winner_by: string | null; ends_at: string | null; winner: string | null; variants: number } | null
  routed_clicks: number
  default_clicks: number
}
