// 405 with Allow for a known path asked with a method it does not serve (RFC 9110 15.5.6), instead of
// the router's 404: a client that sent PUT where PATCH is meant learns which methods exist. Registered
// before the errors plugin, so its error hook sees the router's NOT_FOUND first.
import { Elysia } from 'elysia'
import { ApiError } from './errors'
import { asOAuthError, isOAuthPath } from './oauth-errors'
import { requestId } from './request-log'

interface Route {
  method: string
  path: string
}

/** `/api/v1/links/:alias` → a pattern for concrete paths; `*` matches the rest. */
function patternOf(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
  return new RegExp(`^${source}/?$`)
}

/** `routes` is read on the first miss, when every module has registered its routes. */
export function methodNotAllowed(routes: () => readonly Route[]) {
  let table: { pattern: RegExp; methods: Set<string> }[] | null = null
  const allowedFor = (path: string): string[] => {
    table ??= Object.entries(
      Object.groupBy(
        routes().filter((r) => r.method !== 'ALL'),
        (r) => r.path,
      ),
    ).map(([route, list]) => ({ pattern: patternOf(route), methods: new Set((list ?? []).map((r) => r.method)) }))
    const methods = new Set<string>()
    for (const entry of table) if (entry.pattern.test(path)) for (const method of entry.methods) methods.add(method)
    if (methods.has('GET')) methods.add('HEAD')
    return [...methods].sort()
  }
  return new Elysia({ name: 'plugins.method-not-allowed' }).onError({ as: 'global' }, ({ code, request, path, set }) => {
    if (code !== 'NOT_FOUND') return
    const allowed = allowedFor(path)
    if (allowed.length === 0 || allowed.includes(request.method)) return
    const error = new ApiError('METHOD_NOT_ALLOWED', `${request.method.slice(0, 20)} is not served here; this path answers ${allowed.join(', ')}.`)
    const headers = { allow: allowed.join(', '), 'x-request-id': requestId(request) }
    const response = isOAuthPath(path) ? asOAuthError(error).toResponse(headers) : error.toResponse(headers)
    set.status = response.status // what the request log reads (plugins/request-log.ts)
    return response
  })
}
