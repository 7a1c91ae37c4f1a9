// Process plumbing for the bench runners (bench/run.ts, bench/outage.ts): child processes with their
// output in log files, health polling, free ports, one cleanup stack that runs on success, error, SIGINT
// and the watchdog, and the frame every runner shares (work dir, watchdog, exit). The graceful stop and
// the bounded output tail serve the test support's child processes too.
import type { Subprocess } from 'bun'
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { METRICS_TEST_TOKEN } from '../test/support/metrics'

const ROOT = join(import.meta.dir, '..')

export function log(line: string): void {
  console.error(`bench: ${line}`)
}

/** Things to undo, undone last-in first-out; each step bounded, failures reported and passed over. */
export class Cleanup {
  private readonly steps: Array<{ name: string; run: () => Promise<unknown> }> = []
  private running: Promise<void> | null = null

  push(name: string, run: () => Promise<unknown>): void {
    this.steps.push({ name, run })
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await Promise.race([step.run(), Bun.sleep(20_000).then(() => Promise.reject(new Error('took over 20 s')))])
        } catch (error) {
          log(`cleanup: ${step.name} failed: ${(error as Error).message}`)
        }
      }
    })()
    return this.running
  }
}

export interface Child {
  name: string
  proc: Subprocess
  logFile: string
  stop(graceMs?: number): Promise<number | null>
}

/** Starts a process with stdout and stderr appended to logFile. */
export function startChild(name: string, cmd: string[], options: { env: Record<string, string | undefined>; logFile: string; cwd?: string }): Child {
  const fd = openSync(options.logFile, 'a')
  const proc = Bun.spawn(cmd, { env: options.env, cwd: options.cwd, stdin: 'ignore', stdout: fd, stderr: fd })
  closeSync(fd) // the child holds its own copy
  return {
    name,
    proc,
    logFile: options.logFile,
    stop: (graceMs = 15_000) => stopProcess(proc, graceMs),
  }
}

/** `signal`, then SIGKILL if proc has not exited within graceMs; resolves with the exit code (at once if it has exited). */
export async function stopProcess(proc: Subprocess, graceMs: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode
  proc.kill(signal)
  const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs)
  await proc.exited
  clearTimeout(timer)
  return proc.exitCode
}

/** Drains the streams in the background; returns what reads the last `keep` characters they wrote (together). */
export function keepTail(streams: ReadableStream<Uint8Array>[], keep: number): () => string {
  let text = ''
  for (const stream of streams) {
    void (async () => {
      for await (const chunk of stream) text = (text + new TextDecoder().decode(chunk)).slice(-keep)
    })()
  }
  return () => text
}

export function tail(file: string, lines = 25): string {
  if (!existsSync(file)) return '(no log)'
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
}

/** Polls url until it answers `expect` (default 200); fails early when the child exits. */
export async function waitFor(child: Child, url: string, timeoutMs: number, expect = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last = 'no answer yet'
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      throw new Error(`${child.name} exited (${child.proc.exitCode ?? child.proc.signalCode}) before ${url} answered; log ${child.logFile}:\n${tail(child.logFile)}`)
    }
    try {
      const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(1_000) })
      await response.arrayBuffer()
      if (response.status === expect) return
      last = `status ${response.status}`
    } catch (error) {
      last = (error as Error).message
    }
    await Bun.sleep(200)
  }
  throw new Error(`${child.name}: ${url} did not answer ${expect} within ${timeoutMs} ms (last: ${last}); log ${child.logFile}:\n${tail(child.logFile)}`)
}

/** Ports the kernel hands out now; another process could take one before we bind it, rarely. */
export function freePorts(count: number): number[] {
  const sockets = Array.from({ length: count }, () => Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } }))
  const ports = sockets.map((s) => s.port)
  for (const s of sockets) s.stop(true)
  return ports
}

/** Runs a short command to completion with a time limit; stderr passes through to ours. */
export async function sh(cmd: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string }> {
  const proc = Bun.spawn(cmd, { stdin: 'ignore', stdout: 'pipe', stderr: 'inherit' })
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs)
  const stdout = await new Response(proc.stdout).text()
  await proc.exited
  clearTimeout(timer)
  return { code: proc.exitCode, stdout }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** What withCpu measures: a process (all its threads) or one thread of it (its main thread: thread = pid). */
export type CpuSource = number | { pid: number; thread: number }

/** CPU seconds (user + system) a live process, or one of its threads, has used so far, from /proc (Linux). */
export function cpuSeconds(source: CpuSource): number {
  const path = typeof source === 'number' ? `/proc/${source}/stat` : `/proc/${source.pid}/task/${source.thread}/stat`
  try {
    const stat = readFileSync(path, 'utf8')
    // Fields after the command name, which is in parentheses and may hold spaces; utime, stime are 14, 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return Number.NaN
  }
}
/** USER_HZ: 100 on every Linux architecture Bun runs on. */
const CLOCK_TICKS = 100

/**
 * Cores each process kept busy while `work` ran (1.0 = one core all the time, rounded to 0.01), and the
 * CPU seconds each used meanwhile (unrounded: CPU per request is computed from these).
 */
/**
 * CPU of each process during `work`: `cores` over work's wall time, `cpuSeconds` from its start to the end
 * of `settle` (a pause after it), so what a process defers past the load (a backlog it works off once the
 * load stops) is charged to the requests that caused it.
 */
export async function withCpu<T>(
  pids: Record<string, CpuSource>,
  work: () => Promise<T>,
  settle?: () => Promise<void>,
): Promise<{ result: T; cores: Record<string, number>; cpuSeconds: Record<string, number> }> {
  const snapshot = () => Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]))
  const before = snapshot()
  const started = performance.now()
  const result = await work()
  const wall = (performance.now() - started) / 1000
  const during = snapshot()
  const cores = Object.fromEntries(Object.entries(during).map(([name, seconds]) => [name, Math.round(((seconds - before[name]!) / wall) * 100) / 100]))
  if (settle) await settle()
  const after = settle ? snapshot() : during
  const used = Object.fromEntries(Object.entries(after).map(([name, seconds]) => [name, seconds - before[name]!]))
  return { result, cores, cpuSeconds: used }
}

/** `--name value` options: value() with a fallback, int() a positive whole number. */
export function optionReader(args: string[]) {
  const value = (name: string, fallback: string) => {
    const at = args.indexOf(name)
    return at === -1 ? fallback : (args[at + 1] ?? fallback)
  }
  const int = (name: string, fallback: number) => {
    const n = Number(value(name, String(fallback)))
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive whole number`)
    return n
  }
  return { value, int }
}

/**
 * Variables the bench sets itself for each server (ports, data, secrets, engines): --server-env may not.
 * The same names as startApiAndRedirector and run.ts's startEmbedded set: one added there belongs here too
 * (their own `env` parameter must still override, e.g. bench/workers.ts's REDIRECT_WORKERS).
 */
const BENCH_OWN_ENV = new Set([
  'PORT',
  'REDIRECT_PORT',
  'SHORT_DOMAIN',
  'DATA_DIR',
  'DATABASE_URL',
  'REDIS_URL',
  'CLICKHOUSE_URL',
  'INTERNAL_SECRET',
  'IP_HASH_SECRET',
  'METRICS_TOKEN',
  'API_INTERNAL_URL',
  'REDIRECT_WORKERS',
])

/**
 * Every `--server-env NAME=VALUE` (any number of them): variables added to the environment of each
 * process the bench starts from this tree (the servers under test, the API, the reference), so a
 * runtime setting is measured on all of them alike. Throws on anything but NAME=VALUE, and on a name
 * the bench sets itself.
 */
export function serverEnvOption(args: string[]): Record<string, string> {
  const env: Record<string, string> = {}
  args.forEach((arg, at) => {
    if (arg !== '--server-env') return
    const assignment = args[at + 1] ?? ''
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(assignment)
    if (!match) throw new Error(`--server-env needs NAME=VALUE, got ${JSON.stringify(assignment)}`)
    const [, name, value] = match as unknown as [string, string, string]
    if (BENCH_OWN_ENV.has(name)) throw new Error(`--server-env cannot set ${name}: the bench sets it for each server`)
    env[name] = value
  })
  return env
}

/**
 * The frame of a bench runner, set up at once: a fresh work dir (prefix in the system's temporary
 * directory), one cleanup stack, and a watchdog (exit 3), SIGINT (130) and SIGTERM (143) that stop
 * everything the run started and exit, keeping the logs. run(main) does the rest.
 */
export function benchRun(prefix: string, timeoutMs: number) {
  const workDir = mkdtempSync(join(tmpdir(), prefix))
  const cleanup = new Cleanup()
  let failed = false
  let aborting = false
  const abort = async (reason: string, code: number): Promise<void> => {
    if (aborting) return
    aborting = true
    log(`${reason}: stopping everything this run started`)
    await cleanup.run()
    log(`logs kept in ${workDir}`)
    process.exit(code)
  }
  const watchdog = setTimeout(() => void abort(`watchdog: over ${Math.round(timeoutMs / 1000)} s`, 3), timeoutMs)
  process.on('SIGINT', () => void abort('SIGINT', 130))
  process.on('SIGTERM', () => void abort('SIGTERM', 143))
  return {
    workDir,
    cleanup,
    /** Marks the run failed without stopping it: the logs are kept and the exit code is 1. */
    fail() {
      failed = true
    },
    /** Runs main, then the cleanup; exits 1 (logs kept) if main threw or fail() was called, else 0 (work dir removed unless BENCH_KEEP_LOGS is set). */
    async run(main: () => Promise<void>): Promise<never> {
      try {
        await main()
      } catch (error) {
        // After SIGINT or the watchdog, the failure is only the killed wrk: abort() reports and exits.
        if (aborting) await new Promise(() => {})
        log(`failed: ${(error as Error).stack ?? error}`)
        failed = true
      }
      clearTimeout(watchdog)
      await cleanup.run()
      if (failed) {
        log(`logs kept in ${workDir}`)
        process.exit(1)
      }
      if (process.env.BENCH_KEEP_LOGS) log(`logs kept in ${workDir} (BENCH_KEEP_LOGS)`)
      else rmSync(workDir, { recursive: true, force: true })
      process.exit(0)
    },
  }
}

function envLine(text: string, name: string): string {
  const match = new RegExp(`^export ${name}=(\\S+)$`, 'm').exec(text)
  if (!match) throw new Error(`scripts/services.sh test-env printed no ${name}`)
  return match[1]!.replace(/^["']|["']$/g, '')
}

/**
 * Starts scripts/services.sh's Postgres and Redis (or only `service`), and puts stopping them on cleanup
 * only if this run started them: someone else may be using services that were already up.
 */
export async function startServices(cleanup: Cleanup, service?: 'postgres' | 'redis'): Promise<{ databaseUrl: string; redisUrl: string }> {
  // Services someone else runs (e.g. shared by several checkouts, whose .local/ is not this one's): used
  // as they are, never started or stopped by the bench.
  const { DATABASE_URL, REDIS_URL } = process.env
  if (DATABASE_URL?.startsWith('postgres') && REDIS_URL?.startsWith('redis')) return { databaseUrl: DATABASE_URL, redisUrl: REDIS_URL }
  const services = join(ROOT, 'scripts/services.sh')
  const only = service ? [service] : []
  const before = await sh(['bash', services, 'status', ...only], 30_000)
  const started = await sh(['bash', services, 'start', ...only], 240_000)
  if (started.code !== 0) throw new Error(`scripts/services.sh ${['start', ...only].join(' ')} exited ${started.code}`)
  if (before.code !== 0) cleanup.push(service ?? 'postgres + redis', () => sh(['bash', services, 'stop', ...only], 60_000))
  // The tests' databases: the bench's thousands of seeded links have no place in the development one.
  const env = (await sh(['bash', services, 'test-env'], 30_000)).stdout
  return { databaseUrl: envLine(env, 'DATABASE_URL'), redisUrl: envLine(env, 'REDIS_URL') }
}

/**
 * The API (src/api.ts) and the redirector (redirect/main.ts) as their own processes, as in production,
 * logs in workDir (api.log, redirect.log), each on cleanup once started and healthy before the next
 * starts; `started` runs on each right after it is spawned (e.g. to pin it to a CPU). Returns the
 * environment both were given, with fresh secrets and DATA_DIR (the click spool) fresh in workDir.
 */
export async function startApiAndRedirector(options: {
  cleanup: Cleanup
  workDir: string
  databaseUrl: string
  redisUrl: string
  clickhouseUrl: string
  apiPort: number
  redirectPort: number
  env?: Record<string, string>
  /** Bun flags for the redirector's process only (e.g. --cpu-prof for bench/run.ts --profile). */
  redirectorFlags?: string[]
  started?: (child: Child) => Promise<void>
}) {
  const { cleanup, workDir, apiPort, redirectPort } = options
  const shortDomain = `127.0.0.1:${redirectPort}`
  const env = {
    ...process.env,
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl,
    CLICKHOUSE_URL: options.clickhouseUrl,
    INTERNAL_SECRET: `bench-internal-${crypto.randomUUID()}`,
    IP_HASH_SECRET: `bench-iphash-${crypto.randomUUID()}`,
    // The figures the benches read (clicks recorded, the spool) are at /metrics, behind this token.
    METRICS_TOKEN: METRICS_TEST_TOKEN,
    PORT: String(apiPort),
    REDIRECT_PORT: String(redirectPort),
    API_INTERNAL_URL: `http://127.0.0.1:${apiPort}`,
    SHORT_DOMAIN: shortDomain,
    DATA_DIR: join(workDir, 'data'), // the click spool: fresh, never a previous run's
    // One redirector process, pinned and measured as one against the one-process servers beside it.
    REDIRECT_WORKERS: '1',
    ...options.env,
  }
  const api = startChild('api', [process.execPath, join(ROOT, 'src/api.ts')], { env, logFile: join(workDir, 'api.log'), cwd: ROOT })
  cleanup.push('api', () => api.stop())
  await options.started?.(api)
  await waitFor(api, `http://127.0.0.1:${apiPort}/health`, 60_000)
  const redirector = startChild('redirect', [process.execPath, ...(options.redirectorFlags ?? []), join(ROOT, 'redirect/main.ts')], { env, logFile: join(workDir, 'redirect.log'), cwd: ROOT })
  cleanup.push('redirect', () => redirector.stop())
  await options.started?.(redirector)
  const redirectUrl = `http://127.0.0.1:${redirectPort}`
  await waitFor(redirector, `${redirectUrl}/health`, 60_000)
  return { api, redirector, env, shortDomain, redirectUrl }
}
