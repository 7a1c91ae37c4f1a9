// One log line per API request, written once its answer is out: method, path (never the query, where
// OAuth codes, state and tokens travel), route pattern, status, duration, request id and the kind of
// caller. Fields are picked one by one, never copied from the request: no header, cookie, body, token,
// address or client IP can reach a line. The redirect path logs no request (it has counters); in the
// embedded default only API paths reach the app (one-process/main.ts).
//
// The request id is decided once per request, here: the client's X-Request-Id when it is sane, else a
// new one. Every response carries it (errors.ts puts it on error answers), so a client can quote it.
import { Elysia, StatusMap } from 'elysia'
import { log as processLog, type Logger } from '../lib/log'
import { onBehalfOf } from './on-behalf'
import type { Principal } from './principal'

/** Who called, as far as a log line may tell: the kind of credential, never which one. */
export type CallerKind = 'guest' | 'key' | 'agent' | 'session' | 'none'

interface RequestEntry {
  id: string
  startedAt: number
  caller: CallerKind
}

const entries = new WeakMap<Request, RequestEntry>()

/** Printable ASCII and at most 128 characters: anything else (control bytes, a megabyte) is replaced. */
const SANE_REQUEST_ID = /^[\x20-\x7e]{1,128}$/

function entryOf(request: Request): RequestEntry {
  let entry = entries.get(request)
  if (!entry) {
    const given = request.headers.get('x-request-id')
    const id = given !== null && SANE_REQUEST_ID.test(given) ? given : crypto.randomUUID()
    entry = { id, startedAt: performance.now(), caller: 'none' }
    entries.set(request, entry)
  }
  return entry
}

/** The request's id: the same for its log line, its X-Request-Id header and an error's log line. */
export function requestId(request: Request): string {
  return entryOf(request).id
}

export function callerKind(principal: Principal): Exclude<CallerKind, 'none'> {
  if (principal.kind === 'guest') return 'guest'
  if (principal.agent) return 'agent'
  if (principal.session) return 'session'
  return 'key'
}

/** Called where a caller is recognised (plugins/auth.ts, the session reader): the line names its kind. */
export function noteCaller(request: Request, kind: Exclude<CallerKind, 'none'>): void {
  entryOf(request).caller = kind
}

/**
 * Paths logged at debug level, whatever their status: probes and scrapes come every few seconds (a 503
 * of /ready is its answer, not an incident), and /internal is the redirector's lookup on a cache miss,
 * so at info they would be a line per redirect.
 */
const QUIET_PATHS = /^\/(health|ready|metrics)$|^\/internal\//
/** A path is cut here: long enough for every route, short enough that a scan cannot fill the log. */
const MAX_PATH_CHARS = 256

function statusOf(responseValue: unknown, status: number | string | undefined): number {
  if (responseValue instanceof Response) return responseValue.status
  if (typeof status === 'number') return status
  return (status !== undefined && (StatusMap as Record<string, number>)[status]) || 200
}

export function requestLog(logger: Logger = processLog) {
  return new Elysia({ name: 'plugins.request-log' })
    .onRequest(({ request, set }) => {
      set.headers['x-request-id'] = entryOf(request).id
    })
    .onAfterResponse({ as: 'global' }, ({ request, path, route, set, responseValue }) => {
      const entry = entries.get(request)
      if (!entry) return
      entries.delete(request)
      const status = statusOf(responseValue, set.status)
      const level = QUIET_PATHS.test(path) ? 'debug' : status >= 500 ? 'error' : 'info'
      if (!logger.isLevelEnabled(level)) return
      const via = onBehalfOf(request)?.via
      logger[level](
        {
          request_id: entry.id,
          method: request.method.slice(0, 16),
          path: path.slice(0, MAX_PATH_CHARS),
          ...(route && { route }),
          status,
          duration_ms: Math.round((performance.now() - entry.startedAt) * 10) / 10,
          principal: entry.caller,
          // A call the app made to itself for this caller (an MCP tool's REST call, an approved call).
          ...(via && { in_process: via }),
        },
        'request',
      )
    })
}
