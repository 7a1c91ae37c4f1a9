// The capture floor for the redirect benchmark: the least any click-recording redirect does. A Bun.serve
// that finds the alias in a Map, reads the client address (server.requestIP), User-Agent and Referer,
// appends them with a timestamp to an array emptied once a second, and answers the 302 the redirector
// gives a cached link (Location, `Cache-Control: private, max-age=0`, see redirect/handler.ts). The bare
// 302 (bench/baseline.ts) is the ceiling; this is what the redirector's target is set against, since no
// redirect that records its clicks can skip these reads.
//
//   bun bench/capture-floor.ts --links links.tsv [--port 0]
// links.tsv: one `alias<TAB>url` a line. Prints its URL on stdout once listening; exits on SIGTERM or SIGINT.
import { readFileSync } from 'node:fs'

interface Capture {
  at: number
  alias: string
  ip: string
  userAgent: string
  referrer: string
}

/** The same response headers as the redirector's 302 for a cached link (redirect/handler.ts, redirectTo). */
const CACHE_CONTROL = 'private, max-age=0'

export function readLinksFile(path: string): Map<string, string> {
  const links = new Map<string, string>()
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const tab = line.indexOf('\t')
    if (tab > 0) links.set(line.slice(0, tab), line.slice(tab + 1))
  }
  return links
}

export function startCaptureFloor(options: { links: Map<string, string>; port?: number; flushMs?: number }) {
  const { links } = options
  let clicks: Capture[] = []
  let captured = 0
  // Emptied, not shipped anywhere: the floor measures capturing a click, not storing it.
  const flush = setInterval(() => {
    captured += clicks.length
    clicks = []
  }, options.flushMs ?? 1_000)
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: options.port ?? 0,
    fetch(request, srv) {
      // The path after the host, up to a query: no URL object, as the redirector's parseAlias.
      const url = request.url
      const start = url.indexOf('/', url.indexOf('//') + 2) + 1
      const query = url.indexOf('?', start)
      const alias = query < 0 ? url.slice(start) : url.slice(start, query)
      const location = links.get(alias)
      if (location === undefined) return new Response('Not found', { status: 404 })
      const headers = request.headers
      clicks.push({
        at: Date.now(),
        alias,
        ip: srv.requestIP(request)?.address ?? '',
        userAgent: headers.get('user-agent') ?? '',
        referrer: headers.get('referer') ?? '',
      })
      return new Response(null, { status: 302, headers: { Location: location, 'Cache-Control': CACHE_CONTROL } })
    },
  })
  return {
    server,
    /** Clicks captured so far (emptied batches plus the one filling). */
    captured: () => captured + clicks.length,
    stop() {
      clearInterval(flush)
      server.stop(true)
    },
  }
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const value = (name: string) => {
    const at = args.indexOf(name)
    return at === -1 ? undefined : args[at + 1]
  }
  const file = value('--links')
  if (!file) {
    console.error('usage: bun bench/capture-floor.ts --links links.tsv [--port 0]')
    process.exit(2)
  }
  const floor = startCaptureFloor({ links: readLinksFile(file), port: Number(value('--port') ?? 0) })
  const stop = () => {
    floor.stop()
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  console.log(`http://127.0.0.1:${floor.server.port}`)
}
