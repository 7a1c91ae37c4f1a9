// The API's records that more than one module of the dashboard shows, named once from the typed
// client's schema (so a change of the API document shows up here at type-check). A page imports its
// records from here, never from another page.
import type { Schemas } from './api'

/** A link as the list answers it (GET /api/v1/links): one row of the links table. */
export type LinkRecord = Schemas['LinkListResponse']['data']['links'][number]

/** One link in full (GET and PATCH /api/v1/links/{alias}): the link page and its edit form. */
export type LinkDetails = Schemas['LinkResponse']['data']

/** A link's Pro statistics for one period (GET /api/v1/links/{alias}/stats). */
export type StatsData = Schemas['StatsResponse']['data']
