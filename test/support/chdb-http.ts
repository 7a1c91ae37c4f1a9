// FOR TESTS AND THE BENCHMARK ONLY. Production talks to a real ClickHouse server (docker-compose.yml);
// nothing under src/ or redirect/ imports this file.
//
// There is no ClickHouse server on the development machines (docs/decisions/), but tests and the bench run the
// redirector and the API as separate processes that reach ClickHouse over HTTP with @clickhouse/client.
// This serves chDB (the ClickHouse engine, in-process) behind a loopback HTTP endpoint speaking the part
// of ClickHouse's HTTP interface that client sends:
//   GET /ping, GET /?query=…                      liveness ("Ok.") and the client's `select` ping
//   POST / with SQL in the body                  query / command / exec
//   POST /?query=INSERT … FORMAT X, rows in body  insert
//   URL params: query_id, database, default_format, param_<name> (query parameters, also as multipart
//   parts), and every other param is a setting (insert_deduplication_token, log_comment, …).
//   gzip request bodies; gzip responses when enable_http_compression=1 and the client accepts gzip.
//   Errors: HTTP 500, "Code: N. DB::Exception: … (TYPE)" text and X-ClickHouse-Exception-Code, which the
//   client turns into a ClickHouseError.
// Each request runs on its own chDB session (connection) over the shared data directory, so settings
// and parameters never leak from one request to the next, as with the server's per-request context.
// Parameters are bound with `SET param_x = '…'`: the engine then parses the client's text exactly as
// the server parses `param_x` from a URL. Unlike the server, a body holding several statements is run.
//
// chDB binds ONE data directory per process, so one process serves one path. Run it as a process:
//   bun test/support/chdb-http.ts --port 18123 --path /tmp/chdb-x
// It prints its URL on stdout once listening and exits cleanly on SIGTERM or SIGINT.
import { Session, drainPending } from 'chdb'

export interface ChdbHttp {
  url: string
  port: number
  stop(): Promise<void>
}

/** URL params that are not settings. */
const NOT_SETTINGS = new Set([
  'query',
  'query_id',
  'database',
  'default_format',
  'session_id',
  'session_timeout',
  'session_check',
  'user',
  'password',
  'quota_key',
  'role',
  'compress',
  'decompress',
  'buffer_size',
])
/** Settings only the HTTP layer of the server knows; the embedded engine rejects them as unknown. */
const HTTP_ONLY_SETTINGS = new Set([
  'wait_end_of_query',
  'send_progress_in_http_headers',
  'http_headers_progress_interval_ms',
  'http_send_progress_interval_ms',
  'enable_http_compression',
  'http_zlib_compression_level',
  'http_response_buffer_size',
  'http_native_compression_disable_checksumming_on_decompress',
  'http_response_compression_method',
])
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/
/** Requests running on the engine at once; more wait. The client pools 10 sockets by default. */
const MAX_CONCURRENT = 8

class HttpError extends Error {
  constructor(
    readonly code: number,
    readonly type: string,
    message: string,
  ) {
    super(`Code: ${code}. DB::Exception: ${message}. (${type})`)
  }
}

interface ParsedRequest {
  sql: string
  /** `name = 'literal'` assignments for one SET statement: settings and param_ values. */
  assignments: string[]
  database: string | undefined
  format: string
  queryId: string
  gzipResponse: boolean
  /** An INSERT whose body was empty: the server accepts it as zero rows, chDB would refuse it. */
  emptyInsert: boolean
}

export async function startChdbHttp(options: { port?: number; path: string; hostname?: string }): Promise<ChdbHttp> {
  const { path } = options
  // Held for the life of the server so the engine stays bound to `path`; it also fails fast on a bad path.
  const root = new Session(path)
  await root.queryAsync('SELECT 1')
  const version = (await root.queryAsync('SELECT version()', { format: 'TabSeparated' })).text().trim()
  const gate = semaphore(MAX_CONCURRENT)

  const server = Bun.serve({
    hostname: options.hostname ?? '127.0.0.1',
    port: options.port ?? 0,
    // Inserts of a full click batch or a slow merge can take a while; the client has its own timeout.
    idleTimeout: 60,
    async fetch(req) {
      const url = new URL(req.url)
      if (url.pathname === '/ping' || (url.pathname === '/' && req.method === 'GET' && !url.searchParams.has('query'))) {
        return new Response('Ok.\n')
      }
      const queryId = url.searchParams.get('query_id') || crypto.randomUUID()
      try {
        if (url.pathname !== '/') throw new HttpError(0, 'UNKNOWN_HANDLER', `no handler for ${url.pathname}`)
        const parsed = await parseRequest(req, url, queryId)
        return await gate(() => run(path, parsed, version, req.signal))
      } catch (err) {
        return errorResponse(err, queryId, version)
      }
    },
  })

  let stopped: Promise<void> | undefined
  return {
    url: `http://${server.hostname}:${server.port}`,
    port: server.port!,
    stop() {
      stopped ??= (async () => {
        // Finish what is in flight (bounded), then release the engine.
        await Promise.race([server.stop(false), Bun.sleep(5_000).then(() => server.stop(true))])
        root.close()
        await drainPending()
      })()
      return stopped
    },
  }
}

async function parseRequest(req: Request, url: URL, queryId: string): Promise<ParsedRequest> {
  const params = new Map<string, string>(url.searchParams)
  let body = ''
  if (req.method === 'POST') {
    const type = req.headers.get('content-type') ?? ''
    if (type.startsWith('multipart/form-data')) {
      // use_multipart_params: the query and its param_ values travel as form parts.
      for (const [name, value] of await req.formData()) params.set(name, String(value))
    } else {
      body = await readBody(req)
    }
  } else if (req.method !== 'GET') {
    throw new HttpError(0, 'HTTP_METHOD_NOT_ALLOWED', `method ${req.method} is not allowed`)
  }

  const query = params.get('query')
  // `INSERT … FORMAT X` with its rows in the body; an empty body is zero rows, not an error.
  const emptyInsert = query !== undefined && /^\s*INSERT\b[\s\S]*\bFORMAT\s+\w+\s*$/i.test(query) && body.trim() === ''
  const sql = query !== undefined ? (body ? `${query}\n${body}` : query) : body
  if (sql.trim() === '') throw new HttpError(62, 'SYNTAX_ERROR', 'Empty query')

  const assignments: string[] = []
  for (const [name, value] of params) {
    if (NOT_SETTINGS.has(name) || HTTP_ONLY_SETTINGS.has(name)) continue
    if (!IDENTIFIER.test(name)) throw new HttpError(115, 'UNKNOWN_SETTING', `Unknown setting '${name}'`)
    // param_x = '…' binds query parameter x; the engine parses the text as the server parses the URL.
    assignments.push(`${name} = ${sqlString(value)}`)
  }
  const database = params.get('database')
  if (database !== undefined && !IDENTIFIER.test(database)) {
    throw new HttpError(81, 'UNKNOWN_DATABASE', `Database ${database} does not exist`)
  }
  const gzipResponse = params.get('enable_http_compression') === '1' && /\bgzip\b/.test(req.headers.get('accept-encoding') ?? '')
  return { sql, assignments, database, format: params.get('default_format') || 'TabSeparated', queryId, gzipResponse, emptyInsert }
}

async function readBody(req: Request): Promise<string> {
  const encoding = (req.headers.get('content-encoding') ?? '').toLowerCase()
  const bytes = new Uint8Array(await req.arrayBuffer())
  if (encoding === '' || encoding === 'identity') return new TextDecoder().decode(bytes)
  if (encoding === 'gzip') return new TextDecoder().decode(Bun.gunzipSync(bytes))
  throw new HttpError(432, 'UNKNOWN_COMPRESSION_METHOD', `Unknown Content-Encoding ${encoding} (this test shim speaks gzip only)`)
}

async function run(path: string, request: ParsedRequest, version: string, signal: AbortSignal): Promise<Response> {
  const started = performance.now()
  let text = ''
  let rows = 0
  let bytes = 0
  if (!request.emptyInsert) {
    // A fresh connection per request: its SETs die with it (sessions on one path coexist by design).
    const session = new Session(path)
    try {
      if (request.database) await session.queryAsync(`USE ${request.database}`)
      if (request.assignments.length > 0) await session.queryAsync(`SET ${request.assignments.join(', ')}`)
      const result = await session.queryAsync(request.sql, { format: request.format, signal })
      text = result.text()
      rows = result.rowsRead
      bytes = result.bytesRead
    } finally {
      session.close()
    }
  }
  const summary = {
    read_rows: String(rows),
    read_bytes: String(bytes),
    written_rows: '0',
    written_bytes: '0',
    total_rows_to_read: String(rows),
    result_rows: String(rows),
    result_bytes: String(bytes),
    elapsed_ns: String(Math.round((performance.now() - started) * 1e6)),
  }
  const headers: Record<string, string> = {
    'Content-Type': /^JSON/i.test(request.format) ? 'application/json; charset=UTF-8' : 'text/plain; charset=UTF-8',
    'X-ClickHouse-Query-Id': request.queryId,
    'X-ClickHouse-Format': request.format,
    'X-ClickHouse-Timezone': 'UTC',
    'X-ClickHouse-Server-Display-Name': `chdb-http-shim (chDB ${version})`,
    'X-ClickHouse-Summary': JSON.stringify(summary),
  }
  if (!request.gzipResponse) return new Response(text, { headers })
  return new Response(Bun.gzipSync(new TextEncoder().encode(text)), { headers: { ...headers, 'Content-Encoding': 'gzip' } })
}

function errorResponse(err: unknown, queryId: string, version: string): Response {
  const { code, text } = describeError(err, version)
  return new Response(`${text}\n`, {
    status: 500,
    headers: {
      'Content-Type': 'text/plain; charset=UTF-8',
      'X-ClickHouse-Exception-Code': String(code),
      'X-ClickHouse-Query-Id': queryId,
    },
  })
}

/** ClickHouse's error text, which @clickhouse/client parses into ClickHouseError { code, type }. */
function describeError(err: unknown, version: string): { code: number; text: string } {
  const message = err instanceof Error ? err.message : String(err)
  const fromEngine = /^Code: (\d+)\./.exec(message)
  if (fromEngine) return { code: Number(fromEngine[1]), text: /\(version /.test(message) ? message : `${message} (version ${version})` }
  if (err instanceof Error && err.name === 'AbortError') {
    return { code: 394, text: `Code: 394. DB::Exception: Query was cancelled. (QUERY_WAS_CANCELLED) (version ${version})` }
  }
  // 1002 is the server's UNKNOWN_EXCEPTION.
  return { code: 1002, text: `Code: 1002. DB::Exception: ${message}. (UNKNOWN_EXCEPTION) (version ${version})` }
}

/** A ClickHouse string literal: backslash and quote escaped, so the engine sees `value` unchanged. */
function sqlString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

function semaphore(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0
  const waiting: Array<() => void> = []
  return async (task) => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve))
    running++
    try {
      return await task()
    } finally {
      running--
      waiting.shift()?.()
    }
  }
}

function argValue(args: string[], name: string): string | undefined {
  const at = args.indexOf(name)
  return at === -1 ? undefined : args[at + 1]
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const path = argValue(args, '--path')
  const port = Number(argValue(args, '--port') ?? 0)
  if (!path || !Number.isInteger(port) || port < 0) {
    console.error('usage: bun test/support/chdb-http.ts --path <data dir> [--port <port, 0 = any free>] [--host 127.0.0.1]')
    process.exit(2)
  }
  const shim = await startChdbHttp({ path, port, hostname: argValue(args, '--host') })
  let stopping = false
  const shutdown = async () => {
    if (stopping) return
    stopping = true
    await shim.stop()
    process.exit(0)
  }
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
  // The one line a parent process waits for.
  console.log(shim.url)
}
