// The fair baseline for the redirect benchmark: a bare Bun.serve that answers every request with the
// same response the redirector gives a cached link (302, Location, `Cache-Control: private, max-age=0`)
// and does nothing else — no lookup, no click capture. The redirector's requests/s is reported as a
// ratio of this one's, measured in the same run on the same machine.
//
//   bun bench/baseline.ts [--port 0] [--location https://example.com/landing]
// Prints its URL on stdout once listening; exits on SIGTERM or SIGINT.

export function startBaseline(options: { port?: number; location?: string } = {}) {
  const location = options.location ?? 'https://example.com/landing'
  return Bun.serve({
    hostname: '127.0.0.1',
    port: options.port ?? 0,
    fetch: () => new Response(null, { status: 302, headers: { Location: location, 'Cache-Control': 'private, max-age=0' } }),
  })
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const value = (name: string) => {
    const at = args.indexOf(name)
    return at === -1 ? undefined : args[at + 1]
  }
  const server = startBaseline({ port: Number(value('--port') ?? 0), location: value('--location') })
  const stop = () => {
    server.stop(true)
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  console.log(`http://127.0.0.1:${server.port}`)
}
