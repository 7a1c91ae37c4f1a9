// One reading of a request's query, shared by everything that decides on it. Two readers of one URL
// that disagree are how an approval was skipped: the hold read the first `dry_run`, the route the last.
// So, before any route runs (after authentication, so an Agent's refused call is still audited):
// - a query parameter given twice is 400 on every route (RFC 6749 3.1 says the same of OAuth requests);
// - `dry_run` on a write whose route does not declare a dry run is 400: a preview is never silently a
//   real write;
// - where the route declares one (auth option `dryRun`, the document's `x-dry-run`), the verdict is taken
//   from the query the route itself parsed and validated, and kept here for the hold, the idempotency
//   store and the audit (`isDryRun`), which never read the URL again.
import { Elysia } from 'elysia'
import { ApiError } from './errors'

/** What the plugin needs of a registered route: `app.routes` entries. */
interface RouteEntry {
  method: string
  path: string
  hooks?: { detail?: unknown }
}

/** Methods that write: a dry run on them is either honoured by the route or refused. */
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

const dryRuns = new WeakMap<Request, boolean>()

/** True when this request is a dry run its route honours (nothing is written). */
export function isDryRun(request: Request): boolean {
  return dryRuns.get(request) === true
}

/** The first parameter name that occurs more than once in a query string, or null. */
export function repeatedParameter(search: string): string | null {
  const seen = new Set<string>()
  for (const name of new URLSearchParams(search).keys()) {
    if (seen.has(name)) return name
    seen.add(name)
  }
  return null
}

export interface QueryOptions {
  /** Every route of the app (read on the first request, when all modules have registered theirs). */
  routes: () => readonly RouteEntry[]
  /**
   * Routes (as declared) that answer a repeated parameter their own way: the tracking pixel answers a GIF
   * whatever it is sent; the authorization endpoint sends the error to the client's redirect URI.
   */
  ownRules?: readonly string[]
}

const declaresDryRun = (route: RouteEntry) => (route.hooks?.detail as Record<string, unknown> | undefined)?.['x-dry-run'] === true

export function queryPlugin({ routes, ownRules = [] }: QueryOptions) {
  const own = new Set(ownRules)
  let previews: Set<string> | null = null
  const previewsOn = (method: string, route: string) => {
    previews ??= new Set(
      routes()
        .filter(declaresDryRun)
        .map((r) => `${r.method} ${r.path}`),
    )
    return previews.has(`${method} ${route}`)
  }
  return new Elysia({ name: 'plugins.query', seed: ownRules }).onBeforeHandle({ as: 'global' }, ({ request, route, query }) => {
    if (own.has(route)) return
    const url = request.url
    const start = url.indexOf('?')
    if (start === -1) return
    const search = url.slice(start + 1)
    const repeated = repeatedParameter(search)
    if (repeated !== null) {
      throw new ApiError('VALIDATION_FAILED', `query.${repeated.slice(0, 60)}: given more than once; send each query parameter once.`)
    }
    if (previewsOn(request.method, route)) {
      dryRuns.set(request, (query as Record<string, unknown>).dry_run === 'true')
    } else if (WRITES.has(request.method) && new URLSearchParams(search).has('dry_run')) {
      throw new ApiError('VALIDATION_FAILED', `query.dry_run: ${request.method} ${route.slice(0, 100)} has no dry run; leave dry_run out (nothing was done).`)
    }
  })
}
