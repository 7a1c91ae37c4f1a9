// Starts the product's real entry points as child processes for end-to-end tests, on free loopback
// ports, and stops them at the end. Output is kept (bounded) for failure messages.
import type { Subprocess } from 'bun'
import { resolve } from 'node:path'
import { keepTail, stopProcess } from '../../bench/procs'
import { METRICS_TEST_TOKEN } from './metrics'

const root = resolve(import.meta.dir, '../..')
const KEEP_OUTPUT = 8192
/**
 * Opening PGlite and chDB and migrating them takes a few seconds on a quiet machine, but over 30 s on
 * this 2-core one while other suites run: a generous bound, since only a hung start should fail here.
 */
const START_TIMEOUT_MS = 90_000

export interface Child {
  url: string
  proc: Subprocess
  output(): string
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | null>
}

/**
 * The ports freePort hands out: TEST_PORTS ("first-last"), else 10000-22767. Below the kernel's
 * ephemeral range (32768 and up), so no socket of another process gets one between our check and the
 * child's bind; CI gives its two passes, which run side by side, halves that never meet. Handed out in
 * turn from a random start, so one run never gives the same port twice.
 */
export const TEST_PORT_RANGE = portRange(process.env.TEST_PORTS)
let nextPort = TEST_PORT_RANGE.first + Math.floor(Math.random() * (TEST_PORT_RANGE.last - TEST_PORT_RANGE.first + 1))

export function portRange(text: string | undefined): { first: number; last: number } {
  if (text === undefined || text === '') return { first: 10_000, last: 22_767 }
  const match = /^(\d{4,5})-(\d{4,5})$/.exec(text)
  const [first, last] = match ? [Number(match[1]), Number(match[2])] : [0, 0]
  if (!match || first < 1024 || last > 65_535 || last - first < 99) throw new Error(`TEST_PORTS must be "first-last" (1024-65535, at least 100 ports), got "${text}"`)
  return { first, last }
}

/** A port of TEST_PORT_RANGE that nothing listens on now (a port in use is passed over). */
export async function freePort(): Promise<number> {
  const { first, last } = TEST_PORT_RANGE
  for (let tried = 0; tried <= last - first; tried++) {
    const port = nextPort
    nextPort = port === last ? first : port + 1
    try {
      Bun.serve({ port, fetch: () => new Response() }).stop(true)
      return port
    } catch {
      // in use by something else: the next one
    }
  }
  throw new Error(`freePort: no free port in ${first}-${last}`)
}

export const TEST_SECRETS = {
  INTERNAL_SECRET: 'e2e-internal-secret-0123456789abcdefghij',
  IP_HASH_SECRET: 'e2e-ip-hash-secret-0123456789abcdefghijk',
  // /metrics of the spawned processes (test/support/metrics.ts reads them with it).
  METRICS_TOKEN: METRICS_TEST_TOKEN,
}

/** Spawns `bun <entry>` with the given environment (and nothing inherited but PATH/HOME). */
export async function startEntry(entry: string, env: Record<string, string>, port: number, healthPath = '/health'): Promise<Child> {
  // The header limit of package.json's start scripts (a long pixel URL must still reach the app).
  const proc = Bun.spawn([process.execPath, '--max-http-header-size=65536', resolve(root, entry)], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const output = keepTail([proc.stdout, proc.stderr], KEEP_OUTPUT)
  const url = `http://127.0.0.1:${port}`
  const child: Child = {
    url,
    proc,
    output,
    stop: (signal = 'SIGTERM', graceMs = 15_000) => stopProcess(proc, graceMs, signal),
  }
  const deadline = Date.now() + START_TIMEOUT_MS
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${entry} exited with ${proc.exitCode}:\n${output()}`)
    try {
      if ((await fetch(url + healthPath, { signal: AbortSignal.timeout(1000) })).ok) return child
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await child.stop('SIGKILL')
      throw new Error(`${entry} not healthy within ${START_TIMEOUT_MS / 1000} s:\n${output()}`)
    }
    await Bun.sleep(100)
  }
}

/** A Redis server of the test's own (so the test may stop it), when the redis-server binary exists. */
export async function startOwnRedis(dir: string): Promise<{ url: string; stop(): Promise<void> } | null> {
  const binary = Bun.which('redis-server')
  if (!binary) return null
  const port = await freePort()
  const proc = Bun.spawn([binary, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdout: 'ignore',
    stderr: 'ignore',
  })
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    try {
      const socket = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } })
      socket.end()
      break
    } catch {
      await Bun.sleep(50)
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      proc.kill('SIGKILL')
      await proc.exited
    },
  }
}
